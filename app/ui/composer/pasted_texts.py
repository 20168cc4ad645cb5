"""The chips of one text box (``paste_chips`` says what a chip is): their texts by id, how
they are drawn (a ``QTextObjectInterface`` handler of the box's document), where they are, and
the box's text with each chip replaced by the text it holds.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, QRect, QRectF, QSizeF
from PySide6.QtGui import (
    QFontMetricsF,
    QPainter,
    QPyTextObject,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
)
from PySide6.QtWidgets import QPlainTextEdit

from ..style.theme import colors
from .paste_chips import OBJECT, chip_label

CHIP_OBJECT = int(QTextFormat.ObjectTypes.UserObject) + 1
CHIP_ID = int(QTextFormat.Property.UserProperty) + 1
PADDING = 6.0  # pixels left and right of the chip's label


class PastedTexts(QPyTextObject):
    """The chips of one text box: their texts by id, how they are drawn, and the text of the
    box with each chip replaced by its text."""

    def __init__(self, edit: QPlainTextEdit) -> None:
        super().__init__(edit)
        self._edit = edit
        self._texts: dict[int, str] = {}
        self._next_id = 1
        self._registered = False  # as the drawer of chips, at the first one (not at start-up)

    # -- the texts --------------------------------------------------------------------------

    def insert(self, cursor: QTextCursor, text: str) -> None:
        """Put a chip holding ``text`` at ``cursor`` (replacing its selection): one undo step."""
        if not self._registered:
            self._edit.document().documentLayout().registerHandler(CHIP_OBJECT, self)
            self._registered = True
        chip_id, self._next_id = self._next_id, self._next_id + 1
        self._texts[chip_id] = text
        chip = QTextCharFormat()
        chip.setObjectType(CHIP_OBJECT)
        chip.setProperty(CHIP_ID, chip_id)
        plain = cursor.charFormat()
        plain.clearProperty(CHIP_ID)  # typing after the chip is not part of it
        cursor.insertText(OBJECT, chip)
        cursor.setCharFormat(plain)
        self._edit.setTextCursor(cursor)

    def forget(self) -> None:
        """The box was cleared (and with it the undo stack): no chip can come back."""
        self._texts.clear()

    def text_of(self, position: int) -> str | None:
        """The text of the chip at document ``position`` (None when no chip is there)."""
        found = self._objects(position, position + 1)
        return found[0][1] if found else None

    def chips(self, start: int = 0, end: int | None = None) -> list[tuple[int, str]]:
        """The chips from ``start`` to ``end`` (the document's end when None): each one's
        position and text, in order."""
        return [(at, text) for at, text in self._objects(start, end) if text is not None]

    def expand(self, raw: str, start: int = 0, end: int | None = None) -> str:
        """``raw`` (the plain text of the box from ``start`` to ``end``) with each chip's
        character replaced by the text it holds."""
        if OBJECT not in raw or not self._texts:
            return raw
        # The i-th U+FFFC of ``raw`` is the i-th one of the document from ``start``: a chip,
        # or the character itself, typed or pasted as such.
        found = self._objects(start, end)
        parts = raw.split(OBJECT)
        if len(parts) != len(found) + 1:
            return raw
        out = [parts[0]]
        for (_, text), part in zip(found, parts[1:], strict=True):
            out.append(OBJECT if text is None else text)
            out.append(part)
        return "".join(out)

    def _objects(self, start: int, end: int | None) -> list[tuple[int, str | None]]:
        """Each U+FFFC from ``start`` to ``end``: its position, and the text of the chip it is
        (None for the character itself). Walks the fragments (runs of one format), not text."""
        document = self._edit.document()
        stop = document.characterCount() if end is None else end
        found: list[tuple[int, str | None]] = []
        block = document.findBlock(start)
        while block.isValid() and block.position() < stop:
            it = block.begin()
            while not it.atEnd():
                fragment = it.fragment()
                first = fragment.position()
                text = fragment.text()
                low, high = max(start - first, 0), min(stop - first, len(text))
                index = text.find(OBJECT, low, high) if low < high else -1
                while index >= 0:
                    found.append((first + index, self._held(fragment.charFormat())))
                    index = text.find(OBJECT, index + 1, high)
                it += 1
            block = block.next()
        return found

    def _held(self, char_format: QTextFormat) -> str | None:
        if char_format.objectType() != CHIP_OBJECT:
            return None
        return self._texts.get(char_format.property(CHIP_ID))

    # -- drawing (QTextObjectInterface) -----------------------------------------------------

    def intrinsicSize(self, doc: QTextDocument, pos: int, fmt: QTextFormat) -> QSizeF:
        metrics = QFontMetricsF(self._edit.font())
        text = self._texts.get(fmt.property(CHIP_ID), "")
        width = metrics.horizontalAdvance(chip_label(text)) + 2 * PADDING
        # As tall as the font above the baseline: the line keeps its height.
        return QSizeF(width, metrics.ascent() + 1)

    def drawObject(
        self, painter: QPainter, rect: QRectF | QRect, doc: QTextDocument, pos: int,
        fmt: QTextFormat,
    ) -> None:
        c = colors()
        metrics = QFontMetricsF(self._edit.font())
        text = self._texts.get(fmt.property(CHIP_ID), "")
        box = QRectF(rect).adjusted(1, 0, -1, metrics.descent() - 1)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(c.border)
        painter.setBrush(c.code_bg)
        painter.drawRoundedRect(box, 4, 4)
        painter.setPen(c.text)
        painter.setFont(self._edit.font())
        painter.drawText(
            QPointF(box.left() + PADDING - 1, QRectF(rect).top() + metrics.ascent()),
            chip_label(text),
        )
        painter.restore()

    # -- where the chips are ------------------------------------------------------------------

    def at_point(self, point: QPoint) -> int | None:
        """The position of the chip drawn under ``point`` (viewport coordinates), if any."""
        cursor = self._edit.cursorForPosition(point)
        for position in (cursor.position() - 1, cursor.position()):
            if position < 0 or self.text_of(position) is None:
                continue
            left = QTextCursor(self._edit.document())
            left.setPosition(position)
            right = QTextCursor(self._edit.document())
            right.setPosition(position + 1)
            a, b = self._edit.cursorRect(left), self._edit.cursorRect(right)
            if a.top() == b.top() and a.left() <= point.x() <= b.left() and (
                a.top() <= point.y() <= a.bottom()
            ):
                return position
        return None

    def at_cursor(self) -> int | None:
        """The chip the text cursor touches: selected, just before it, or just after it."""
        cursor = self._edit.textCursor()
        candidates = [cursor.position() - 1, cursor.position()]
        if cursor.hasSelection():
            candidates = [cursor.selectionStart(), cursor.selectionEnd() - 1]
        for position in candidates:
            if position >= 0 and self.text_of(position) is not None:
                return position
        return None
