"""The transcript: one row per message, tool call, notice or compaction marker.

The rows are plain objects (``row_models``, ``compaction_row``); only those on screen have
widgets (the view is a ``VirtualRowArea``), so a session of ten thousand messages opens as fast
as a short one and costs little more memory than its text; a long message is shown in parts
(``long_text``) for the same reason. Streaming text is buffered and re-rendered at most once per
frame (less often when rendering costs more: ``STREAM_PACE``), only the open end of the
Markdown is rendered again, and only the parts on screen are built, one per pass. The view
follows the bottom unless the user scrolled up. It renders core events (``handle_event``), live
or replayed for a reopened session (``replay``), and never touches the history itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QTimer, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QWidget

from ..controller.format import STAGE_TEXT, retry_detail, retry_text
from ..controller.replay_prep import data_text, forget_prepared, prepared_cuts
from ..controller.waits import countdown_text, opening_text, stall_text, waited_text
from ..runtime.qt_namespace import set_enum_property
from ..style.theme import colors, pygments_style_name
from ..text.long_text import SEGMENT_CHARS
from .compaction_marker import REMOTE_SUMMARY_TEXT, CompactionRowWidget
from .compaction_row import CompactionRow
from .message_rows import MessageRow, MessageSegmentRow
from .row_models import NOT_IN_CONTEXT, NoticeRow, ReasoningRow, ToolRow, TranscriptRow
from .row_widget_base import RowWidget
from .row_widgets import row_widget
from .virtual_rows import VirtualRowArea

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from app.core import OpenProgress
    from app.core import protocol as p

    from ..richtext.markdown import MarkdownRenderer

__all__ = [
    "NOT_IN_CONTEXT",
    "REMOTE_SUMMARY_TEXT",
    "CompactionRow",
    "MessageRow",
    "NoticeRow",
    "ReasoningRow",
    "ToolRow",
    "TranscriptRow",
    "TranscriptView",
]

FRAME_MS = 33
MAX_FRAME_MS = 250
# Rendering a stream takes at most about one part in this many of the window's thread: the
# next render waits this many times as long as rendering took since the last one (at least a
# frame). A reply arriving faster than anyone reads is shown less often, and what scrolled past
# between two renders is never built at all; at reading speed (a render of the open end costs
# about a millisecond) every frame is rendered. The painting of what a render built comes on
# top of it, hence 20 rather than 12: a stream of 60 000 deltas a second, rendered 7 times a
# second, took 1.23-1.32 times as long as the bare client; 4-5 times a second, 1.15-1.2 times.
STREAM_PACE = 20
TICK_MS = 1000  # a wait's countdown (or a stall's count) moves on each second
OPENING_TICK_MS = 100
OPENING_SHOWN_AFTER = 0.5  # seconds: a quicker open shows no progress
# Events that show the turn moving on: a retry wait that was counting down is over.
_RETRY_OVER = frozenset(
    {"agent_message_delta", "item_started", "item_completed", "stream_waiting", "error"}
)
EMPTY_TEXT = (
    "Ask anything to start.\n\n"
    "Type / for commands: /compact [focus] summarises the conversation to free context, "
    "/undo-compact puts it back. The gauge in the status bar shows how full the context is."
)


# Plain classes, not dataclasses: this module is loaded before the window's first paint, where
# creating a dataclass costs compiling its methods.
class _RetryWait:
    """A retry wait being counted down on the reconnect row."""

    def __init__(
        self, row: NoticeRow, attempt_text: str, reason: str, wait: float,
        requested: float | None, deadline: float,
    ) -> None:
        self.row = row
        self.attempt_text = attempt_text
        self.reason = reason
        self.wait = wait
        self.requested = requested
        self.deadline = deadline


class _Stall:
    """A stall being counted on its row: ``started`` is when the server last sent data."""

    def __init__(self, row: NoticeRow, started: float, timeout: float | None) -> None:
        self.row = row
        self.started = started
        self.timeout = timeout


class TranscriptView(VirtualRowArea):
    """The scrolling list of rows; feed it core events with ``handle_event``."""

    undo_requested = Signal(str)
    retry_requested = Signal()
    compact_requested = Signal(object)  # a failed compaction's Retry: its focus (or None)
    # An op the user asked for from a row (pin, unpin, edit or un-edit a summary).
    op_requested = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Transcript")
        self.setToolTip("")
        self._renderer: MarkdownRenderer | None = None  # built on first use (imports are slow)
        # While a replay's rows wait for their layout (``finish_replay``): the hold on it.
        self._replay_hold: AbstractContextManager[Any] | None = None
        self.empty_label = QLabel(EMPTY_TEXT, self.viewport())
        self.empty_label.setWordWrap(True)
        set_enum_property(self.empty_label, "alignment", "AlignCenter")  # before the first paint
        self.empty_label.setStyleSheet(f"color: {colors().muted}; padding: 40px;")

        self._messages: dict[str, MessageRow] = {}
        self._tools: dict[str, ToolRow] = {}
        self._compactions: dict[str, CompactionRow] = {}
        self._streaming: MessageRow | None = None
        # Replies streaming in the current attempt, by item id: their text is not saved until
        # the item completes, and a retried attempt replaces them.
        self._partial: dict[str, MessageRow] = {}
        self._reconnect: NoticeRow | None = None
        self._turn_id: str | None = None

        # Streaming text is re-rendered on this timer, never per delta.
        self._flush_timer = QTimer(self)
        self._flush_timer.setInterval(FRAME_MS)
        self._flush_timer.timeout.connect(self.flush)
        self.render_count = 0  # renders of streaming rows, for tests and diagnostics
        self._stream_work = 0.0  # seconds spent showing the stream since the last render
        self.work_clock: Callable[[], float] = time.perf_counter  # times that work

        # Waits count on locally from the core's figures, once a second (``tick_waits``).
        self.clock: Callable[[], float] = time.monotonic
        self._retry_wait: _RetryWait | None = None
        self._stall: _Stall | None = None
        self._wait_timer = QTimer(self)
        self._wait_timer.setInterval(TICK_MS)
        self._wait_timer.timeout.connect(self.tick_waits)

        # While a session opens: its progress, polled (the core reports from a thread).
        self._opening: OpenProgress | None = None
        self._opening_since = 0.0
        self._opening_shown = ""
        self._opening_timer = QTimer(self)
        self._opening_timer.setInterval(OPENING_TICK_MS)
        self._opening_timer.timeout.connect(self.tick_opening)

    @property
    def renderer(self) -> MarkdownRenderer:
        """The Markdown renderer for the current palette."""
        if self._renderer is None:
            from ..richtext.markdown import MarkdownRenderer

            self._renderer = MarkdownRenderer(colors(), pygments_style_name())
        return self._renderer

    def create_row_widget(self, row: TranscriptRow) -> RowWidget:
        """The widget that shows ``row`` (rows themselves hold no widget code)."""
        if isinstance(row, CompactionRow):
            return CompactionRowWidget(row, self.renderer, self.viewport())
        return row_widget(row, self.renderer, self.viewport())

    def widget_for(self, row: Any) -> Any:
        """``row``'s widget, showing the row's current text (see ``TranscriptRow.stale``)."""
        if row._widget is None:
            row.stale = False  # a new widget renders the current text
        widget = super().widget_for(row)
        if row.stale:
            row.stale = False
            widget.render_text()
        return widget

    def insert_rows_after(self, row: TranscriptRow, rows: list[TranscriptRow]) -> None:
        """Put ``rows`` right below ``row`` (the further parts of a long message)."""
        self.insert_rows(row.index + 1, rows)

    def remove_rows(self, rows: list[TranscriptRow]) -> None:
        with self.hold():
            for row in rows:
                self.remove_row(row)

    def request_undo(self, item_id: str) -> None:
        """A marker's Undo button was clicked."""
        self.undo_requested.emit(item_id)

    def request_retry(self) -> None:
        """An error's Retry button was clicked."""
        self.retry_requested.emit()

    def request_compact(self, focus: str | None) -> None:
        """A failed compaction's Retry button was clicked."""
        self.compact_requested.emit(focus)

    def request_pin(self, row: TranscriptRow, pinned: bool) -> None:
        """A row's Pin (or Unpin) was clicked: the op names the row; the core decides."""
        from app.core import ops

        if isinstance(row, ToolRow):
            op = ops.PinItem(
                pinned=pinned, key=row.pin_key, kind="function_call_output", row_id=row.call_id
            )
        elif isinstance(row, MessageRow):
            kind = "user_message" if row.role == "user" else "agent_message"
            op = ops.PinItem(
                pinned=pinned, key=row.pin_key, kind=kind, row_id=row.item_id, text=row.text
            )
        else:
            return
        self.op_requested.emit(op)

    def request_summary_edit(self, item_id: str, text: str | None) -> None:
        """A marker's summary was edited (``text``), or its edit undone (``None``)."""
        from app.core import ops

        if text is None:
            self.op_requested.emit(ops.UndoSummaryEdit(item_id=item_id))
        else:
            self.op_requested.emit(ops.EditSummary(item_id=item_id, text=text))

    # -- rows -------------------------------------------------------------------------------

    def relayout(self) -> None:
        super().relayout()
        if not self._hold:
            self.empty_label.setVisible(not self.rows)
            if not self.rows:
                self.empty_label.setGeometry(self.viewport().rect())

    def _add(self, row: TranscriptRow) -> TranscriptRow:
        return self.append_row(row)  # type: ignore[no-any-return]

    def clear(self) -> None:
        """Remove every row (another session is being shown)."""
        self._flush_timer.stop()
        self._wait_timer.stop()
        self._retry_wait = None
        self._stall = None
        self._messages.clear()
        self._tools.clear()
        self._compactions.clear()
        self._streaming = None
        self._partial.clear()
        self._reconnect = None
        self._turn_id = None
        self.clear_rows()

    def message_rows(self, role: str | None = None) -> list[MessageRow]:
        return [r for r in self.rows if isinstance(r, MessageRow) and (role is None or r.role == role)]

    def compaction_rows(self) -> list[CompactionRow]:
        return list(self._compactions.values())  # in row order: markers are only appended

    def notice_rows(self, kind: str | None = None) -> list[NoticeRow]:
        return [r for r in self.rows if isinstance(r, NoticeRow) and (kind is None or r.kind == kind)]

    def tool_rows(self) -> list[ToolRow]:
        return [r for r in self.rows if isinstance(r, ToolRow)]

    def show_match(self, match: p.ConversationMatch) -> TranscriptRow | None:
        """Scroll to the row of a match the core found (a tool call by its id, a message by a
        piece of its text); None when it has no row here (a compaction summary)."""
        row: TranscriptRow | None = None
        if match.call_id:
            row = self._tools.get(match.call_id)
        elif match.role in ("user", "assistant") and match.anchor:
            row = next((r for r in self.message_rows(match.role) if match.anchor in r.text), None)
        if row is not None:
            self.scroll_to_row(row)
        return row

    def add_message(self, role: str, text: str, item_id: str = "") -> MessageRow:
        if item_id and item_id in self._messages:
            row = self._messages[item_id]
            # A message arrives twice (started, then completed), mostly unchanged: rendering
            # the same text again would only measure its parts on screen again.
            if row.dirty or row.shown_end != len(text) or row.text != text:
                row.set_text(text)
                row.render_markdown()
            return row
        row = MessageRow(self, role, text, item_id)
        if item_id:
            self._messages[item_id] = row
        if len(text) <= SEGMENT_CHARS:
            self._add(row)
            return row
        # A long message is shown in parts, each laid out only when on screen, the first of
        # them a pass later: not in the block that received the message (in a replay the
        # replay's own pass lays them out).
        row.cuts, row.part_lines = prepared_cuts(text)
        with self.lazy(), self.hold():
            self._add(row)
            row.sync_segments()
        return row

    def add_notice(self, kind: str, message: str) -> NoticeRow:
        row = NoticeRow(self, kind, message)
        self._add(row)
        return row

    def add_tool_call(self, call_id: str, name: str, arguments: str) -> ToolRow:
        if call_id and call_id in self._tools:
            row = self._tools[call_id]
            row.set_arguments(arguments)
            return row
        row = ToolRow(self, call_id, name, arguments)
        self._add(row)
        if call_id:
            self._tools[call_id] = row
        return row

    def set_tool_output(self, call_id: str, output: str) -> None:
        row = self._tools.get(call_id)
        if row is None:
            row = self.add_tool_call(call_id, "tool", "")
        row.set_output(output)

    def begin_compaction(
        self, item_id: str, automatic: bool, before: TranscriptRow | None = None
    ) -> CompactionRow:
        """The marker row of a compaction, at the end (or just above ``before``)."""
        row = self._compactions.get(item_id)
        if row is None:
            row = CompactionRow(self, item_id, automatic)
            if before is not None and before in self.rows:
                self.insert_rows(before.index, [row])
            else:
                self._add(row)
            self._compactions[item_id] = row
        return row

    def complete_compaction(self, event: p.ContextCompacted, *, dim: bool = True) -> None:
        """Fill in a marker's figures and dim every row above it, except the user messages the
        core says the model still sees (``event.in_view``: kept verbatim, or put back)."""
        row = self.begin_compaction(event.item_id, event.trigger != "manual")
        still_seen = set(event.in_view)
        for other in self._compactions.values():
            if other is not row:
                other.set_undoable(False)
                other.set_editable(False)  # a later compaction replaced its summary
        row.complete(event, undoable=event.undoable)
        if dim and row.state == "done":
            above = self.rows[: row.index]
            row.dimmed = [(r, r.in_context) for r in above]
            with self.hold():  # rows re-measured with their tags, laid out once
                for other in above:
                    # A long message is drawn in parts: each part is as much in view as its message.
                    message = other.message if isinstance(other, MessageSegmentRow) else other
                    if getattr(message, "role", None) == "user" and message.text in still_seen:
                        continue
                    if message.pin_key and message.pin_key in event.carried_pins:
                        other.set_in_context(True)  # pinned: carried verbatim before the summary
                        continue
                    other.set_in_context(False)

    def _drop_running_compactions(self, reason: str) -> None:
        for row in self._compactions.values():
            if row.state == "running":
                row.mark_stopped(reason)

    # -- streaming --------------------------------------------------------------------------

    def _stream_row(self, item_id: str) -> MessageRow:
        row = self._messages.get(item_id)
        if row is None:
            row = self.add_message("assistant", "", item_id)
        if not row.streaming:
            row.set_streaming(True)
        self._streaming = row
        self._partial[item_id] = row
        return row

    def append_delta(self, item_id: str, delta: str) -> None:
        self._stream_row(item_id).append(delta)
        if not self._flush_timer.isActive():
            self._flush_timer.start()

    def flush(self) -> None:
        """Render the streaming row if its text changed (at most once per frame)."""
        row = self._streaming
        if row is None or not row.dirty:
            self._flush_timer.stop()
            return
        started = self.work_clock()
        # The parts the render changed are built and measured by the next passes (one each,
        # see ``layout_budget``), not in the render's own block.
        with self.lazy():
            row.render_markdown()
        self.render_count += 1
        spent_ms = (self._stream_work + self.work_clock() - started) * 1000
        self._stream_work = 0.0
        self._flush_timer.setInterval(int(min(MAX_FRAME_MS, max(FRAME_MS, spent_ms * STREAM_PACE))))

    @property
    def render_interval_ms(self) -> int:
        """How long the next render of the streaming text waits (see ``STREAM_PACE``)."""
        return self._flush_timer.interval()

    def layout_budget(self) -> int:
        if self._streaming is not None and self.follow_bottom:
            # Following a stream: one part laid out per pass, so a frame that brings several
            # screens of text is shown over several short passes, not one long block.
            return 1
        return super().layout_budget()

    def _visible_rows(self, value: int) -> list[Any]:
        rows = super()._visible_rows(value)
        if self._streaming is not None and self.follow_bottom and rows:
            # Following a stream, the rows just above the screen are not built ahead: what
            # arrives pushes them further up before anyone could scroll to them (scrolling up
            # stops the following, and they are built as they come on screen).
            tops = self._tops
            rows = [row for row in rows if tops[row.index] + row.height > value]
        return rows

    def resizeEvent(self, event: QResizeEvent) -> None:
        if self._deferred or (self._streaming is not None and self.follow_bottom):
            # While a layout goes on over several passes (a long message coming on screen, a
            # stream followed: a part per pass), what a new width needs (the scroll bar
            # appearing as a long message first fills the view) is laid out by the next
            # pass, not in the block of the resize.
            with self.lazy():
                super().resizeEvent(event)
            return
        super().resizeEvent(event)

    def _continue_layout(self) -> None:
        # Parts of the stream coming on screen a pass after its render count as its work.
        started = self.work_clock()
        super()._continue_layout()
        if self._streaming is not None:
            self._stream_work += self.work_clock() - started

    def _finish_stream(self, interrupted: bool = False) -> None:
        """The turn ended: no row streams any more (those cut short are marked)."""
        self._flush_timer.stop()
        rows = list(self._partial.values())
        if self._streaming is not None and self._streaming not in rows:
            rows.append(self._streaming)
        for row in rows:
            row.render_markdown()
            if interrupted:
                row.set_interrupted()
            row.set_streaming(False)
        self._partial.clear()
        self._streaming = None

    def _finish_item(self, row: MessageRow) -> None:
        """``row``'s item completed: its text is final."""
        self._partial.pop(row.item_id, None)
        # Rendered only if the text changed since the last render: the reply's final text
        # arrives twice (item_completed, then agent_message), and a render of an unchanged
        # text still re-measured the row's parts (6 ms at the end of a long reply). Rendered
        # as the stream's last frame (one part laid out per pass, see ``layout_budget``): the
        # parts the end of the text adds come on screen over the next passes.
        if row.dirty:
            with self.lazy():
                row.render_markdown()
        if row is self._streaming:
            self._flush_timer.stop()
            self._streaming = None
        if row.streaming:
            row.set_streaming(False)

    def _discard_partial(self) -> None:
        """The core retries the stream: what the failed attempt streamed was never saved and
        the retry sends the reply again (maybe under the same item id), so its rows go."""
        if not self._partial:
            return
        self._flush_timer.stop()
        for item_id, row in self._partial.items():
            self._messages.pop(item_id, None)
            self.remove_rows([*row.segments, row])
        self._partial.clear()
        self._streaming = None

    # -- events -----------------------------------------------------------------------------

    def handle_event(self, event: p.Event) -> None:
        """Render one core event (those that concern the transcript; others are ignored)."""
        if self._retry_wait is not None and event.type in _RETRY_OVER:
            self._end_retry_wait()
        if event.type == "agent_message_delta":  # the most frequent first
            self._on_agent_message_delta(event)
        elif event.type == "item_completed":  # the most frequent in a replay
            self._on_item_completed(event)
        elif event.type == "turn_started":
            self._on_turn_started(event)
        elif event.type == "undo_available":
            self._on_undo_available(event)
        elif event.type == "item_started":
            self._on_item_started(event)
        elif event.type == "agent_message":
            self._on_agent_message(event)
        elif event.type == "context_compacted":
            self._on_context_compacted(event)
        elif event.type == "compaction_progress":
            self._on_compaction_progress(event)
        elif event.type == "compaction_undone":
            self._on_compaction_undone(event)
        elif event.type == "compaction_ended":
            self._on_compaction_ended(event)
        elif event.type == "background":
            self._on_background(event)
        elif event.type == "message_not_sent":
            self._on_message_not_sent(event)
        elif event.type == "warning":
            self._on_warning(event)
        elif event.type == "error":
            self._on_error(event)
        elif event.type == "stream_error":
            self._on_stream_error(event)
        elif event.type == "turn_complete":
            self._on_turn_complete(event)
        elif event.type == "retry_available":
            self._on_retry_available(event)
        elif event.type == "stream_waiting":
            self._on_stream_waiting(event)
        elif event.type == "item_pinned":
            self._on_item_pinned(event)
        elif event.type == "summary_edited":
            self._on_summary_edited(event)

    def _on_turn_started(self, event: p.TurnStarted) -> None:
        self._turn_id = event.turn_id
        self._reconnect = None
        for row in self._compactions.values():
            row.offer_retry(False)  # something newer runs: an earlier failure is history

    def _on_undo_available(self, event: p.UndoAvailable) -> None:
        """The core says which compaction Undo would undo now; only its marker offers it."""
        for row in self._compactions.values():
            row.set_undoable(row.item_id == event.item_id)

    def _on_item_started(self, event: p.ItemStarted) -> None:
        item = event.item
        if item.kind == "context_compaction":
            trigger = item.data.get("trigger", "manual")
            # The server compacts inside a response whose answer was already streaming: the
            # marker goes above that answer, where the rollout (and a reopened session) has it.
            before = self._streaming if trigger == "server" else None
            self.begin_compaction(item.id, trigger != "manual", before)
        elif item.kind == "user_message":
            self.add_message("user", data_text(item.data), item.id)
        elif item.kind == "agent_message":
            self._stream_row(item.id)
        elif item.kind == "function_call":
            self._add_function_call(item)

    def _on_item_completed(self, event: p.ItemCompleted) -> None:
        item = event.item
        data = item.data
        if item.kind == "user_message":
            row = self.add_message("user", data_text(data), item.id)
            if data.get("not_sent"):
                row.set_in_context(False)
            if data.get("pinned"):
                row.set_pinned(str(data["pinned"]))
        elif item.kind == "agent_message":
            text = data_text(data)
            reply = self._messages.get(item.id)
            if reply is None:
                reply = self.add_message("assistant", text, item.id)
            elif text:
                reply.set_text(text)
            self._finish_item(reply)
            if data.get("interrupted"):
                reply.set_interrupted()
            if data.get("pinned"):
                reply.set_pinned(str(data["pinned"]))
        elif item.kind == "function_call":
            self._add_function_call(item)
        elif item.kind == "function_call_output":
            call_id = str(data.get("call_id", item.id))
            output = data.get("output", "")
            if not isinstance(output, str):
                import json  # not needed before the window's first paint

                output = json.dumps(output)
            self.set_tool_output(call_id, output)
            if data.get("pinned"):
                self._tools[call_id].set_pinned(str(data["pinned"]))
        elif item.kind == "reasoning":
            text = data_text(data) or str(data.get("summary", "") or "")
            if text.strip():
                self._add(ReasoningRow(self, text))

    def _add_function_call(self, item: p.TurnItem) -> None:
        data = item.data
        self.add_tool_call(
            str(data.get("call_id", item.id)),
            str(data.get("name", "tool")),
            str(data.get("arguments", "")),
        )

    def _on_agent_message_delta(self, event: p.AgentMessageDelta) -> None:
        self.append_delta(event.item_id, event.delta)

    def _on_agent_message(self, event: p.AgentMessage) -> None:
        row = self._messages.get(event.item_id)
        if row is None:
            self.add_message("assistant", event.text, event.item_id)
            return
        row.set_text(event.text)
        self._finish_item(row)

    def _on_context_compacted(self, event: p.ContextCompacted) -> None:
        self.complete_compaction(event)

    def _on_item_pinned(self, event: p.ItemPinned) -> None:
        """The core pinned (or unpinned) a row's message: the row shows it."""
        row: TranscriptRow | None = next(
            (r for r in self.rows if r.pin_key == event.key), None
        )
        if row is None and event.kind == "function_call_output":
            row = self._tools.get(event.row_id)
        elif row is None:
            row = self._messages.get(event.row_id)
        if row is None:
            return
        row.set_pinned(event.key if event.pinned else "", event.message)
        if event.pinned and event.in_view:
            row.set_in_context(True)

    def _on_summary_edited(self, event: p.SummaryEdited) -> None:
        row = self._compactions.get(event.item_id)
        if row is not None:
            row.set_summary(event.summary, edited=event.edited, undoable=event.undoable)

    def _on_compaction_progress(self, event: p.CompactionProgress) -> None:
        text = event.message or STAGE_TEXT.get(event.stage, "")
        for row in self._compactions.values():
            row.set_stage(text)

    def _on_compaction_undone(self, event: p.CompactionUndone) -> None:
        row = self._compactions.get(event.item_id)
        if row is not None:
            row.mark_undone()

    def _on_compaction_ended(self, event: p.CompactionEnded) -> None:
        """A compaction that changed nothing, live or replayed; a live failure (its event
        names its turn) offers Retry."""
        row = self._compactions.get(event.item_id)
        if row is not None:
            row.mark_stopped(f"Compaction {event.status} · nothing changed")
            row.offer_retry(event.status == "failed" and event.turn_id is not None, event.focus)

    def _on_background(self, event: p.Background) -> None:
        self.add_notice("background", event.message)

    def _on_message_not_sent(self, event: p.MessageNotSent) -> None:
        """The core took this message out of the model's view (or never sent it)."""
        for row in reversed(self.message_rows("user")):
            if row.text == event.text:
                row.set_in_context(False)
                break

    def _on_warning(self, event: p.Warning) -> None:
        self.add_notice("warning", event.message)

    def _on_error(self, event: p.Error) -> None:
        row = self.add_notice("error", event.message)
        row.turn_id = event.turn_id
        if event.details:
            row.set_details(event.details)

    def _on_stream_error(self, event: p.StreamError) -> None:
        self._discard_partial()
        self._end_stall()
        self._end_retry_wait()
        # One line per turn that updates in place: "Reconnecting... 2/5 · why · how long".
        attempt_text = retry_text(event.message, event.attempt, event.max_attempts)
        text = retry_detail(
            attempt_text, event.reason, event.wait_seconds, event.requested_seconds
        )
        if self._reconnect is not None and self._reconnect in self.rows:
            self._reconnect.set_message(text)
        else:
            self._reconnect = self.add_notice("stream_error", text)
        wait = event.wait_seconds
        if wait is not None and wait >= 1:
            # A wait worth a countdown: "Retrying in 42 s — why", once a second.
            self._retry_wait = _RetryWait(
                self._reconnect, attempt_text, event.reason, wait, event.requested_seconds,
                self.clock() + wait,
            )
            self.tick_waits()

    def _on_stream_waiting(self, event: p.StreamWaiting) -> None:
        """The server has sent nothing for a while (or sends again): count the wait."""
        if not event.stalled:
            self._end_stall()
            return
        started = self.clock() - event.since_seconds
        if self._stall is not None and self._stall.row in self.rows:
            self._stall.started, self._stall.timeout = started, event.timeout_seconds
        else:
            row = self.add_notice("stream_error", "")
            self._stall = _Stall(row, started, event.timeout_seconds)
        self.tick_waits()

    # -- opening a session -----------------------------------------------------------------

    def watch_opening(self, progress: OpenProgress | None) -> None:
        """A session is being opened: once it takes more than half a second, say how far it
        has got ("Opening session… 12 MB of 50 MB") where its conversation will appear."""
        self._end_opening()
        if progress is None:
            return
        # The sizes the replay's height estimates need, read while the core reads the file:
        # the view's first font costs PySide6 ~1 ms making its types, in the replay's step.
        self._font_metrics()
        self._opening = progress
        self._opening_since = self.clock()
        self._opening_timer.start()

    def tick_opening(self) -> None:
        """Show the open's progress now (its timer calls this every 100 ms)."""
        progress = self._opening
        if progress is None or progress.finished:
            self._end_opening()
            return
        if self.clock() - self._opening_since < OPENING_SHOWN_AFTER:
            return
        text = opening_text(progress.stage, progress.done, progress.total)
        if text != self._opening_shown:
            self._opening_shown = text
            self.empty_label.setText(text)
            self.empty_label.setAccessibleName(text)

    def opening_text(self) -> str:
        """The progress shown while a session opens ("" when none is)."""
        return self._opening_shown

    def _end_opening(self) -> None:
        self._opening_timer.stop()
        self._opening = None
        if self._opening_shown:
            self._opening_shown = ""
            self.empty_label.setText(EMPTY_TEXT)
            self.empty_label.setAccessibleName("")

    # -- waits ------------------------------------------------------------------------------

    def tick_waits(self) -> None:
        """Move the shown waits on to ``clock()``: the retry countdown, the stall count. The
        timer calls it each second while a wait is shown."""
        now = self.clock()
        retry = self._retry_wait
        if retry is not None:
            retry.row.set_message(
                countdown_text(
                    retry.attempt_text, retry.reason, retry.deadline - now, retry.wait,
                    retry.requested,
                )
            )
        stall = self._stall
        if stall is not None:
            stall.row.set_message(stall_text(now - stall.started, stall.timeout))
        if retry is None and stall is None:
            self._wait_timer.stop()
        elif not self._wait_timer.isActive():
            self._wait_timer.start()

    def waiting_text(self) -> str:
        """What the wait rows say now (empty when nothing is awaited), for tests and tools."""
        rows = [wait.row for wait in (self._retry_wait, self._stall) if wait is not None]
        return "\n".join(row.message for row in rows)

    def _end_retry_wait(self, stopped: bool = False) -> None:
        retry = self._retry_wait
        if retry is None:
            return
        self._retry_wait = None
        retry.row.set_message(
            waited_text(retry.attempt_text, retry.reason, retry.wait, retry.requested, stopped)
        )
        self.tick_waits()

    def _end_stall(self) -> None:
        """The stall is over: its row goes (the reply, a retry or an error says the rest)."""
        stall = self._stall
        if stall is None:
            return
        self._stall = None
        if stall.row in self.rows:
            self.remove_rows([stall.row])
        self.tick_waits()

    def _on_retry_available(self, event: p.RetryAvailable) -> None:
        """The core says which failed turn Retry would run again: its error (the last one of
        that turn) offers Retry; every other error stops offering it."""
        errors = self.notice_rows("error")
        for row in errors:
            row.set_retry(None)
        if event.turn_id is not None and errors:
            # The failed turn's own error (a compaction may have failed since, below it).
            own = [row for row in errors if row.turn_id == event.turn_id]
            (own or errors)[-1].set_retry(event.turn_id)

    def _on_turn_complete(self, event: p.TurnComplete) -> None:
        aborted = event.status == "aborted"
        self._end_retry_wait(stopped=aborted)
        self._end_stall()
        self._finish_stream(interrupted=aborted)
        if aborted:
            for row in self.tool_rows():
                row.set_stopped()
            self._drop_running_compactions("Compaction stopped · nothing changed")
        else:
            self._drop_running_compactions("Compaction failed · nothing changed")
        self._reconnect = None

    # -- resume -----------------------------------------------------------------------------

    def replay(self, events: Iterable[p.Event]) -> None:
        """Draw a reopened session from the core's replay of it (``session.replay_events()``),
        through the handler live events go through: it looks as it did live. Rows are created
        for every event, widgets (and Markdown rendering) only for those on screen."""
        self.replay_rows(events)
        self.finish_replay()

    def replay_in_steps(self, events: Iterable[p.Event]) -> None:
        """:meth:`replay` in two turns of the event loop: the rows now, their layout (the
        widgets on screen, the window's next paint) next, before the task that emitted the
        events goes on. For a 50 MB message the two made one block of 14 ms."""
        import asyncio  # not at import: the window paints before asyncio loads

        self.replay_rows(events)
        asyncio.get_event_loop().call_soon(self.finish_replay)

    def replay_rows(self, events: Iterable[p.Event]) -> None:
        """The first step of :meth:`replay`: every row, none laid out yet (what the window
        shows does not change until :meth:`finish_replay`)."""
        if self._replay_hold is not None:
            self.finish_replay()  # one left pending goes first
        self.clear()
        handle = self.handle_event  # looked up once: a Qt object's attributes cost more
        hold = self.hold()
        hold.__enter__()
        self._replay_hold = hold
        try:
            for event in events:
                handle(event)
            # At the end, in the same layout pass: a second pass laid out a second long part
            # in the same block (each pass lays out at least one, see ``layout_budget``).
            self.scroll_to_bottom()
        except BaseException:
            self.finish_replay()
            raise

    def finish_replay(self) -> None:
        """The second step of :meth:`replay`: lay out the rows on screen (nothing when no
        replay is pending)."""
        hold, self._replay_hold = self._replay_hold, None
        if hold is None:
            return
        self._end_opening()
        hold.__exit__(None, None, None)
        forget_prepared()
        if self._renderer is not None:
            self._renderer.forget_ahead()

    def markdown_ahead(self) -> Callable[[str, bool, bool], None]:
        """What renders a part's Markdown ahead, in a worker thread, for the replay to come
        (``replay_prep.prepare_replay``): this view's renderer, as it is now."""
        from functools import partial

        from ..richtext.markdown_document import render_ahead

        return partial(render_ahead, self.renderer)

    # -- palette ----------------------------------------------------------------------------

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            # Widgets are rebuilt from the rows' state, in the new colours, when next shown.
            self._renderer = None
            self.empty_label.setStyleSheet(f"color: {colors().muted}; padding: 40px;")
            self.drop_all_widgets()
