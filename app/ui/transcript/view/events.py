"""How the transcript renders the core's events, live or replayed.

``handle_event`` routes each event (those that concern the transcript; others are ignored) to
its handler, the most frequent first: a turn starting or ending, an item starting or
completing (messages, tool calls and outputs, reasoning, compaction markers), a compaction's
progress, undo and end, pins, summary edits, notices and errors, retries and stalls. The
handlers only use what the layers below hold (rows, streaming, waits); the history itself is
never touched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QWidget

from ...controller.format import STAGE_TEXT
from ...controller.replay_prep import data_text
from ..row_models import ReasoningRow, TranscriptRow
from .waits import WaitingTranscript

if TYPE_CHECKING:
    from app.core import protocol as p


# Events that show the turn moving on: a retry wait that was counting down is over.
_RETRY_OVER = frozenset(
    {"agent_message_delta", "item_started", "item_completed", "stream_waiting", "error"}
)


class TranscriptEvents(WaitingTranscript):
    """The core's events, each routed to its handler (``handle_event``)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._turn_id: str | None = None

    # -- events -----------------------------------------------------------------------------

    def handle_live_event(self, event: p.Event) -> None:
        """Render one core event as it happens: a row it adds gets its widget in the layout
        passes after (``later``), not in the block that delivers the event, which often also
        holds the core's own work on the stream."""
        with self.later():
            self.handle_event(event)

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
        elif event.type == "branch_summary_carried":
            self.show_carried_summary(event)
        elif event.type == "branch_summary_undone":
            self.carried_summary_undone(event.turn_id)
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
        elif event.type == "turn_branches":
            self.set_turn_branches(event)
        elif event.type == "reply_replaced":
            self.remove_reply(event.item_id)

    def _on_turn_started(self, event: p.TurnStarted) -> None:
        self._turn_id = event.turn_id
        self._reconnect = None
        for row in self._compactions.values():
            row.offer_retry(False)  # something newer runs: an earlier failure is history

    def _on_undo_available(self, event: p.UndoAvailable) -> None:
        """The core says which compaction Undo would undo now; only its marker offers it."""
        for row in self._compactions.values():
            row.set_undoable(row.item_id == event.item_id)
            # How long Undo lasts, or why it is gone, as the core says it (the last one's).
            row.set_undo_note(event.note if row.item_id == event.last_compaction else "")

    def _on_item_started(self, event: p.ItemStarted) -> None:
        item = event.item
        if item.kind == "context_compaction":
            trigger = item.data.get("trigger", "manual")
            # The server compacts inside a response whose answer was already streaming: the
            # marker goes above that answer, where the rollout (and a reopened session) has it.
            before = self._streaming if trigger == "server" else None
            self.begin_compaction(item.id, trigger != "manual", before)
        elif item.kind == "user_message":
            row = self.add_message("user", data_text(item.data), item.id, event.turn_id)
            if item.data.get("attachments"):
                row.set_attachments(item.data["attachments"])
        elif item.kind == "agent_message":
            self._stream_row(item.id)
        elif item.kind == "function_call":
            self._add_function_call(item)

    def _on_item_completed(self, event: p.ItemCompleted) -> None:
        item = event.item
        data = item.data
        if item.kind == "user_message":
            row = self.add_message("user", data_text(data), item.id, event.turn_id)
            if data.get("attachments"):  # thumbnails and file chips under the text
                row.set_attachments(data["attachments"])
            if data.get("not_sent"):
                row.set_in_context(False)
            if data.get("pinned"):
                row.set_pinned(str(data["pinned"]))
        elif item.kind == "agent_message":
            text = data_text(data)
            reply = self._messages.get(item.id)
            if reply is None or not reply.turn_id:
                reply = self.add_message("assistant", text, item.id, event.turn_id)
            elif text:
                reply.set_text(text)
            self._finish_item(reply)
            if data.get("interrupted"):
                reply.set_interrupted()
            if data.get("cut_off"):
                reply.set_cut_off()
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
            if data.get("images"):  # thumbnails under the tool's title
                self._tools[call_id].set_attachments(data["images"])
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
            if event.marker is not None and row.state == "done":  # its figures, recomputed
                row.complete(event.marker, undoable=row.undoable)
            row.set_summary(event.summary, edited=event.edited, undoable=event.undoable)

    def _on_compaction_progress(self, event: p.CompactionProgress) -> None:
        text = event.message or STAGE_TEXT.get(event.stage, "")
        for row in self._compactions.values():
            row.set_stage(text)

    def _on_compaction_undone(self, event: p.CompactionUndone) -> None:
        row = self._compactions.get(event.item_id)
        if row is not None:
            row.mark_undone()
        # What the core warned about that compaction ("made the context larger… Undo puts it
        # back") no longer holds.
        stale = [r for r in self.notice_rows("warning") if r.compaction_id == event.item_id]
        if stale:
            self.remove_rows(list[TranscriptRow](stale))

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
        about = self._compactions.get(event.compaction_id) if event.compaction_id else None
        if about is not None and about.state == "undone":
            return  # (a reopened session) about a compaction undone since
        self.add_notice("warning", event.message).compaction_id = event.compaction_id

    def _on_error(self, event: p.Error) -> None:
        row = self.add_notice("error", event.message)
        row.turn_id = event.turn_id
        if event.details:
            row.set_details(event.details)

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
