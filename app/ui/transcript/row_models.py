"""The rows of the transcript as plain objects: what each row shows, with no widget code.

A row's state (text, whether it streams, is expanded, is still in the model's context…) lives
here, so a widget can be dropped and rebuilt at any time (``virtual_rows`` gives widgets only
to the rows on screen). This module holds what every row shares (``TranscriptRow``, the
``RowHost`` and ``RowView`` protocols, the text helpers) and the tool, reasoning and notice rows;
the message rows are in ``message_rows``. The widgets (``row_widgets``, and
``compaction_marker`` for the compaction marker) read the row (``sync``) and send the user's
clicks back to it. The widget parts a caller may want (``row.body``, ``row.copy_button``…) are
reached through the row, which builds its widget if it has none at that moment. A row knows its
widget only as a ``RowView``.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

from .attachments.sizes import strip_height

if TYPE_CHECKING:
    from PySide6.QtWidgets import QLabel, QToolButton

    from ..richtext.markdown import MarkdownRenderer
    from .row_layout import TextMetrics

NOT_IN_CONTEXT = "not in the model's context"
MAX_TOOL_TEXT = 20_000  # characters of tool arguments/output shown before cutting
TOOL_IMAGES_INDENT = 26  # a tool's images line up with its details, under its title
_NO_IMAGES: list[dict[str, Any]] = []  # shared by every tool row without images (most)


class RowHost(Protocol):
    """What rows need from the view that shows them."""

    @property
    def renderer(self) -> MarkdownRenderer: ...

    @property
    def images(self) -> Any: ...  # the transcript's ``ImageLoader``

    def widget_for(self, row: Any) -> Any: ...

    def row_changed(self, row: Any) -> None: ...

    def request_undo(self, item_id: str) -> None: ...

    def keyboard_back(self) -> None: ...

    def insert_rows_after(self, row: Any, rows: list[Any]) -> None: ...

    def hold(self) -> AbstractContextManager[Any]: ...

    def remove_rows(self, rows: list[Any]) -> None: ...

    def request_retry(self) -> None: ...

    def request_compact(self, focus: str | None) -> None: ...

    def request_pin(self, row: Any, pinned: bool) -> None: ...

    def request_summary_edit(self, item_id: str, text: str | None) -> None: ...

    def request_op(self, op: Any) -> None: ...

    def turn_of(self, row: Any) -> str: ...

    @property
    def branch_summary(self) -> str: ...


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
    def images(self) -> Any:
        """Where a row's thumbnails (a message's attachments, a tool's images) are decoded and
        kept: the transcript's one ``ImageLoader``."""
        return self._host.images

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

    def fork_turn(self) -> str:
        """The turn a fork from this row's menu ends with ("" when it has none)."""
        return self._host.turn_of(self)

    def request_fork(self) -> None:
        """"Fork into a new conversation" from this row's menu (``ops.ForkSession``)."""
        if turn := self.fork_turn():
            from app.core import ops

            self._host.request_op(ops.ForkSession(turn_id=turn))

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
    """A tool call: name and a short argument line; expands to arguments and output. The
    images its output returned show under the header, expanded or not."""

    __slots__ = ("arguments", "attachments", "call_id", "name", "output", "stopped")
    pinnable = True  # its output, once it has one (carried with its call)

    def __init__(self, host: RowHost, call_id: str, name: str, arguments: str) -> None:
        super().__init__(host)
        self.call_id = call_id
        self.name = name
        self.arguments = arguments
        self.output: str | None = None
        self.stopped = False
        # The images the output returned, as the core's event shows them (name, size, path,
        # missing): thumbnails the way a message shows its attachments.
        self.attachments: list[dict[str, Any]] = _NO_IMAGES

    def set_attachments(self, images: list[dict[str, Any]]) -> None:
        if images != self.attachments:
            self.attachments = list(images)
            self._changed()

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
        images = strip_height(self.attachments, width - TOOL_IMAGES_INDENT)
        if not self.expanded:
            return metrics.line_height + 16 + images
        text = self.arguments + (self.output or "")
        return 60 + images + text_lines(text[:MAX_TOOL_TEXT * 2], width - 40, metrics) * (
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

    __slots__ = (
        "compaction_id", "details", "details_shown", "kind", "message", "retry_turn_id",
        "turn_id", "undo_op",
    )

    def __init__(self, host: RowHost, kind: str, message: str) -> None:
        super().__init__(host)
        self.kind = kind
        self.message = message
        self.details = ""  # the technical detail behind an error, shown on demand
        self.details_shown = False
        self.retry_turn_id: str | None = None  # the failed turn Retry would run again
        self.turn_id: str | None = None  # the turn an error line belongs to (when live)
        self.undo_op: Any | None = None  # the op Undo on this line asks for (none: no Undo)
        self.compaction_id = ""  # the compaction a warning is about (it goes when undone)

    def set_retry(self, turn_id: str | None) -> None:
        """Offer Retry on this error (the core said ``turn_id`` can run again), or stop."""
        if turn_id != self.retry_turn_id:
            self.retry_turn_id = turn_id
            self._changed()

    def request_retry(self) -> None:
        if self.retry_turn_id is not None:
            self._host.request_retry()

    def set_undo(self, op: Any | None) -> None:
        """Offer Undo on this line, asking the core for ``op``, or stop offering it."""
        if op != self.undo_op:
            self.undo_op = op
            self._changed()

    def request_undo(self) -> None:
        if self.undo_op is not None:
            self._host.request_op(self.undo_op)

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
