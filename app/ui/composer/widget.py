"""The composer: a multi-line input (Enter sends, Shift+Enter breaks the line), Send and Stop,
a completion list of slash commands, and an inline hint for commands that cannot run."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QMimeData, QPoint, QSize, Signal
from PySide6.QtGui import (
    QAction,
    QContextMenuEvent,
    QHelpEvent,
    QKeyEvent,
    QMouseEvent,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPlainTextEdit,
    QSizePolicy,
    QToolButton,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from ..runtime.qt_namespace import Qt, set_enum_property
from ..style.theme import colors
from ..style.widgets import tool_button
from .paste_chips import CHIP_CHARS, OBJECT, PREVIEW_CHARS, chip_label, describe

# The slash commands (app.ui.controller.commands) are imported where used: not before the first paint.
# QTextCharFormat, QTextCursor and QTextOption are imported where used: creating their Python
# types costs 2.5 ms, and nothing needs them before the window's first paint.
if TYPE_CHECKING:
    from PySide6.QtGui import QTextCursor

    from ..controller.commands import CommandSpec
    from .paste_viewer import PastedTextDialog
    from .pasted_texts import PastedTexts

BUSY_REASON = "Wait for the reply to finish, or press Stop (Esc)"
# A run without whitespace this long is wrapped anywhere: wrapping it at word boundaries costs
# Qt time that grows much faster than its length (128 KB of hex: seconds).
LONG_RUN_CHARS = 2_000
_LONG_RUN = re.compile(rf"\S{{{LONG_RUN_CHARS},}}")


PLACEHOLDER = "Message Coco…  (Enter sends, Shift+Enter new line, / for commands)"
SHORT_PLACEHOLDER = "Message Coco…  (/ for commands)"


class ComposerEdit(QPlainTextEdit):
    """The text box. Key handling is delegated to the composer (send, popup navigation). A
    paste longer than ``CHIP_CHARS`` is held as a chip (``paste_chips``)."""

    def __init__(self, composer: Composer) -> None:
        super().__init__(composer)
        self._composer = composer
        self.setTabChangesFocus(False)
        self.setPlaceholderText(PLACEHOLDER)
        self.setAccessibleName("Message")
        self.setToolTip("Type a message; Enter sends, Shift+Enter adds a line, / lists commands")
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.document().contentsChanged.connect(self._fit_height)
        self.document().contentsChanged.connect(self._back_to_word_wrap)
        self._chips: PastedTexts | None = None  # made with the first chip (or look for one)
        self.open_menu: QMenu | None = None  # the context menu while it is open
        self._fit_height()

    @property
    def chips(self) -> PastedTexts:
        """The chips of this box. Made when first wanted, which is never before the window's
        first paint: its module makes Qt's text-object types (~2 ms)."""
        if self._chips is None:
            from .pasted_texts import PastedTexts

            self._chips = PastedTexts(self)
        return self._chips

    def forget_chips(self) -> None:
        """The box was cleared (and with it the undo stack): no chip can come back."""
        if self._chips is not None:
            self._chips.forget()

    def prepare_for(self, text: str) -> None:
        """Wrap anywhere before ``text`` arrives when it holds a very long unbroken run."""
        if _LONG_RUN.search(text) is not None:
            from PySide6.QtGui import QTextOption

            self.setWordWrapMode(QTextOption.WrapMode.WrapAnywhere)

    def _back_to_word_wrap(self) -> None:
        from PySide6.QtGui import QTextOption

        if (
            self.wordWrapMode() == QTextOption.WrapMode.WrapAnywhere
            and self.document().characterCount() <= LONG_RUN_CHARS
        ):
            self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)

    def insertFromMimeData(self, source: QMimeData) -> None:
        if source.hasText():
            text = source.text()
            if len(text) > CHIP_CHARS:
                self.insert_text(text)
                return
            self.prepare_for(text)
        super().insertFromMimeData(source)

    def insert_text(self, text: str) -> None:
        """Put ``text`` at the cursor as a paste does: a long one as a chip."""
        cursor = self.textCursor()
        if len(text) > CHIP_CHARS:
            self.chips.insert(cursor, text)
        else:
            self.prepare_for(text)
            cursor.insertText(text)
            self.setTextCursor(cursor)
        self.ensureCursorVisible()

    def full_text(self) -> str:
        """The text typed, with each chip's text in its place."""
        if self._chips is None:
            return self.toPlainText()  # no chip was ever made
        return self._chips.expand(self.toPlainText())

    def createMimeDataFromSelection(self) -> QMimeData:
        """A selection copies (or drags) the chips in it as the texts they hold."""
        cursor = self.textCursor()
        data = QMimeData()
        data.setText(self.chips.expand(
            cursor.selection().toPlainText(), cursor.selectionStart(), cursor.selectionEnd()
        ))
        return data

    def chip_touched(self, point: QPoint | None = None) -> int | None:
        """The chip under ``point`` (viewport coordinates), or next to the text cursor."""
        return self.chips.at_cursor() if point is None else self.chips.at_point(point)

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        position = self.chips.at_point(event.position().toPoint())
        if position is None:
            super().mouseDoubleClickEvent(event)
            return
        self._composer.view_chip(position)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        menu = self.createStandardContextMenu(event.pos())
        mouse = event.reason() == QContextMenuEvent.Reason.Mouse
        position = self.chip_touched(event.pos() if mouse else None)  # viewport coordinates
        if position is not None:
            actions: list[QAction] = []
            for label, act in (
                ("View pasted text…", self._composer.view_chip),
                ("Edit pasted text in the box", self._composer.expand_chip),
                ("Remove pasted text", self._composer.remove_chip),
            ):
                action = QAction(label, menu)
                action.triggered.connect(lambda _=False, act=act: act(position))
                actions.append(action)
            separator = QAction(menu)
            separator.setSeparator(True)
            actions.append(separator)
            standard = menu.actions()
            if standard:
                menu.insertActions(standard[0], actions)
            else:
                menu.addActions(actions)
        self.open_menu = menu
        menu.exec(event.globalPos())
        self.open_menu = None
        menu.deleteLater()

    def viewportEvent(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            position = self.chips.at_point(event.pos())
            text = self.chips.text_of(position) if position is not None else None
            if text is not None:
                preview = text[:PREVIEW_CHARS] + ("…" if len(text) > PREVIEW_CHARS else "")
                QToolTip.showText(
                    event.globalPos(),
                    f"{chip_label(text)}\n\n{preview}\n\nDouble-click (or the Menu key) to "
                    "view it; Backspace or Delete removes it, Ctrl+Z brings it back.",
                    self,
                )
                return True
        return super().viewportEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key == Qt.Key.Key_Menu or (
            key == Qt.Key.Key_F10 and event.modifiers() & Qt.KeyboardModifier.ShiftModifier
        ):
            # The context menu at the text cursor (a chip next to it can be viewed from there).
            at = self.cursorRect().center()
            self.contextMenuEvent(QContextMenuEvent(
                QContextMenuEvent.Reason.Keyboard, at, self.viewport().mapToGlobal(at)
            ))
            return
        if not self._composer.handle_key(event):
            super().keyPressEvent(event)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_placeholder()

    def _fit_placeholder(self) -> None:
        """The one-line box shows the whole hint where it fits, a short one where it would
        wrap onto a line the box does not show (the tooltip keeps the keys)."""
        # The viewport's width when no scroll bar shows, as when the hint is seen. (Not
        # ``viewport()``: handing Python a widget Qt made costs PySide6 a search through every
        # widget class it has, 9-16 ms, and this runs before the window's first paint.)
        room = self.maximumViewportSize().width() - int(self.document().documentMargin() * 2) - 4
        full = self.fontMetrics().horizontalAdvance(PLACEHOLDER) <= room
        text = PLACEHOLDER if full else SHORT_PLACEHOLDER
        if self.placeholderText() != text:
            self.setPlaceholderText(text)

    def _fit_height(self) -> None:
        # Grow with the text up to ~8 lines, then scroll inside.
        line = self.fontMetrics().lineSpacing()
        lines = max(1, min(8, int(self.document().size().height())))
        margins = self.contentsMargins()
        frame = int(self.document().documentMargin() * 2) + margins.top() + margins.bottom()
        self.setFixedHeight(lines * line + frame + 4)


class Composer(QWidget):
    """Emits ``message_submitted(text)`` for messages and ``command_submitted(Command)`` for
    known slash commands; unknown ones stay in the box with an inline hint."""

    message_submitted = Signal(str)
    command_submitted = Signal(object)
    stop_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.busy = False
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

    def set_busy(self, busy: bool, compact_block_reason: str = "") -> None:
        """A turn runs (Send is refused, Stop works); ``compact_block_reason`` gates /compact."""
        self.busy = busy
        self.compact_block_reason = compact_block_reason
        self._update_buttons()
        if not busy and self.hint.isVisible():
            from ..controller.commands import COMPACT_RUNNING_REASON, COMPACT_STREAMING_REASON

            if self.hint.text() in (BUSY_REASON, COMPACT_STREAMING_REASON, COMPACT_RUNNING_REASON):
                self.hide_hint()

    def _update_buttons(self) -> None:
        self.stop_button.setEnabled(self.busy)
        self.send_button.setEnabled(not self.busy)
        self.send_button.setToolTip(BUSY_REASON if self.busy else "Send (Enter)")

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

    # -- chips ------------------------------------------------------------------------------

    def view_chip(self, position: int) -> PastedTextDialog | None:
        """Show the text of the chip at ``position``, with Edit and Remove."""
        text = self.edit.chips.text_of(position)
        if text is None:
            return None
        from .paste_viewer import PastedTextDialog  # with the first chip viewed

        dialog = PastedTextDialog(text, self)

        def edit() -> None:
            dialog.accept()
            self.expand_chip(position)

        def remove() -> None:
            dialog.accept()
            self.remove_chip(position)

        dialog.edit_button.clicked.connect(edit)
        dialog.remove_button.clicked.connect(remove)
        dialog.finished.connect(lambda _result: self.edit.setFocus())
        dialog.finished.connect(dialog.deleteLater)
        self.chip_dialog = dialog
        dialog.open()
        return dialog

    def expand_chip(self, position: int) -> None:
        """Put the chip's text itself in its place, to edit it (Ctrl+Z gives the chip back)."""
        from PySide6.QtGui import QTextCharFormat

        text = self.edit.chips.text_of(position)
        if text is None:
            return
        cursor = self._chip_cursor(position)
        self.edit.prepare_for(text)
        cursor.insertText(text, QTextCharFormat())
        self.edit.setTextCursor(cursor)
        self.edit.setFocus()

    def remove_chip(self, position: int) -> None:
        """Take the chip out of the message (Ctrl+Z gives it back)."""
        if self.edit.chips.text_of(position) is None:
            return
        cursor = self._chip_cursor(position)
        cursor.removeSelectedText()
        self.edit.setTextCursor(cursor)
        self.edit.setFocus()

    def _chip_cursor(self, position: int) -> QTextCursor:
        from PySide6.QtGui import QTextCursor

        cursor = QTextCursor(self.edit.document())
        cursor.setPosition(position)
        cursor.setPosition(position + 1, QTextCursor.MoveMode.KeepAnchor)
        return cursor

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
        if self.busy:
            self.show_hint(BUSY_REASON)
            return
        self._clear()
        self.message_submitted.emit(unescape_message(text))

    def _clear(self) -> None:
        self.edit.clear()
        self.edit.forget_chips()  # clear() emptied the undo stack too
        self.hide_hint()
        self.popup.hide()

    # -- popup ------------------------------------------------------------------------------

    def _on_text_changed(self) -> None:
        text = self.edit.toPlainText()  # chips as one character: the command word is typed
        chips = self.edit.chips.chips() if OBJECT in text else []
        description = "; ".join(f"Holds pasted text: {describe(held)}" for _, held in chips)
        if description != self.edit.accessibleDescription():
            self.edit.setAccessibleDescription(description)
        if self.hint.isVisible() and self.hint.text() not in (BUSY_REASON,):
            self.hide_hint()
        self._update_popup(text)

    def _update_popup(self, text: str) -> None:
        # The list shows while the command word is being typed (no space or newline yet).
        typing_command = text.startswith("/") and not text.startswith("//") and not any(
            ch.isspace() for ch in text
        )
        if typing_command:
            from ..controller.commands import completions

            specs = completions(text)
        else:
            specs = []
        if not specs:
            self.popup.hide()
            return
        self.popup.clear()
        for spec in specs:
            item = QListWidgetItem(f"{spec.usage}  —  {spec.help}")
            item.setData(Qt.ItemDataRole.UserRole, spec.name)
            item.setToolTip(spec.help)
            if spec.name == "compact" and self.compact_block_reason:
                item.setText(f"{spec.usage}  —  {self.compact_block_reason}")
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled)
            self.popup.addItem(item)
        self.popup.setCurrentRow(self._first_enabled_row())
        row_height = self.popup.sizeHintForRow(0) if self.popup.count() else 20
        self.popup.setFixedHeight(row_height * len(specs) + 2 * self.popup.frameWidth() + 2)
        self.popup.show()

    def _first_enabled_row(self) -> int:
        for index in range(self.popup.count()):
            if self.popup.item(index).flags() & Qt.ItemFlag.ItemIsEnabled:
                return index
        return 0

    def popup_commands(self) -> list[str]:
        """The names listed in the completion popup (empty when hidden)."""
        if not self.popup.isVisible():
            return []
        return [
            str(self.popup.item(i).data(Qt.ItemDataRole.UserRole)) for i in range(self.popup.count())
        ]

    def _spec_of(self, item: QListWidgetItem | None) -> CommandSpec | None:
        from ..controller.commands import completions

        if item is None:
            return None
        name = item.data(Qt.ItemDataRole.UserRole)
        return next((s for s in completions("/") if s.name == name), None)

    def _accept_item(self, item: QListWidgetItem | None, run: bool = False) -> None:
        spec = self._spec_of(item)
        if spec is None:
            return
        if not (item and item.flags() & Qt.ItemFlag.ItemIsEnabled):
            self.show_hint(self.compact_block_reason or BUSY_REASON)
            return
        if spec.takes_argument and not run:
            self.set_text(f"/{spec.name} ")
        else:
            self.set_text(f"/{spec.name}")
        self.popup.hide()
        if run and not spec.needs_argument:
            self.submit()
        elif run:
            self.set_text(f"/{spec.name} ")
        self.edit.setFocus()

    def _move_selection(self, step: int) -> None:
        count = self.popup.count()
        if not count:
            return
        row = self.popup.currentRow()
        for _ in range(count):
            row = (row + step) % count
            if self.popup.item(row).flags() & Qt.ItemFlag.ItemIsEnabled:
                break
        self.popup.setCurrentRow(row)

    # -- keys -------------------------------------------------------------------------------

    def handle_key(self, event: QKeyEvent) -> bool:
        """Keys the composer owns; True when handled (the edit must not see it)."""
        key = event.key()
        mods = event.modifiers()
        popup = self.popup.isVisible()
        if popup and key in (Qt.Key.Key_Up, Qt.Key.Key_Down):
            self._move_selection(-1 if key == Qt.Key.Key_Up else 1)
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
