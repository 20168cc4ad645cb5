"""A ``QTextDocument`` kept in step with a growing Markdown text, re-rendering only its end.

A streaming reply grows by a few characters per delta. Re-rendering the whole Markdown and
``setHtml`` of the whole text on every frame costs time proportional to the reply, so a long
reply stalls the window. Here the text is cut into *closed* blocks (``markdown_blocks``) —
everything before the last blank line (outside a code fence) that is followed by a line
starting a new top-level block — and an open *tail*. Closed blocks are rendered once and stay
in the document; each update removes the old tail and inserts the newly closed blocks and the
new tail through a ``QTextCursor`` at the end of the document, so the work per update is
bounded by the tail.

The cut points are chosen where Markdown gives the same result whether the text is rendered
whole or in parts (never inside a fence, never before an indented line or a list item that
could continue the list above), and a document that was never streamed is built the same way,
so a reply looks the same while it streams, when it is done and when it is reopened.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import (
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextDocumentFragment,
)

from ..text.markdown_blocks import closed_end

if TYPE_CHECKING:
    from .markdown import MarkdownRenderer, RenderedMarkdown


def render_ahead(
    renderer: MarkdownRenderer, text: str, breaks: bool = False, complete: bool = False
) -> None:
    """Have ``renderer`` render now (in a worker thread) what :meth:`MarkdownDocument.update`
    with ``text`` (and ``complete``) on a new document will ask it for: the closed blocks,
    then the tail; a complete text in one piece."""
    end = len(text) if complete else closed_end(text, 0)
    first_code = 0
    if end > 0:
        first_code = len(renderer.render_ahead(text[:end], 0, breaks).code_blocks)
    tail = text[end:]
    if tail.strip():
        renderer.render_ahead(tail, first_code, breaks)


class MarkdownDocument:
    """Renders a Markdown text into ``document``; :meth:`update` re-renders only the end."""

    def __init__(
        self, document: QTextDocument, renderer: MarkdownRenderer, breaks: bool = False
    ) -> None:
        self.document = document
        self._breaks = breaks  # line breaks inside paragraphs are kept (a user's own text)
        document.setUndoRedoEnabled(False)  # edits through the cursor must not pile up
        self._renderer = renderer
        self._text = ""  # what the document shows
        self._closed = 0  # text[:_closed] is rendered as closed blocks
        self._closed_code: list[str] = []
        self._tail_code: list[str] = []
        self._tail_position = 0  # document position where the tail's content begins
        # The format of the block the tail was appended to, as it was before.
        self._tail_block = (QTextBlockFormat(), QTextCharFormat())
        self._complete = False  # the text shown will not grow (see update)
        self.renders = 0  # Markdown renders (closed parts and tails), for diagnostics

    @property
    def text(self) -> str:
        return self._text

    @property
    def code_blocks(self) -> list[str]:
        """The text of every code block shown, in the order of their copy links."""
        return self._closed_code + self._tail_code

    def set_renderer(self, renderer: MarkdownRenderer) -> None:
        """Use another renderer (the palette changed): the next update renders everything."""
        self._renderer = renderer
        self.reset()

    def reset(self) -> None:
        """Forget what was rendered; the next :meth:`update` starts from an empty document."""
        self.document.clear()
        self._text = ""
        self._closed = 0
        self._closed_code = []
        self._tail_code = []
        self._tail_position = 0
        self._tail_block = (QTextBlockFormat(), QTextCharFormat())
        self._complete = False

    def update(self, text: str, complete: bool = False) -> None:
        """Show ``text``: append what is new when it extends the closed part, else rebuild.

        ``complete``: ``text`` will not grow (a part of a long message that ends at a cut), so
        what is new is rendered to its end in one piece, with no open tail kept apart: one
        Markdown render where a closed part and a tail took two."""
        if text == self._text:
            return
        if self._complete or not text.startswith(self._text[: self._closed]):
            self.reset()  # (a complete text that changes after all is rendered anew)
        cursor = QTextCursor(self.document)
        # Drop the old tail: it may render differently now that more text follows it.
        cursor.setPosition(self._tail_position)
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        if cursor.hasSelection():
            cursor.removeSelectedText()
            # Removing the tail's first block separator leaves the block before it with the
            # tail's format: give it back its own.
            cursor.setBlockFormat(self._tail_block[0])
            cursor.setBlockCharFormat(self._tail_block[1])
        end = len(text) if complete else closed_end(text, self._closed)
        if end > self._closed:
            rendered = self._render(text[self._closed : end])
            self._insert(cursor, rendered.html)
            self._closed_code.extend(rendered.code_blocks)
            self._closed = end
            self.renders += 1
        cursor.movePosition(QTextCursor.MoveOperation.End)
        self._tail_position = cursor.position()
        self._tail_block = (cursor.blockFormat(), cursor.blockCharFormat())
        tail = text[self._closed :]
        self._tail_code = []
        if tail.strip():
            rendered = self._render(tail)
            self._insert(cursor, rendered.html)
            self._tail_code = rendered.code_blocks
            self.renders += 1
        self._text = text
        self._complete = complete

    def _render(self, text: str) -> RenderedMarkdown:
        first_code = len(self._closed_code)
        if self._breaks:
            return self._renderer.render(text, first_code, breaks=True)
        return self._renderer.render(text, first_code)

    def _insert(self, cursor: QTextCursor, html: str) -> None:
        html = html.strip()
        if not html:
            return
        cursor.movePosition(QTextCursor.MoveOperation.End)
        if self.document.isEmpty():
            self.document.setHtml(html)
            cursor.movePosition(QTextCursor.MoveOperation.End)
            return
        # How Qt joins a copied part to the block at the cursor depends on how the part
        # starts; each way below gives the document setHtml makes of the whole text.
        if html.startswith("<hr"):
            cursor.insertHtml(html)
            return
        # Parsed on its own exactly as setHtml parses a whole message, then copied in.
        part = QTextDocument()
        part.setDefaultStyleSheet(self.document.defaultStyleSheet())
        part.setHtml(html)
        if not html.startswith(("<table", "<ul", "<ol")):
            # The first copied paragraph would merge into the block at the cursor and take
            # its format: give it a block of its own, formatted as in the part.
            first = part.begin()
            cursor.insertBlock(first.blockFormat(), first.charFormat())
        cursor.insertFragment(QTextDocumentFragment(part))
