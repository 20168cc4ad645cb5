"""Help → Keyboard shortcuts and Help → About.

The shortcuts list is read from the window's own ``QAction``/``QShortcut`` objects each time it
opens, so it always shows the keys that actually work. The About dialog shows the version and
the folders this profile uses (data, settings, log, sessions), with a button that copies them
for a bug report.
"""

from __future__ import annotations

import platform
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import PySide6
from PySide6.QtCore import Qt, QUrl, qVersion
from PySide6.QtGui import QAction, QDesktopServices, QGuiApplication, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMainWindow,
    QMenu,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app import __version__
from app.paths import AppPaths

OTHER_GROUP = "Other"
COMPOSER_GROUP = "In the message box"
# Keys the message box handles itself (not actions); a test presses each one in the real
# composer, so this list fails the tests instead of drifting.
COMPOSER_KEYS: tuple[tuple[str, str], ...] = (
    ("Send the message", "Enter"),
    ("New line", "Shift+Enter"),
    ("Choose a slash command", "Up / Down, Tab"),
    ("Close the command list or the hint", "Esc"),
)


@dataclass(frozen=True)
class ShortcutEntry:
    """One row of the shortcuts dialog."""

    group: str
    description: str
    keys: str


def _clean(text: str) -> str:
    # "&File" → "File", "Settings…" → "Settings"; a literal "&&" stays one "&".
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip("…").strip()


def _keys_text(sequences: Iterable[QKeySequence]) -> str:
    texts = [s.toString(QKeySequence.SequenceFormat.NativeText) for s in sequences]
    return " or ".join(t for t in texts if t)


def _menu_groups(window: QWidget) -> dict[int, str]:
    """id(action) → title of the first menu-bar menu holding it."""
    groups: dict[int, str] = {}
    if not isinstance(window, QMainWindow):
        return groups
    for top in window.menuBar().actions():
        menu = top.menu()
        if not isinstance(menu, QMenu):
            continue
        title = _clean(top.text())
        stack = list(menu.actions())
        while stack:
            action = stack.pop(0)
            sub = action.menu()
            if isinstance(sub, QMenu):
                stack.extend(sub.actions())
            groups.setdefault(id(action), title)
    return groups


def collect_shortcuts(
    window: QWidget, extra: Sequence[tuple[str, str]] = COMPOSER_KEYS
) -> list[ShortcutEntry]:
    """Every key bound in ``window`` (its actions and ``QShortcut`` children, grouped by the
    menu that holds them), then ``extra`` (description, keys) under "In the message box"."""
    groups = _menu_groups(window)
    actions: list[QAction] = []
    seen: set[int] = set()
    for action in [*window.actions(), *window.findChildren(QAction)]:
        if id(action) not in seen:
            seen.add(id(action))
            actions.append(action)
    entries: list[ShortcutEntry] = []
    for action in actions:
        keys = _keys_text(action.shortcuts())
        if not keys:
            continue
        description = _clean(action.text()) or _clean(action.toolTip()) or action.objectName()
        entries.append(ShortcutEntry(groups.get(id(action), OTHER_GROUP), description, keys))
    for shortcut in window.findChildren(QShortcut):
        keys = _keys_text(shortcut.keys())
        if not keys or not shortcut.isEnabled():
            continue
        description = shortcut.whatsThis() or shortcut.objectName() or keys
        entries.append(ShortcutEntry(OTHER_GROUP, description, keys))
    order = [g for g in dict.fromkeys(groups.values())] + [OTHER_GROUP]
    entries.sort(key=lambda e: order.index(e.group) if e.group in order else len(order))
    unique = list(dict.fromkeys(entries))
    unique.extend(ShortcutEntry(COMPOSER_GROUP, d, k) for d, k in extra)
    return unique


class ShortcutsDialog(QDialog):
    """Help → Keyboard shortcuts: the keys of ``window``, grouped by menu."""

    def __init__(self, window: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent or window)
        self.setWindowTitle("Keyboard shortcuts — Coco")
        self.setAccessibleName("Keyboard shortcuts")
        self.entries = collect_shortcuts(window)
        layout = QVBoxLayout(self)
        self.tree = QTreeWidget(self)
        self.tree.setColumnCount(2)
        self.tree.setHeaderLabels(["Action", "Keys"])
        self.tree.setRootIsDecorated(False)
        self.tree.setAccessibleName("Shortcuts")
        parents: dict[str, QTreeWidgetItem] = {}
        for entry in self.entries:
            group = parents.get(entry.group)
            if group is None:
                group = QTreeWidgetItem(self.tree, [entry.group, ""])
                font = group.font(0)
                font.setBold(True)
                group.setFont(0, font)
                group.setFirstColumnSpanned(True)
                parents[entry.group] = group
            QTreeWidgetItem(group, [entry.description, entry.keys])
        self.tree.expandAll()
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        layout.addWidget(self.tree)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(460, 520)

    def rows(self) -> list[tuple[str, str, str]]:
        """(group, action, keys) as shown."""
        out = []
        for i in range(self.tree.topLevelItemCount()):
            group = self.tree.topLevelItem(i)
            if group is None:
                continue
            for j in range(group.childCount()):
                child = group.child(j)
                if child is not None:
                    out.append((group.text(0), child.text(0), child.text(1)))
        return out


def about_details(paths: AppPaths, log_file: Path | None) -> list[tuple[str, str]]:
    """(label, value) lines of the About dialog, also what "Copy details" copies."""
    return [
        ("Version", f"Coco {__version__}"),
        ("Data", str(paths.data_dir)),
        ("Settings", str(paths.config_dir)),
        ("Log file", str(log_file) if log_file is not None else "not written (see terminal)"),
        ("Sessions", str(paths.sessions_dir)),
        ("Profile", "isolated (--data-dir)" if paths.isolated else "default"),
        ("Python", f"{platform.python_version()} ({sys.platform})"),
        ("Qt", f"{qVersion()} (PySide6 {PySide6.__version__})"),
    ]


class AboutDialog(QDialog):
    """Help → About: version, the profile's folders, the Qt and Python versions."""

    def __init__(self, paths: AppPaths, log_file: Path | None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("About Coco")
        self.setAccessibleName("About Coco")
        self.details = about_details(paths, log_file)
        self._paths = paths
        self._log_file = log_file
        layout = QVBoxLayout(self)
        head = QHBoxLayout()
        icon_label = QLabel(self)
        app_icon = self.windowIcon()
        if not app_icon.isNull():
            icon_label.setPixmap(app_icon.pixmap(64, 64))
        head.addWidget(icon_label)
        title = QLabel(
            f"<h2>Coco {__version__}</h2>"
            "<p>A desktop chat client for LLMs, built around conversation compaction.</p>",
            self,
        )
        title.setWordWrap(True)
        head.addWidget(title, 1)
        layout.addLayout(head)
        form = QFormLayout()
        self.value_labels: dict[str, QLabel] = {}
        for label, value in self.details[1:]:
            field = QLabel(value, self)
            field.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            field.setAccessibleName(label)
            form.addRow(f"{label}:", field)
            self.value_labels[label] = field
        layout.addLayout(form)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.copy_button = QPushButton("Copy details", self)
        self.copy_button.setToolTip("Copy the version and folders, e.g. for a bug report")
        self.copy_button.clicked.connect(self.copy_details)
        buttons.addButton(self.copy_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.open_logs_button = QPushButton("Open log folder", self)
        self.open_logs_button.clicked.connect(self.open_log_folder)
        self.open_logs_button.setEnabled(log_file is not None)
        buttons.addButton(self.open_logs_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def details_text(self) -> str:
        return "\n".join(f"{label}: {value}" for label, value in self.details)

    def copy_details(self) -> None:
        clipboard = QGuiApplication.clipboard()
        if clipboard is not None:
            clipboard.setText(self.details_text())

    def open_log_folder(self) -> None:
        if self._log_file is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(self._log_file.parent)))
