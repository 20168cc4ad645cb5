"""The composer's text box: Enter and the popup keys go to the composer, the box grows with the
text up to ~8 lines, a very long unbroken run wraps anywhere, the hint fits the box's width, and
a paste longer than ``CHIP_CHARS`` is held as a chip (``paste_chips``, ``pasted_texts``) that
can be viewed, expanded or removed from its context menu."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Protocol, cast

from PySide6.QtCore import QEvent, QMimeData, QPoint
from PySide6.QtGui import (
    QAction,
    QContextMenuEvent,
    QHelpEvent,
    QKeyEvent,
    QMouseEvent,
    QResizeEvent,
)
from PySide6.QtWidgets import QMenu, QPlainTextEdit, QSizePolicy, QToolTip, QWidget

from ..runtime.qt_namespace import Qt
from .paste_chips import CHIP_CHARS, PREVIEW_CHARS, chip_label

# QTextOption is imported where used: creating its Python type costs time, and nothing needs it
# before the window's first paint.
if TYPE_CHECKING:
    from .pasted_texts import PastedTexts

# A run without whitespace this long is wrapped anywhere: wrapping it at word boundaries costs
# Qt time that grows much faster than its length (128 KB of hex: seconds).
LONG_RUN_CHARS = 2_000
_LONG_RUN = re.compile(rf"\S{{{LONG_RUN_CHARS},}}")


PLACEHOLDER = "Message Coco…  (Enter sends, Shift+Enter new line, / for commands)"
SHORT_PLACEHOLDER = "Message Coco…  (/ for commands)"


class ComposerHost(Protocol):
    """What the box asks of the composer that holds it (its parent widget)."""

    def handle_key(self, event: QKeyEvent) -> bool: ...

    def view_chip(self, position: int) -> object: ...

    def expand_chip(self, position: int) -> None: ...

    def remove_chip(self, position: int) -> None: ...

    def attach_from_mime(self, source: QMimeData) -> bool: ...


class ComposerEdit(QPlainTextEdit):
    """The text box. Key handling is delegated to the composer (send, popup navigation). A
    paste longer than ``CHIP_CHARS`` is held as a chip (``paste_chips``)."""

    def __init__(self, composer: ComposerHost) -> None:
        super().__init__(cast(QWidget, composer))  # the composer is a QWidget
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

    def canInsertFromMimeData(self, source: QMimeData) -> bool:
        return source.hasImage() or super().canInsertFromMimeData(source)

    def insertFromMimeData(self, source: QMimeData) -> None:
        if self._composer.attach_from_mime(source):  # files or an image: attached, not typed
            return
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

