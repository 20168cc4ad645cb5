"""The message rows of the transcript as plain objects: a user or assistant message, and the
further parts of a long one.

A message's text streams in as deltas, joined only when read; :meth:`MessageRow.render_markdown`
(once per frame) brings what its widgets show up to date. A long message is cut into display
parts (``long_text``), the first shown by the message row, each further one by a
``MessageSegmentRow`` right below it, so only the parts on screen are laid out. Like every row
(``row_models``) they hold no widget code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..text.long_text import SEGMENT_CHARS, Cut, display_cuts, segment_source, segment_text
from .attachments.sizes import strip_height
from .row_models import RowHost, TranscriptRow, text_lines

if TYPE_CHECKING:
    from PySide6.QtWidgets import QToolButton

    from app.core.protocol import TurnBranches

    from ..style.widgets import RichTextView
    from .row_layout import TextMetrics

_NO_CUTS: list[Cut] = []  # shared by every message row without parts (never changed)
_NO_SEGMENTS: list[MessageSegmentRow] = []
_NO_ATTACHMENTS: list[dict[str, Any]] = []


class MessageRow(TranscriptRow):
    """A user or assistant message rendered as Markdown, with a copy button.

    While a reply streams, deltas are only collected; :meth:`render_markdown` (once per frame)
    re-renders just the part of the Markdown that is still open (see ``MarkdownDocument``).
    What the widgets show ends where the text ended at that render (``shown_end``): a widget
    built between two renders (a part coming on screen) never lays out the text that arrived
    meanwhile, which on a fast stream can be a hundred kilobytes past the last cut.
    A long message is shown in parts (``long_text.display_cuts``): this row shows the first,
    a ``MessageSegmentRow`` below it each further one, so only the parts on screen are laid out.
    """

    __slots__ = (
        "_pending", "_rendered", "_shown", "_text", "_version", "attachments", "branches",
        "cut_off", "cuts", "draft", "draft_files", "editing", "interrupted", "item_id",
        "part_lines", "role", "segments", "streaming", "turn_id",
    )
    pinnable = True

    def __init__(
        self, host: RowHost, role: str, text: str = "", item_id: str = "", turn_id: str = ""
    ) -> None:
        super().__init__(host)
        self.role = role
        self.item_id = item_id
        # A user message's attachments as the core's event shows them (name, kind, size,
        # dimensions, path, missing): thumbnails and file chips under the text.
        self.attachments: list[dict[str, Any]] = _NO_ATTACHMENTS
        self.turn_id = turn_id  # the turn it belongs to ("" when the core did not say)
        # ``‹ n/m ›``: the core's ``TurnBranches`` for this row's turn, when shown on this row.
        self.branches: TurnBranches | None = None
        self.editing = False  # a user message being edited in place
        self.draft: str | None = None  # the edit's text while its widget is away
        self.draft_files: list[str] | None = None  # the attachments the edit keeps (stored names)
        self._text = text
        self._shown = len(text)  # the text's length at the last render: what widgets show
        self._pending: list[str] | None = None  # deltas not yet joined into _text
        self._version = 0
        self._rendered = 0
        self.streaming = False
        self.interrupted = False
        # The server's failure cut this reply off: shown as it was, not in the model's view.
        self.cut_off = False
        # Where the parts after the first start, and the rows showing them, in order. Both
        # are replaced, never changed in place, so every row starts with the same empty
        # lists (three lists a row were a tenth of a long session's rows).
        self.cuts: list[Cut] = _NO_CUTS
        self.segments: list[MessageSegmentRow] = _NO_SEGMENTS
        # The line breaks in each part, when the replay counted them beforehand (else None).
        self.part_lines: list[int] | None = None

    @property
    def text(self) -> str:
        """The whole message as received so far (Markdown source)."""
        if self._pending:
            self._text += "".join(self._pending)
            self._pending = None
        return self._text

    def set_text(self, text: str) -> None:
        self._pending = None
        if text != self._text:
            if self.cuts and not text.startswith(self._text[: self.cuts[-1].offset]):
                self.cuts = []  # another text: its parts are cut anew
            self.part_lines = None
            self._text = text
            self._version += 1
        self._shown = len(text)

    @property
    def shown_end(self) -> int:
        """Where the text shown ends: its length at the last :meth:`render_markdown`."""
        return self._shown

    @property
    def head_source(self) -> str:
        """The Markdown this row's own body shows (the first part of a long message)."""
        text = self._text
        if self.cuts:
            return segment_source(text, self.cuts, 0)
        return text if self._shown >= len(text) else text[: self._shown]

    def sync_segments(self) -> list[TranscriptRow]:
        """Cut the text into its display parts, adding or removing part rows as needed; the
        rows whose part changed (this one included)."""
        text = self.text
        self._shown = len(text)
        known = len(self.cuts)
        if known < len(self.segments):  # the text was replaced: the old parts go
            self._host.remove_rows(self.segments)
            self.segments = []
        if len(text) - (self.cuts[-1].offset if self.cuts else 0) <= SEGMENT_CHARS:
            changed_from = len(self.segments)
        else:
            cuts = display_cuts(text, known=self.cuts)
            if len(cuts) != len(self.cuts):  # new parts: the counted line breaks are stale
                self.part_lines = None
            self.cuts = cuts
            changed_from = min(known, len(self.segments))
        if len(self.cuts) > len(self.segments):
            new = [MessageSegmentRow(self._host, self, number)
                   for number in range(len(self.segments) + 1, len(self.cuts) + 1)]
            self._host.insert_rows_after(self.segments[-1] if self.segments else self, new)
            self.segments = [*self.segments, *new]
        pieces: list[TranscriptRow] = [self, *self.segments]
        return pieces[changed_from:]

    def set_in_context(self, in_context: bool) -> None:
        super().set_in_context(in_context)
        for segment in self.segments:
            segment.set_in_context(in_context)

    def append(self, delta: str) -> None:
        # Joined on the next read: appending to a long string per delta would copy it each time.
        if self._pending is None:
            self._pending = [delta]
        else:
            self._pending.append(delta)
        self._version += 1

    @property
    def dirty(self) -> bool:
        """The text changed since the last :meth:`render_markdown`."""
        return self._version != self._rendered

    def render_markdown(self) -> None:
        """Bring the rendered Markdown up to date (only its open end re-renders when the text
        grew; a row off screen just re-estimates its height). A part's widget renders when
        the layout next measures it: a part that a fast stream pushes off screen in the same
        frame is not rendered for nothing."""
        self._rendered = self._version
        with self._host.hold():  # parts added at once are laid out in one pass
            for row in self.sync_segments():
                if row._widget is not None:
                    row.stale = True
                self._host.row_changed(row)

    def set_interrupted(self) -> None:
        self.interrupted = True
        self._changed(resized=False)

    def set_cut_off(self) -> None:
        """The server stopped in the middle of this reply: it stays as it was shown, out of
        the model's view, until a retry's answer replaces it."""
        self.cut_off = True
        self.streaming = False
        self.set_in_context(False)
        self._changed(resized=False)

    def set_streaming(self, streaming: bool) -> None:
        self.streaming = streaming
        self._changed(resized=False)

    @property
    def code_blocks(self) -> list[str]:
        """The text of each code block, in the order of their copy links."""
        return self.widget.code_blocks  # type: ignore[no-any-return]

    @property
    def body(self) -> RichTextView:
        return self.widget.body  # type: ignore[no-any-return]

    @property
    def copy_button(self) -> QToolButton:
        return self.widget.copy_button  # type: ignore[no-any-return]

    def copy_code(self, index: int) -> None:
        self.widget.copy_code(index)

    def keep_widget(self) -> bool:
        return self.streaming or self.editing or super().keep_widget()

    def estimate_height(self, width: int, metrics: TextMetrics) -> int:
        lines = text_lines(self.head_source, width - 24, metrics) + (3 if self.editing else 0)
        return 40 + lines * metrics.line_height + strip_height(self.attachments, width)

    def set_attachments(self, attachments: list[dict[str, Any]]) -> None:
        """Show these attachments under the message (the core's event says what they are)."""
        if attachments != self.attachments:
            self.attachments = list(attachments)
            self._changed()

    # -- the conversation as a tree: edit, regenerate, switch, fork ------------------------

    def set_branches(self, branches: TurnBranches | None) -> None:
        """Show (or stop showing) ``‹ n/m ›`` for this row's turn."""
        if branches != self.branches:
            self.branches = branches
            self._changed(resized=False)

    @property
    def summary_choice(self) -> str:
        """The ``branch_summary`` setting (never, ask, always): the edit box's checkbox."""
        return self._host.branch_summary

    @property
    def editable(self) -> bool:
        """A user message the core named the turn of: it can be edited (a new branch)."""
        return self.role == "user" and bool(self.turn_id)

    @property
    def regenerable(self) -> bool:
        return self.role == "assistant" and bool(self.turn_id) and not self.streaming

    def start_edit(self) -> None:
        """The row becomes an editor of its text, in place."""
        if self.editable and not self.editing:
            self.editing, self.draft = True, self.text
            self.draft_files = self._files()
            if self.segments:  # the editor holds the whole text: the further parts go
                self._host.remove_rows(self.segments)
                self.cuts, self.segments = _NO_CUTS, _NO_SEGMENTS
            self._changed()

    def cancel_edit(self) -> None:
        if self.editing:
            self.editing, self.draft, self.draft_files = False, None, None
            self._changed()
            self.render_markdown()  # a long message is cut into its parts again
            self._host.keyboard_back()  # the editor had it: typing goes on in the composer

    def submit_edit(self, text: str, carry_summary: bool) -> None:
        """Send ``text`` in place of this message (``ops.EditTurn``): the core makes the new
        branch and the window draws it; an unchanged or empty text only closes the editor."""
        if not self.editing:
            return
        kept = self.draft_files
        files_changed = kept is not None and kept != self._files()
        self.cancel_edit()
        if text.strip() and (text != self.text or files_changed):
            from app.core import ops

            self._host.request_op(ops.EditTurn(
                turn_id=self.turn_id, text=text, carry_summary=carry_summary,
                keep_attachments=kept if files_changed else None,  # None: all of them
            ))

    def _files(self) -> list[str]:
        """The stored names of this message's attachments."""
        return [str(shown.get("file", "")) for shown in self.attachments]

    def request_regenerate(self) -> None:
        if self.regenerable:
            from app.core import ops

            self._host.request_op(ops.RegenerateTurn(turn_id=self.turn_id))

    def request_sibling(self, step: int) -> None:
        """``‹`` (-1) or ``›`` (+1): switch to the sibling branch, in place."""
        branches = self.branches
        if branches is None or not 0 <= branches.index + step < len(branches.siblings):
            return
        from app.core import ops

        self._host.request_op(ops.SwitchBranch(turn_id=branches.siblings[branches.index + step]))

    @property
    def layout_cost(self) -> int:
        """Characters laid out when this row is measured (see ``row_layout``)."""
        return self._shown if not self.cuts else self.cuts[0].offset


class MessageSegmentRow(TranscriptRow):
    """A further part of a long message, shown right below the part before it."""

    __slots__ = ("message", "number")
    joined = True  # no gap above: it continues the message

    def __init__(self, host: RowHost, message: MessageRow, number: int) -> None:
        super().__init__(host)
        self.message = message
        self.number = number  # 1 for the part after the message row's own
        self.in_context = message.in_context

    @property
    def source(self) -> str:
        """The Markdown this part renders."""
        message = self.message
        return segment_source(message.text, message.cuts, self.number, message.shown_end)

    @property
    def shown_text(self) -> str:
        """The part of the message's text this row shows."""
        message = self.message
        return segment_text(message.text, message.cuts, self.number, message.shown_end)

    @property
    def body(self) -> RichTextView:
        return self.widget.body  # type: ignore[no-any-return]

    def keep_widget(self) -> bool:
        streaming = self.message.streaming and self.message.segments[-1:] == [self]
        return streaming or super().keep_widget()

    def estimate_height(self, width: int, metrics: TextMetrics) -> int:
        # From the message's text in place: building each part's source to estimate it
        # copied all of a 50 MB message on the window's thread when it was reopened.
        message = self.message
        text, cuts, number = message.text, message.cuts, self.number
        begin = cuts[number - 1].offset if number > 0 else 0
        end = cuts[number].offset if number < len(cuts) else self.message.shown_end
        per_line = max(20, (width - 24) // metrics.char_width)
        known = message.part_lines
        breaks = known[number] if known is not None else text.count("\n", begin, end)
        lines = breaks + (end - begin) // per_line + 1
        return 12 + lines * metrics.line_height

    @property
    def layout_cost(self) -> int:
        return len(self.shown_text)
