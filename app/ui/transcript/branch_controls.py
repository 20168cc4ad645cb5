"""A message row's controls for the conversation as a tree: Edit on a user message (the row
becomes an editor in place: Enter resends, Esc cancels), Regenerate on an answer, and
``‹ n/m ›`` between the versions of a turn.

The widgets only show the row's state (``MessageRow.editing``, ``branches``) and hand clicks
back to it; the row turns them into ops (``EditTurn``, ``RegenerateTurn``, ``SwitchBranch``)
and the core decides. While the row is away (scrolled off), its draft stays in the row.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ..runtime.qt_namespace import Qt
from ..style.widgets import tool_button
from .row_widget_base import muted_label

if TYPE_CHECKING:
    from .message_rows import MessageRow

EDIT_TIP = "Edit this message and send it again: a new branch (the old one stays)"
REGENERATE_TIP = "Answer this message again: a new branch (this answer stays)"
CARRY_TEXT = "Carry a summary of the branch left behind"
CARRY_TIP = "The model gets a short summary of what was tried on the branch you leave"
EDITOR_HINT = "Enter to resend · Shift+Enter for a new line · Esc to cancel"


class EditBox(QPlainTextEdit):
    """The editor's text box: Enter resends, Shift+Enter breaks the line, Esc cancels."""

    submitted = Signal()
    cancelled = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not (
            event.modifiers() & Qt.KeyboardModifier.ShiftModifier
        ):
            self.submitted.emit()
            return
        if key == Qt.Key.Key_Escape:
            self.cancelled.emit()
            return
        super().keyPressEvent(event)


class MessageEditor(QWidget):
    """A user message edited in place: its text, the branch-summary checkbox, Send and
    Cancel."""

    def __init__(self, row: MessageRow, parent: QWidget) -> None:
        super().__init__(parent)
        self.row = row
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 2)
        layout.setSpacing(4)
        self.box = EditBox(self)
        self.box.setAccessibleName("Edit message")
        self.box.setTabChangesFocus(True)
        self.box.setMinimumHeight(60)
        self.box.setMaximumHeight(240)
        self.box.submitted.connect(self.submit)
        self.box.cancelled.connect(lambda: row.cancel_edit())
        self.box.textChanged.connect(self._keep_draft)
        layout.addWidget(self.box)
        self.files = QHBoxLayout()  # the attachments the edit keeps, each removable
        self.files.setSpacing(4)
        layout.addLayout(self.files)
        self.file_buttons: list[QPushButton] = []
        line = QHBoxLayout()
        line.setSpacing(8)
        self.carry = QCheckBox(CARRY_TEXT, self)
        self.carry.setToolTip(CARRY_TIP)
        self.carry.setAccessibleName(CARRY_TEXT)
        line.addWidget(self.carry)
        line.addStretch(1)
        self.hint = muted_label(EDITOR_HINT, self)
        line.addWidget(self.hint)
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.setAccessibleName("Cancel the edit")
        self.cancel_button.clicked.connect(lambda: row.cancel_edit())
        line.addWidget(self.cancel_button)
        self.send_button = QPushButton("Send", self)
        self.send_button.setAccessibleName("Send the edited message")
        self.send_button.setToolTip(EDIT_TIP)
        self.send_button.clicked.connect(self.submit)
        line.addWidget(self.send_button)
        layout.addLayout(line)
        self.hide()

    def open(self) -> None:
        """Show the row's draft (its text when the edit began), the checkbox as the
        ``branch_summary`` setting has it, and take the focus."""
        choice = self.row.summary_choice
        self.carry.setVisible(choice != "never")
        self.carry.setChecked(choice == "always")
        self.box.setPlainText(self.row.draft if self.row.draft is not None else self.row.text)
        self.box.moveCursor(self.box.textCursor().MoveOperation.End)
        self._show_files()
        self.show()
        self.box.setFocus()

    def _show_files(self) -> None:
        """A chip per attachment the edit keeps; its ✕ leaves that file out of the edit."""
        while self.files.count():  # the chips and the stretch of an earlier opening
            item = self.files.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        self.file_buttons = []
        kept = self.row.draft_files or []
        for shown in self.row.attachments:
            name, stored = str(shown.get("name", "file")), str(shown.get("file", ""))
            if stored not in kept:
                continue
            button = QPushButton(f"{name}  ✕", self)
            button.setToolTip(f"Send the edited message without {name}")
            button.setAccessibleName(f"Remove {name} from the edited message")
            button.setAutoDefault(False)
            button.clicked.connect(lambda _=False, s=stored, b=button: self._leave_out(s, b))
            self.files.addWidget(button)
            self.file_buttons.append(button)
        self.files.addStretch(1)

    def _leave_out(self, stored: str, button: QPushButton) -> None:
        if self.row.draft_files is not None and stored in self.row.draft_files:
            self.row.draft_files = [name for name in self.row.draft_files if name != stored]
        button.hide()
        self.file_buttons.remove(button)

    def _keep_draft(self) -> None:
        if self.row.editing:
            self.row.draft = self.box.toPlainText()

    def submit(self) -> None:
        carry = self.carry.isVisible() and self.carry.isChecked()
        self.row.submit_edit(self.box.toPlainText(), carry)


class BranchControls:
    """The header's Edit or Regenerate button and ``‹ n/m ›``, and the in-place editor, of
    one message row's widget."""

    def __init__(self, row: MessageRow, header: QHBoxLayout, owner: QWidget) -> None:
        self.row = row
        self.previous = tool_button("chevron-left", "Previous version", "Previous version", owner)
        self.previous.clicked.connect(lambda: row.request_sibling(-1))
        self.position = QLabel("", owner)
        self.position.setAccessibleName("Version")
        self.next = tool_button("chevron-right", "Next version", "Next version", owner)
        self.next.clicked.connect(lambda: row.request_sibling(1))
        for widget in (self.previous, self.position, self.next):
            header.addWidget(widget)
        if row.role == "user":
            self.action = tool_button("rename", EDIT_TIP, "Edit message", owner)
            self.action.clicked.connect(lambda: row.start_edit())
        else:
            self.action = tool_button("retry", REGENERATE_TIP, "Regenerate answer", owner)
            self.action.clicked.connect(lambda: row.request_regenerate())
        header.addWidget(self.action)
        self.editor: MessageEditor | None = None
        self._owner = owner

    def editor_for(self, layout: QVBoxLayout) -> MessageEditor:
        if self.editor is None:
            self.editor = MessageEditor(self.row, self._owner)
            layout.addWidget(self.editor)
        return self.editor

    def sync(self, body: QWidget, layout: QVBoxLayout) -> None:
        """Show the row's state: the buttons it offers now, ``n/m``, the editor or the body."""
        row = self.row
        branches = row.branches
        shown = branches is not None and len(branches.siblings) > 1 and not row.editing
        for widget in (self.previous, self.position, self.next):
            widget.setVisible(shown)
        if branches is not None and shown:
            count, index = len(branches.siblings), branches.index
            self.position.setText(f"{index + 1}/{count}")
            self.position.setToolTip(f"Version {index + 1} of {count}")
            self.previous.setEnabled(index > 0)
            self.next.setEnabled(index < count - 1)
        offered = row.editable if row.role == "user" else row.regenerable
        self.action.setVisible(offered and not row.editing)
        if row.editing:
            editor = self.editor_for(layout)
            if editor.isHidden():
                body.hide()
                editor.open()
        elif self.editor is not None and not self.editor.isHidden():
            self.editor.hide()
            body.show()
