"""Help → Keyboard shortcuts (read from the window's actions) and Help → About."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QMainWindow

from app import __version__
from app.paths import AppPaths
from app.ui.window.help_dialogs import (
    COMPOSER_GROUP,
    AboutDialog,
    ShortcutsDialog,
    collect_shortcuts,
)


def sample_window(qtbot: Any) -> QMainWindow:
    window = QMainWindow()
    qtbot.addWidget(window)
    file_menu = window.menuBar().addMenu("&File")
    new = QAction("&New session", window)
    new.setShortcut(QKeySequence("Ctrl+N"))
    file_menu.addAction(new)
    window.addAction(new)
    quiet = QAction("No shortcut", window)
    file_menu.addAction(quiet)
    view = window.menuBar().addMenu("&View")
    panel = QAction("Model view…", window)
    panel.setShortcuts([QKeySequence("Ctrl+M"), QKeySequence("F9")])
    view.addAction(panel)
    hidden = QAction("Focus composer", window)  # bound on the window, in no menu
    hidden.setShortcut(QKeySequence("Ctrl+L"))
    window.addAction(hidden)
    shortcut = QShortcut(QKeySequence("Ctrl+Shift+D"), window)
    shortcut.setWhatsThis("Toggle dark mode")
    return window


def test_collects_actions_and_shortcuts_grouped_by_menu(qtbot: Any) -> None:
    entries = collect_shortcuts(sample_window(qtbot), extra=())
    native = QKeySequence.SequenceFormat.NativeText
    rows = [(e.group, e.description, e.keys) for e in entries]
    assert rows == [
        ("File", "New session", QKeySequence("Ctrl+N").toString(native)),
        ("View", "Model view", QKeySequence("Ctrl+M").toString(native) + " or F9"),
        ("Other", "Focus composer", QKeySequence("Ctrl+L").toString(native)),
        ("Other", "Toggle dark mode", QKeySequence("Ctrl+Shift+D").toString(native)),
    ]


def test_a_new_action_shows_up_without_touching_the_dialog(qtbot: Any) -> None:
    window = sample_window(qtbot)
    before = len(collect_shortcuts(window, extra=()))
    added = QAction("Brand new thing", window)
    added.setShortcut(QKeySequence("Ctrl+J"))
    window.addAction(added)
    entries = collect_shortcuts(window, extra=())
    assert len(entries) == before + 1
    assert any(e.description == "Brand new thing" for e in entries)


def test_dialog_shows_every_entry_and_the_composer_keys(qtbot: Any) -> None:
    window = sample_window(qtbot)
    dialog = ShortcutsDialog(window)
    qtbot.addWidget(dialog)
    rows = dialog.rows()
    assert [(g, a, k) for g, a, k in rows if g != COMPOSER_GROUP] == [
        (e.group, e.description, e.keys) for e in collect_shortcuts(window, extra=())
    ]
    assert (COMPOSER_GROUP, "Send the message", "Enter") in rows
    assert (COMPOSER_GROUP, "New line", "Shift+Enter") in rows


def test_about_shows_version_and_every_folder(qtbot: Any, tmp_path: Path) -> None:
    paths = AppPaths.resolve(tmp_path / "profile")
    dialog = AboutDialog(paths, paths.log_file)
    qtbot.addWidget(dialog)
    text = dialog.details_text()
    assert f"Version: Coco {__version__}" in text
    assert f"Data: {paths.data_dir}" in text
    assert f"Settings: {paths.config_dir}" in text
    assert f"Log file: {paths.log_file}" in text
    assert f"Sessions: {paths.sessions_dir}" in text
    assert dialog.value_labels["Log file"].text() == str(paths.log_file)
    dialog.copy_details()
    from PySide6.QtGui import QGuiApplication

    assert QGuiApplication.clipboard().text() == text
