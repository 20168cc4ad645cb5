"""What the window's first paint does not show is not loaded or built before it, and each
piece left for later still works when it is wanted.

The first test launches Coco through its real launcher in a fresh interpreter and looks, just
after the window's first frame, at which Qt types PySide6 has created (each costs its
enums: ``QStyle`` alone ~5 ms) and which of Coco's modules are loaded. The others drive the
pieces that are now built or styled later through the window, as the user reaches them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette

REPO = Path(__file__).resolve().parents[3]

# Runs the launcher; when it has seen the main window's first frame (its children painted too)
# and before it goes on, prints what was loaded.
_FIRST_FRAME = """
import os, sys
os.environ["QT_QPA_PLATFORM"] = "offscreen"
import app.main

def report():
    def types(module):
        return sorted(k for k in sys.modules[module].__dict__ if k.startswith("Q"))
    loaded = {
        "qt_widget_types": types("PySide6.QtWidgets"),
        "qt_core_types": types("PySide6.QtCore"),
        "qt_gui_types": types("PySide6.QtGui"),
        "modules": sorted(sys.modules),
    }
    import json  # after the list is taken
    print(json.dumps(loaded), flush=True)
    os._exit(0)

wait_for_first_paint = app.main._wait_for_first_paint

def waited(window, *args):
    wait_for_first_paint(window, *args)
    report()

app.main._wait_for_first_paint = waited
app.main.main(["--data-dir", sys.argv[1]])
"""


def _first_frame(data_dir: Path) -> dict[str, Any]:
    result = subprocess.run(
        [sys.executable, "-c", _FIRST_FRAME, str(data_dir)], capture_output=True, text=True,
        check=False, cwd=REPO, timeout=120,
    )
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    assert lines, result.stderr[-3000:]
    loaded: dict[str, Any] = json.loads(lines[-1])
    return loaded


def test_the_first_frame_loads_only_what_it_shows(tmp_path: Path) -> None:
    loaded = _first_frame(tmp_path)
    types = set(loaded["qt_widget_types"])
    # No widget Qt made itself was handed to Python: PySide6 would have searched every widget
    # class for its type, creating them all (a separator's widget, a scroll area's viewport).
    assert not types & {"QWizard", "QCalendarWidget", "QMdiArea", "QDial", "QFontDialog"}
    # Drawn only for a status-bar message; the tray only for a notification.
    assert "QStyle" not in types
    assert "QSystemTrayIcon" not in types
    assert "QGraphicsOpacityEffect" not in types  # a row out of the context, dimmed
    # The composer's text-object and cursor types: chips, and editing one (2.5 ms).
    assert not {"QTextCharFormat", "QTextCursor", "QTextOption"} & set(loaded["qt_gui_types"])
    assert "QUrl" not in loaded["qt_core_types"]  # links in rendered messages
    # Qt's namespace: reading any Qt.* member builds its 93 enums (~14 ms). See qt_namespace.
    assert "Qt" not in loaded["qt_core_types"]
    modules = set(loaded["modules"])
    assert "_hashlib" not in modules  # OpenSSL (the single-instance name needs none)
    assert "app.ui.runtime.wheel_guard" not in modules  # the settings panel's
    assert "app.ui.transcript.summary_editor" not in modules  # a compaction marker's Edit
    assert "app.ui.window.find_bar" not in modules  # Ctrl+F
    assert "app.ui.window.notifications" not in modules  # built with the first session
    assert "app.ui.controller.commands" not in modules  # slash commands: once one is typed
    assert "app.ui.composer.pasted_texts" not in modules  # a long paste's chip: with the first one
    # Creating a dataclass compiles its methods (~0.5 ms each); the first frame needs none.
    assert "dataclasses" not in modules
    assert "html" not in modules  # escaping a marker's title
    assert "json" not in modules  # a tool call's arguments, the key file


def test_toolbar_buttons_are_named_after_their_actions(make_window: Any) -> None:
    # Named from the actions that have a text (a separator's widget is never asked for).
    window = make_window()
    bar = window.toolbar
    names = {
        action.text(): bar.widgetForAction(action).accessibleName()
        for action in bar.actions()
        if action.text()
    }
    assert names["Settings…"] == "Settings"
    assert names["Compact"] == "Compact" and names["Model view"] == "Model view"
    assert window.compact_button is bar.widgetForAction(window.compact_action)


def test_the_transcript_draws_in_a_viewport_of_its_own(make_window: Any) -> None:
    window = make_window()
    viewport = window.transcript.viewport()
    assert viewport.objectName() == "qt_scrollarea_viewport"
    assert viewport.parent() is window.transcript
    assert viewport.autoFillBackground()
    assert viewport.backgroundRole() == QPalette.ColorRole.Base
    assert window.transcript.empty_label.parent() is viewport
    assert window.transcript.empty_label.isVisible()  # the empty session's hint shows in it


def test_the_demo_banner_takes_its_colours_when_shown(make_window: Any, qtbot: Any) -> None:
    window = make_window(configure=False)  # first run: the offline demo model
    banner = window.banner
    qtbot.waitUntil(banner.isVisible)
    assert "demoBanner" in banner.styleSheet()
    pixmap = banner.icon_label.pixmap()
    assert pixmap is not None and not pixmap.isNull()


def test_a_status_message_and_the_model_name_are_drawn(make_window: Any) -> None:
    window = make_window()
    status = window.statusBar()
    label = window.model_label
    assert label.text()  # the session's model, set once the session opened
    named = label.grab().toImage()
    label.setText("")
    blank = label.grab().toImage()  # an empty label draws nothing
    assert named != blank
    status.showMessage("Exported to somewhere")
    with_message = status.grab().toImage()
    status.clearMessage()
    assert with_message != status.grab().toImage()



def _tab_stops(window: Any) -> list[str]:
    """The accessible names of the controls Tab reaches, in order (enabled or not)."""
    names: list[str] = []
    widget = window.nextInFocusChain()
    while widget is not window:
        if widget.focusPolicy() & Qt.FocusPolicy.TabFocus and widget.accessibleName():
            names.append(widget.accessibleName())
        widget = widget.nextInFocusChain()
    return names


def test_the_find_bar_opens_under_the_banner_with_its_place_in_the_tab_order(
    make_window: Any, qtbot: Any
) -> None:
    window = make_window()
    window.find_action.trigger()  # Session → Find in conversation… (Ctrl+F)
    bar = window.find_bar
    qtbot.waitUntil(bar.isVisible)
    column = window.transcript.parentWidget().layout()
    assert column.indexOf(window.banner) < column.indexOf(bar) < column.indexOf(window.transcript)
    stops = _tab_stops(window)
    start = stops.index("Open settings")
    assert stops[start:start + 7] == [
        "Open settings", "Find in conversation", "Previous match (Shift+Enter)",
        "Next match (Enter)", "Close find", "Transcript", "Message",
    ]
    assert window.find_bar is bar  # built once


def test_enum_properties_set_before_the_first_paint_equal_the_setters(qapp: Any) -> None:
    # Each pre-paint setting, set both ways: the same value, and no namespace needed for it.
    from PySide6.QtWidgets import QLabel, QListWidget, QToolBar

    from app.ui.runtime.qt_namespace import set_enum_property

    cases = [
        (QLabel, "textFormat", "PlainText", "setTextFormat", Qt.TextFormat.PlainText),
        (QLabel, "alignment", "AlignCenter", "setAlignment", Qt.AlignmentFlag.AlignCenter),
        (QListWidget, "focusPolicy", "NoFocus", "setFocusPolicy", Qt.FocusPolicy.NoFocus),
        (QListWidget, "horizontalScrollBarPolicy", "ScrollBarAlwaysOff",
         "setHorizontalScrollBarPolicy", Qt.ScrollBarPolicy.ScrollBarAlwaysOff),
        (QListWidget, "contextMenuPolicy", "CustomContextMenu", "setContextMenuPolicy",
         Qt.ContextMenuPolicy.CustomContextMenu),
        (QToolBar, "toolButtonStyle", "ToolButtonTextBesideIcon", "setToolButtonStyle",
         Qt.ToolButtonStyle.ToolButtonTextBesideIcon),
    ]
    for widget_type, name, key, setter, value in cases:
        by_name, by_setter = widget_type(), widget_type()
        set_enum_property(by_name, name, key)
        getattr(by_setter, setter)(value)
        assert by_name.property(name) == by_setter.property(name), name
        assert by_name.property(name) != widget_type().property(name), name  # not the default
    label = QLabel()
    with pytest.raises(ValueError):
        set_enum_property(label, "textFormat", "NoSuchFormat")
    with pytest.raises(ValueError):
        set_enum_property(label, "text", "PlainText")  # not an enum property


def test_the_lazy_namespace_is_qts_own() -> None:
    from app.ui.runtime import qt_namespace
    from app.ui.sessions import session_list

    assert qt_namespace.Qt.AlignmentFlag is Qt.AlignmentFlag
    assert qt_namespace.Qt.ItemDataRole.UserRole == Qt.ItemDataRole.UserRole
    assert session_list.ID_ROLE == Qt.ItemDataRole.UserRole
    assert session_list.TITLE_ROLE == Qt.ItemDataRole.UserRole + 1


def test_a_tool_button_shows_the_pointing_hand_once_the_pointer_is_on_it(
    make_window: Any,
) -> None:
    # Built before the first paint, its cursor is set when the pointer first enters it. (The
    # enter event is sent as Qt sends it: QTest's pointer carries state between tests.)
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QEnterEvent
    from PySide6.QtWidgets import QApplication

    window = make_window()
    for button in (window.sessions.new_button, window.composer.send_button):
        assert button.cursor().shape() != Qt.CursorShape.PointingHandCursor  # not yet
        centre = QPointF(button.rect().center())
        at = QPointF(button.mapToGlobal(button.rect().center()))
        for _ in range(2):  # in, and in again: still the hand
            QApplication.sendEvent(button, QEnterEvent(centre, centre, at))
            assert button.cursor().shape() == Qt.CursorShape.PointingHandCursor


def test_the_send_and_stop_buttons_keep_to_the_bottom_of_the_composer(
    make_window: Any, qtbot: Any
) -> None:
    window = make_window()
    composer = window.composer
    rows = composer.layout()

    def row() -> Any:  # the edit's row, as laid out
        return rows.itemAt(rows.count() - 1).geometry()

    for text in ("", "one\ntwo\nthree\nfour\nfive"):
        composer.set_text(text)
        qtbot.waitUntil(lambda: row().height() == composer.edit.height())  # laid out again
        for button in (composer.send_button, composer.stop_button):
            assert button.geometry().bottom() == row().bottom()
            assert button.height() == button.sizeHint().height()
        assert composer.send_button.geometry().right() < composer.stop_button.x()
    assert composer.edit.height() > 2 * composer.send_button.height()  # five lines: it grew
