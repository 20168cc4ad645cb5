"""The rows of the transcript as plain objects: what each row shows, with no widget code.

A row's state (text, whether it streams, is expanded, is still in the model's context…) lives
here, so a widget can be dropped and rebuilt at any time (``virtual_rows`` gives widgets only
to the rows on screen). The widgets (``row_widgets``, and ``compaction_marker`` for the
compaction marker) read the row (``sync``) and send the user's clicks back to it. The widget
parts a caller may want (``row.body``, ``row.copy_button``…) are reached through the row, which
builds its widget if it has none at that moment. A row knows its widget only as a ``RowView``.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

from ..text.long_text import SEGMENT_CHARS, Cut, display_cuts, segment_source, segment_text

if TYPE_CHECKING:
    from PySide6.QtWidgets import QLabel, QToolButton

    from ..richtext.markdown import MarkdownRenderer
    from ..style.widgets import RichTextView
    from .row_layout import TextMetrics

NOT_IN_CONTEXT = "not in the model's context"
MAX_TOOL_TEXT = 20_000  # characters of tool arguments/output shown before cutting


class RowHost(Protocol):
    """What rows need from the view that shows them."""

    @property
    def renderer(self) -> MarkdownRenderer: ...

    def widget_for(self, row: Any) -> Any: ...

    def row_changed(self, row: Any) -> None: ...

    def request_undo(self, item_id: str) -> None: ...

    def insert_rows_after(self, row: Any, rows: list[Any]) -> None: ...

    def hold(self) -> AbstractContextManager[Any]: ...

    def remove_rows(self, rows: list[Any]) -> None: ...

    def request_retry(self) -> None: ...

    def request_compact(self, focus: str | None) -> None: ...

    def request_pin(self, row: Any, pinned: bool) -> None: ...

    def request_summary_edit(self, item_id: str, text: str | None) -> None: ...


class RowView(Protocol):
    """What a row needs of the widget showing it (``row_widgets`` builds them; the rows never
    know the widget classes)."""

    def apply_context(self) -> None: ...

    def sync(self) -> None: ...

    def has_focus_within(self) -> bool: ...


class TextView(RowView, Protocol):
    """The widget of a message or of a further part of one: it renders the text again."""

    def render_text(self) -> None: ...


def clip(text: str, limit: int = MAX_TOOL_TEXT) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit} more characters not shown)"


def pretty_arguments(arguments: str) -> str:
    import json  # not needed before the window's first paint

    try:
        return json.dumps(json.loads(arguments), indent=2, ensure_ascii=False)
    except (ValueError, TypeError):
        return arguments


def one_line(text: str, limit: int = 80) -> str:
    line = " ".join(text[: limit * 4].split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def text_lines(text: str, width: int, metrics: TextMetrics) -> int:
    """About how many lines ``text`` wraps to at ``width`` pixels (for height estimates)."""
    per_line = max(20, width // metrics.char_width)
    return text.count("\n") + len(text) // per_line + 1


# ---------------------------------------------------------------------------------- rows

_NO_CUTS: list[Cut] = []  # shared by every message row without parts (never changed)
_NO_SEGMENTS: list[MessageSegmentRow] = []


class TranscriptRow:
    """Base of every row: whether it is still in the model's context (dimmed if not)."""

    joined = False  # True: the row continues the one above it (no gap between them)

    __slots__ = (
        "_host", "_widget", "height", "in_context", "index", "measured_width", "pin_key",
        "pin_note", "stale",
    )
    pinnable = False  # a message or a tool output: the user can pin it

    def __init__(self, host: RowHost) -> None:
        self._host = host
        self._widget: RowView | None = None
        self.in_context = True
        self.pin_key = ""  # the core's key for this row's pin; "" when not pinned
        self.pin_note = ""  # what the core said when it was pinned
        self.index = 0
        self.height = 0
        self.measured_width = -1
        # The widget shows an older text: it renders the new one when it is next laid out or
        # used (``TranscriptView.widget_for``), so a part pushed off screen is not rendered.
        self.stale = False

    @property
    def widget(self) -> Any:
        """The row's widget (built now if the row is off screen and has none)."""
        return self._host.widget_for(self)

    @property
    def context_tag(self) -> QLabel:
        return self.widget.context_tag  # type: ignore[no-any-return]

    def set_in_context(self, in_context: bool) -> None:
        """Dim the row (and show the label) when the model no longer sees it."""
        if in_context == self.in_context:
            return
        self.in_context = in_context
        if self._widget is not None:
            self._widget.apply_context()
            # The tag beside the text takes room: the text may wrap onto another line.
            self._host.row_changed(self)

    def keep_widget(self) -> bool:
        """True while the widget must survive off screen (the user is working in it)."""
        return self._widget is not None and self._widget.has_focus_within()

    @property
    def pinned(self) -> bool:
        return bool(self.pin_key)

    def set_pinned(self, key: str, note: str = "") -> None:
        """The core pinned this row's message (``key``), or unpinned it (``""``)."""
        if (key, note) != (self.pin_key, self.pin_note):
            self.pin_key, self.pin_note = key, note
            self._changed(resized=False)

    def request_pin(self, pinned: bool) -> None:
        """The user asked to pin (or unpin) this row: the core decides."""
        self._host.request_pin(self, pinned)

    @property
    def pin_button(self) -> QToolButton:
        return self.widget.pin_button  # type: ignore[no-any-return]

    @property
    def pin_tag(self) -> QLabel:
        return self.widget.pin_tag  # type: ignore[no-any-return]

    def _changed(self, resized: bool = True) -> None:
        if self._widget is not None:
            self._widget.sync()
        if resized:
            self._host.row_changed(self)

    def estimate_height(self, width: int, metrics: TextMetrics) -> int:
        return 2 * metrics.line_height + 16


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
        "_pending", "_rendered", "_shown", "_text", "_version", "cuts", "interrupted", "item_id",
        "part_lines", "role", "segments", "streaming",
    )
    pinnable = True

    def __init__(self, host: RowHost, role: str, text: str = "", item_id: str = "") -> None:
        super().__init__(host)
        self.role = role
        self.item_id = item_id
        self._text = text
        self._shown = len(text)  # the text's length at the last render: what widgets show
        self._pending: list[str] | None = None  # deltas not yet joined into _text
        self._version = 0
        self._rendered = 0
        self.streaming = False
        self.interrupted = False
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
        return self.streaming or super().keep_widget()

    def estimate_height(self, width: int, metrics: TextMetrics) -> int:
        return 40 + text_lines(self.head_source, width - 24, metrics) * metrics.line_height

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


class ExpandableRow(TranscriptRow):
    """A one-line header that expands to details (tool calls, reasoning)."""

    __slots__ = ("expanded",)

    def __init__(self, host: RowHost) -> None:
        super().__init__(host)
        self.expanded = False

    def set_expanded(self, expanded: bool) -> None:
        if expanded != self.expanded:
            self.expanded = expanded
            self._changed()

    @property
    def toggle(self) -> QToolButton:
        return self.widget.toggle  # type: ignore[no-any-return]

    @property
    def title_label(self) -> QLabel:
        return self.widget.title_label  # type: ignore[no-any-return]

    @property
    def detail_label(self) -> QLabel:
        return self.widget.detail_label  # type: ignore[no-any-return]

    @property
    def status_label(self) -> QLabel:
        return self.widget.status_label  # type: ignore[no-any-return]


class ToolRow(ExpandableRow):
    """A tool call: name and a short argument line; expands to arguments and output."""

    __slots__ = ("arguments", "call_id", "name", "output", "stopped")
    pinnable = True  # its output, once it has one (carried with its call)

    def __init__(self, host: RowHost, call_id: str, name: str, arguments: str) -> None:
        super().__init__(host)
        self.call_id = call_id
        self.name = name
        self.arguments = arguments
        self.output: str | None = None
        self.stopped = False

    def set_arguments(self, arguments: str) -> None:
        self.arguments = arguments
        self._changed()

    def set_output(self, output: str) -> None:
        self.output = output
        self._changed()

    def set_stopped(self) -> None:
        if self.output is None:
            self.stopped = True
            self._changed(resized=False)

    @property
    def status_text(self) -> str:
        if self.output is None:
            return "stopped" if self.stopped else "running…"
        lines = self.output.count("\n") + 1 if self.output else 0
        return f"done · {lines} line{'s' if lines != 1 else ''}"

    @property
    def arguments_label(self) -> QLabel:
        return self.widget.arguments_label  # type: ignore[no-any-return]

    @property
    def output_label(self) -> QLabel:
        return self.widget.output_label  # type: ignore[no-any-return]

    def estimate_height(self, width: int, metrics: TextMetrics) -> int:
        if not self.expanded:
            return metrics.line_height + 16
        text = self.arguments + (self.output or "")
        return 60 + text_lines(text[:MAX_TOOL_TEXT * 2], width - 40, metrics) * (
            metrics.line_height
        )


class ReasoningRow(ExpandableRow):
    """The model's reasoning summary, collapsed by default."""

    __slots__ = ("text",)

    def __init__(self, host: RowHost, text: str) -> None:
        super().__init__(host)
        self.text = text

    def estimate_height(self, width: int, metrics: TextMetrics) -> int:
        if not self.expanded:
            return metrics.line_height + 16
        return 30 + text_lines(self.text, width - 40, metrics) * metrics.line_height


class NoticeRow(TranscriptRow):
    """An inline error, warning, background or reconnect line, in its own colour."""

    __slots__ = ("details", "details_shown", "kind", "message", "retry_turn_id", "turn_id")

    def __init__(self, host: RowHost, kind: str, message: str) -> None:
        super().__init__(host)
        self.kind = kind
        self.message = message
        self.details = ""  # the technical detail behind an error, shown on demand
        self.details_shown = False
        self.retry_turn_id: str | None = None  # the failed turn Retry would run again
        self.turn_id: str | None = None  # the turn an error line belongs to (when live)

    def set_retry(self, turn_id: str | None) -> None:
        """Offer Retry on this error (the core said ``turn_id`` can run again), or stop."""
        if turn_id != self.retry_turn_id:
            self.retry_turn_id = turn_id
            self._changed()

    def request_retry(self) -> None:
        if self.retry_turn_id is not None:
            self._host.request_retry()

    def set_message(self, message: str) -> None:
        self.message = message
        self._changed()

    def set_details(self, details: str) -> None:
        """The technical detail behind the message (a "Details" toggle shows it)."""
        self.details = details
        self._changed()

    def set_details_shown(self, shown: bool) -> None:
        if shown != self.details_shown:
            self.details_shown = shown
            self._changed()

    @property
    def label(self) -> QLabel:
        return self.widget.label  # type: ignore[no-any-return]

    def estimate_height(self, width: int, metrics: TextMetrics) -> int:
        height = 14 + text_lines(self.message, width - 40, metrics) * metrics.line_height
        if self.details and self.details_shown:
            height += 8 + text_lines(clip(self.details), width - 40, metrics) * metrics.line_height
        return height

