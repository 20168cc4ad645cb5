"""The composer: a multi-line input (Enter sends, Shift+Enter breaks the line), Send and Stop,
a completion list of slash commands, and an inline hint for commands that cannot run.

``Composer`` is the frame: the text box (``edit``), the buttons, the busy state, the hint,
what is sent and the keys it owns. Its slash-command list is ``slash_popup`` and what it does
with a pasted-text chip is ``chip_actions``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..runtime.qt_namespace import Qt, set_enum_property
from ..style.theme import colors
from ..style.widgets import tool_button
from .attachment_chips import AttachmentTray, mime_files
from .chip_actions import ChipActions
from .edit import ComposerEdit
from .paste_chips import CHIP_CHARS, OBJECT, describe
from .slash_popup import BUSY_REASON, SlashPopup

QUEUED_TIP = "Send (Enter): it goes to the model as soon as the compaction has finished"

# The slash commands (app.ui.controller.commands) are imported where used: not before the first paint.
if TYPE_CHECKING:
    from PySide6.QtCore import QMimeData

    from .paste_viewer import PastedTextDialog


class Composer(ChipActions, SlashPopup):
    """Emits ``message_submitted(text)`` for messages and ``command_submitted(Command)`` for
    known slash commands; unknown ones stay in the box with an inline hint."""

    message_submitted = Signal(str)
    command_submitted = Signal(object)
    stop_requested = Signal()
    edit_last_requested = Signal()  # ↑ in an empty box: edit the last message sent

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.busy = False
        self.send_queued = False  # busy, yet a message may go (it waits behind a compaction)
        self.compact_block_reason = ""  # non-empty: /compact is refused with this text
        self.chip_dialog: PastedTextDialog | None = None  # the last chip's text shown
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 4, 12, 8)
        layout.setSpacing(4)

        self.popup = QListWidget(self)
        self.popup.setAccessibleName("Commands")
        self.popup.setToolTip("Slash commands: ↑/↓ to choose, Tab to complete, Enter to run")
        # Built before the window's first paint: no Qt.* member here (see qt_namespace).
        set_enum_property(self.popup, "focusPolicy", "NoFocus")
        set_enum_property(self.popup, "horizontalScrollBarPolicy", "ScrollBarAlwaysOff")
        self.popup.itemClicked.connect(self._accept_item)
        self.popup.hide()
        layout.addWidget(self.popup)

        self.hint = QLabel(self)
        set_enum_property(self.hint, "textFormat", "PlainText")
        self.hint.setWordWrap(True)
        self.hint.setAccessibleName("Composer hint")
        self.hint.hide()
        layout.addWidget(self.hint)

        self.attachments = AttachmentTray(self)  # files sent with the message, as chips
        layout.addWidget(self.attachments)

        row = QHBoxLayout()
        row.setSpacing(6)
        self.edit = ComposerEdit(self)
        self.edit.textChanged.connect(self._on_text_changed)
        row.addWidget(self.edit, 1)
        # The buttons keep to the bottom of the row as the edit grows: a stretch above them
        # (as AlignBottom would, which is a Qt.* enum: none is read before the first paint).
        buttons = QHBoxLayout()
        column = QVBoxLayout()
        column.addStretch(1)
        column.addLayout(buttons)
        row.addLayout(column)
        self.attach_button: QToolButton = tool_button(
            "attach", "Attach files or images (or drop them, or paste)", "Attach files", self
        )
        self.attach_button.setIconSize(QSize(20, 20))
        self.attach_button.clicked.connect(self.choose_files)
        buttons.addWidget(self.attach_button)
        self.send_button: QToolButton = tool_button(
            "send", "Send (Enter)", "Send message", self
        )
        self.send_button.setIconSize(QSize(20, 20))
        self.send_button.clicked.connect(self.submit)
        buttons.addWidget(self.send_button)
        self.stop_button: QToolButton = tool_button(
            "stop", "Stop the reply or the compaction (Esc)", "Stop", self
        )
        self.stop_button.setIconSize(QSize(20, 20))
        self.stop_button.clicked.connect(self.stop_requested)
        self.stop_button.setEnabled(False)
        buttons.addWidget(self.stop_button)
        layout.addLayout(row)
        self._update_buttons()

    # -- state ------------------------------------------------------------------------------

    def set_busy(
        self, busy: bool, compact_block_reason: str = "", send_queued: bool = False
    ) -> None:
        """A turn runs (Send is refused, Stop works); ``compact_block_reason`` gates /compact;
        ``send_queued``: a message may still go, to wait behind what runs (an automatic
        compaction)."""
        self.busy = busy
        self.send_queued = busy and send_queued
        self.compact_block_reason = compact_block_reason
        self._update_buttons()
        if not busy and self.hint.isVisible():
            from ..controller.commands import COMPACT_RUNNING_REASON, COMPACT_STREAMING_REASON

            if self.hint.text() in (BUSY_REASON, COMPACT_STREAMING_REASON, COMPACT_RUNNING_REASON):
                self.hide_hint()

    def _update_buttons(self) -> None:
        self.stop_button.setEnabled(self.busy)
        self.send_button.setEnabled(not self.busy or self.send_queued)
        self.send_button.setToolTip(
            QUEUED_TIP if self.send_queued else BUSY_REASON if self.busy else "Send (Enter)"
        )

    def text(self) -> str:
        """The message as it would be sent: the text typed, each chip's text in its place."""
        return self.edit.full_text()

    def set_text(self, text: str) -> None:
        """Replace what the box holds by ``text`` (a long one as a chip, as pasted)."""
        if len(text) > CHIP_CHARS:
            self.edit.clear()
            self.edit.forget_chips()
            self.edit.insert_text(text)
            return
        self.edit.prepare_for(text)
        self.edit.setPlainText(text)
        self.edit.forget_chips()  # the undo stack went with the old text
        cursor = self.edit.textCursor()
        cursor.movePosition(cursor.MoveOperation.End)
        self.edit.setTextCursor(cursor)

    def focus(self) -> None:
        self.edit.setFocus(Qt.FocusReason.ShortcutFocusReason)

    # -- hints ------------------------------------------------------------------------------

    def show_hint(self, text: str, kind: str = "warning") -> None:
        c = colors()
        color = {"warning": c.warning, "error": c.error}.get(kind, c.muted)
        self.hint.setStyleSheet(f"color: {color};")
        self.hint.setText(text)
        self.hint.show()

    def hide_hint(self) -> None:
        self.hint.hide()
        self.hint.setText("")

    # -- submit -----------------------------------------------------------------------------

    def submit(self) -> None:
        """Send what is typed: a command, a message, or an inline hint when neither can go."""
        from ..controller.commands import Command, CommandProblem, parse_command, unescape_message

        text = self.text()
        if not text.strip():
            if self.attachments.paths() and not self.busy:
                self._send_message(text)
            return
        parsed = parse_command(text)
        if isinstance(parsed, CommandProblem):
            self.show_hint(parsed.hint)
            return
        if isinstance(parsed, Command):
            if parsed.name == "compact" and self.compact_block_reason:
                self.show_hint(self.compact_block_reason)
                return
            if self.busy and parsed.name not in ("export",):
                self.show_hint(BUSY_REASON)
                return
            self._clear()
            self.command_submitted.emit(parsed)
            return
        if self.busy and not self.send_queued:
            self.show_hint(BUSY_REASON)
            return
        self._send_message(unescape_message(text))

    def _send_message(self, text: str) -> None:
        """Send the message; the files attached go with it (the window takes them)."""
        if problem := self.attachments.problem():
            self.show_hint(problem, "error")
            return
        self._clear()
        self.message_submitted.emit(text)

    # -- attachments ------------------------------------------------------------------------

    def choose_files(self) -> None:
        """The paperclip: pick files to attach."""
        from PySide6.QtWidgets import QFileDialog

        paths, _ = QFileDialog.getOpenFileNames(
            self, "Attach files", "",
            "Text, PDF and images (*.txt *.md *.csv *.json *.log *.py *.pdf *.png *.jpg *.jpeg "
            "*.webp *.gif);;All files (*)",
        )
        self.attachments.add_paths(paths)

    def attach_from_mime(self, source: QMimeData) -> bool:
        """A drop or a paste of files or of an image attaches them; True when it did."""
        paths = mime_files(source)
        if paths:
            self.attachments.add_paths(paths)
        return bool(paths)

    def _clear(self) -> None:
        self.edit.clear()
        self.edit.forget_chips()  # clear() emptied the undo stack too
        self.hide_hint()
        self.popup.hide()

    # -- typing -----------------------------------------------------------------------------

    def _on_text_changed(self) -> None:
        text = self.edit.toPlainText()  # chips as one character: the command word is typed
        chips = self.edit.chips.chips() if OBJECT in text else []
        description = "; ".join(f"Holds pasted text: {describe(held)}" for _, held in chips)
        if description != self.edit.accessibleDescription():
            self.edit.setAccessibleDescription(description)
        if self.hint.isVisible() and self.hint.text() not in (BUSY_REASON,):
            self.hide_hint()
        self._update_popup(text)

    # -- keys -------------------------------------------------------------------------------

    def handle_key(self, event: QKeyEvent) -> bool:
        """Keys the composer owns; True when handled (the edit must not see it)."""
        key = event.key()
        mods = event.modifiers()
        popup = self.popup.isVisible()
        if popup and key in (Qt.Key.Key_Up, Qt.Key.Key_Down):
            self._move_selection(-1 if key == Qt.Key.Key_Up else 1)
            return True
        if key == Qt.Key.Key_Up and not popup and not mods and not self.edit.toPlainText():
            self.edit_last_requested.emit()
            return True
        if popup and key == Qt.Key.Key_Tab:
            self._accept_item(self.popup.currentItem(), run=False)
            return True
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if mods & Qt.KeyboardModifier.ShiftModifier:
                return False  # a new line
            if popup:
                self._accept_item(self.popup.currentItem(), run=True)
                return True
            self.submit()
            return True
        if key == Qt.Key.Key_Escape:
            if popup:
                self.popup.hide()
                return True
            if self.busy:
                self.stop_requested.emit()
                return True
            if self.hint.isVisible():
                self.hide_hint()
                return True
        return False
