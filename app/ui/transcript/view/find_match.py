"""A find match shown to the user: the row that holds it (a message, or the part of a long
message the match is in; a tool call; a compaction's summary), opened when it is collapsed,
scrolled so the match itself is on screen, and the searched words highlighted in it.

The core says where a match is (``ConversationMatch``: a tool call's id, else ``anchor``, a
piece of the text as the core indexed it); this module only finds that text on screen.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtWidgets import QLabel, QTextEdit

from ..compaction_row import CompactionRow
from ..message_rows import MessageRow
from ..row_models import ExpandableRow, ToolRow, TranscriptRow

if TYPE_CHECKING:
    from app.core import protocol as p


class Rows(Protocol):
    """The transcript's rows as finding a match needs them."""

    def tool_row(self, call_id: str) -> ToolRow | None: ...

    def compaction_rows(self) -> list[CompactionRow]: ...

    def message_rows(self, role: str | None = None) -> list[MessageRow]: ...

_WORD = re.compile(r"\w{2,}")
PIECE_CHARS = 24  # a shorter piece of the anchor, when the whole one is not in the row's text


def query_words(query: str) -> list[str]:
    """The words of what the user typed, as they are highlighted (longest first, so a word
    inside another is not marked on its own)."""
    return sorted({w.lower() for w in _WORD.findall(query)}, key=len, reverse=True)


def _pieces(anchor: str) -> list[str]:
    anchor = anchor.strip()
    if len(anchor) <= PIECE_CHARS:
        return [anchor] if anchor else []
    middle = (len(anchor) - PIECE_CHARS) // 2
    return [anchor, anchor[middle : middle + PIECE_CHARS], anchor[:PIECE_CHARS]]


def _at(text: str, anchor: str) -> float | None:
    """Where in ``text`` the anchor is, as a share of its length (None: not there)."""
    for piece in _pieces(anchor):
        where = text.find(piece)
        if where >= 0:
            return where / max(1, len(text))
    return None


def locate(rows: Rows, match: p.ConversationMatch) -> tuple[TranscriptRow, float] | None:
    """The row showing ``match`` and where in its text the match is (a share of its length)."""
    if match.call_id:
        tool = rows.tool_row(match.call_id)
        return None if tool is None else (tool, 0.0)
    anchor = match.anchor
    if match.role == "summary":
        markers = [r for r in reversed(rows.compaction_rows()) if r.state in ("done", "undone")]
        for marker in markers:
            at = _at(marker.summary + "\n" + marker.carried, anchor) if anchor else None
            if at is not None:
                return marker, at
        return (markers[0], 0.0) if markers else None
    if match.role not in ("user", "assistant") or not anchor:
        return None
    for row in rows.message_rows(match.role):
        if _at(row.text, anchor) is None:
            continue
        if not row.segments:
            return row, _at(row.text, anchor) or 0.0
        parts: list[tuple[TranscriptRow, str]] = [(row, row.head_source)]
        parts += [(segment, segment.shown_text) for segment in row.segments]
        for part, text in parts:
            at = _at(text, anchor)
            if at is not None:
                return part, at
        return row, 0.0
    return None


def open_row(row: TranscriptRow) -> None:
    """A collapsed row holding a match is opened (a marker's summary, a tool call)."""
    if isinstance(row, (CompactionRow, ExpandableRow)):
        row.set_expanded(True)


def text_view(row: TranscriptRow) -> QTextEdit | QLabel | None:
    """The widget showing the row's searchable text."""
    widget: Any = row.widget
    if isinstance(row, CompactionRow):
        return widget.summary_view  # type: ignore[no-any-return]
    if isinstance(row, ToolRow):
        return widget.output_label  # type: ignore[no-any-return]
    return getattr(widget, "body", None)


def highlight(view: QTextEdit | QLabel, words: list[str], at: float) -> int | None:
    """Mark ``words`` in ``view``; the vertical place (in ``view``) of the occurrence nearest
    ``at`` (a share of the text), to scroll to; None when no word is there."""
    if isinstance(view, QLabel):
        text = view.text().lower()
        spans = [(m.start(), len(w)) for w in words for m in re.finditer(re.escape(w), text)]
        if not spans:
            return None
        start, length = min(spans, key=lambda s: abs(s[0] / max(1, len(text)) - at))
        view.setSelection(start, length)
        return 0
    # Loaded when a match is first shown, not before the window's first paint.
    from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor, QTextDocument

    document = view.document()
    marked = QTextCharFormat()
    marked.setBackground(QColor("#ffd54f"))
    marked.setForeground(QColor("#000000"))
    selections: list[QTextEdit.ExtraSelection] = []
    for word in words:
        cursor = QTextCursor(document)
        while True:
            cursor = document.find(word, cursor, QTextDocument.FindFlag(0))
            if cursor.isNull():
                break
            selection = QTextEdit.ExtraSelection()
            selection.cursor = cursor
            selection.format = marked
            selections.append(selection)
    view.setExtraSelections(selections)
    if not selections:
        return None
    size = max(1, document.characterCount())
    nearest = min(
        selections,
        key=lambda s: abs(s.cursor.selectionStart() / size - at),
    )
    return int(view.cursorRect(nearest.cursor).top())


def clear(row: TranscriptRow | None) -> None:
    """Take the highlight off ``row`` (another match was chosen, or find was closed)."""
    if row is None or row._widget is None:
        return
    view = text_view(row)
    if isinstance(view, QTextEdit):
        view.setExtraSelections([])
    elif isinstance(view, QLabel):
        view.setSelection(0, 0)
