"""The transcript's rows, kept by what they show: messages by item id, tool calls by call id,
compaction markers by item id.

``TranscriptRows`` adds a message (a long one in parts), a notice, a tool call and its output,
a compaction marker (and dims the rows a finished compaction took out of the model's view),
and finds rows again: by kind, or by a match the core found in the conversation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QWidget

from ...controller.replay_prep import prepared_cuts
from ...text.long_text import SEGMENT_CHARS
from ..compaction_row import CompactionRow
from ..message_rows import MessageRow, MessageSegmentRow
from ..row_models import NoticeRow, ToolRow, TranscriptRow
from .find_match import clear, highlight, locate, open_row, query_words, text_view
from .row_host import RowHostArea

if TYPE_CHECKING:
    from app.core import protocol as p


class TranscriptRows(RowHostArea):
    """The rows by message, tool call and compaction id: adding, finding and dimming them."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._messages: dict[str, MessageRow] = {}
        self._tools: dict[str, ToolRow] = {}
        self._compactions: dict[str, CompactionRow] = {}
        self._found: TranscriptRow | None = None  # the row of the match shown (highlighted)
        # The turns with siblings, as the core told them (``TurnBranches``), and the row that
        # shows each one's ``‹ n/m ›`` (its user message, or its answer when regenerated).
        self._branches: dict[str, p.TurnBranches] = {}
        self._branch_rows: dict[str, MessageRow] = {}
        # The summaries of branches left behind, by the turn they went to, with their notes.
        self._carried: dict[str, tuple[NoticeRow, p.BranchSummaryCarried]] = {}

    # -- rows -------------------------------------------------------------------------------

    def _add(self, row: TranscriptRow) -> TranscriptRow:
        return self.append_row(row)  # type: ignore[no-any-return]

    def message_rows(self, role: str | None = None) -> list[MessageRow]:
        return [
            r for r in self.rows if isinstance(r, MessageRow) and (role is None or r.role == role)
        ]

    def compaction_rows(self) -> list[CompactionRow]:
        return list(self._compactions.values())  # in row order: markers are only appended

    def notice_rows(self, kind: str | None = None) -> list[NoticeRow]:
        return [
            r for r in self.rows if isinstance(r, NoticeRow) and (kind is None or r.kind == kind)
        ]

    def tool_row(self, call_id: str) -> ToolRow | None:
        return self._tools.get(call_id)

    def tool_rows(self) -> list[ToolRow]:
        return [r for r in self.rows if isinstance(r, ToolRow)]

    def show_match(self, match: p.ConversationMatch, query: str = "") -> TranscriptRow | None:
        """Bring a match the core found into view: its row (the part of a long message it is
        in), opened when collapsed (a compaction's summary, a tool call), scrolled so the
        match is on screen, the words of ``query`` highlighted; None when it has no row here."""
        found = locate(self, match)
        clear(self._found)
        self._found = None if found is None else found[0]
        if found is None:
            return None
        row, at = found
        open_row(row)
        self.scroll_to_row(row)
        view = text_view(row)
        words = query_words(query)
        if view is not None and words:
            top = highlight(view, words, at)
            if top is not None:
                self._scroll_to_place(row, view, top)
        return row

    def _scroll_to_place(self, row: TranscriptRow, view: Any, top: int) -> None:
        """Scroll so the place ``top`` pixels down ``view`` (in ``row``) is on screen, a third
        of the way down, unless the row's top already shows it."""
        height = self.viewport().height()
        bar = self.verticalScrollBar()
        for _ in range(3):  # rows laid out on the way are measured: their heights may change
            widget = row.widget
            widget.layout().activate()
            place = view.viewport().mapTo(self.viewport(), QPoint(0, top)).y()
            if 0 <= place < height * 2 // 3:
                return
            value = bar.value()
            bar.setValue(min(bar.maximum(), max(0, value + place - height // 3)))
            self.relayout()
            if bar.value() == value:
                return

    def clear_match(self) -> None:
        """Find was closed: the highlight goes."""
        clear(self._found)
        self._found = None

    def add_message(
        self, role: str, text: str, item_id: str = "", turn_id: str = ""
    ) -> MessageRow:
        if item_id and item_id in self._messages:
            row = self._messages[item_id]
            if turn_id and not row.turn_id:  # a streamed answer learns its turn at its end
                row.turn_id = turn_id
                self._show_branches(row)
            # A message arrives twice (started, then completed), mostly unchanged: rendering
            # the same text again would only measure its parts on screen again.
            if row.dirty or row.shown_end != len(text) or row.text != text:
                row.set_text(text)
                row.render_markdown()
            return row
        row = MessageRow(self, role, text, item_id, turn_id)
        if item_id:
            self._messages[item_id] = row
        if turn_id and self._branches:
            self._show_branches(row)
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
            carried = set(event.carried_pins)
            # Only rows still in view can leave it (a pinned one carried now can come back):
            # an earlier compaction dimmed the rest, and a branch replays each compaction.
            above = [
                r for r in self.rows[: row.index]
                if r.in_context or (carried and _message_of(r).pin_key in carried)
            ]
            row.dimmed = [(r, r.in_context) for r in above]
            with self.hold():  # rows re-measured with their tags, laid out once
                for other in above:
                    message = _message_of(other)
                    if getattr(message, "role", None) == "user" and message.text in still_seen:
                        continue
                    if message.pin_key and message.pin_key in carried:
                        other.set_in_context(True)  # pinned: carried verbatim before the summary
                        continue
                    other.set_in_context(False)

    def _drop_running_compactions(self, reason: str) -> None:
        for row in self._compactions.values():
            if row.state == "running":
                row.mark_stopped(reason)

    # -- branches ---------------------------------------------------------------------------

    def set_turn_branches(self, event: p.TurnBranches) -> None:
        """The core says turn ``event.turn_id`` has siblings: its row shows ``‹ n/m ›``."""
        self._branches[event.turn_id] = event
        shown = self._branch_rows.get(event.turn_id)
        if shown is not None:
            shown.set_branches(event)
            return
        want = "assistant" if event.regenerated else "user"
        found: MessageRow | None = None
        for row in reversed(self.rows):  # the turn is near the end: live, or just replayed
            if isinstance(row, MessageRow) and row.turn_id:
                if row.turn_id == event.turn_id:
                    if row.role == want:
                        found = row
                        if want == "assistant":
                            break  # its last answer
                elif found is not None:
                    break
        if found is not None:
            self._show_branches(found)

    def _show_branches(self, row: MessageRow) -> None:
        """``row`` of a turn with siblings shows them if it is the row that should."""
        branches = self._branches.get(row.turn_id)
        if branches is None or row.role != ("assistant" if branches.regenerated else "user"):
            return
        shown = self._branch_rows.get(row.turn_id)
        if shown is not None and shown is not row:
            if row.role == "user":
                return  # the turn's first message keeps them
            shown.set_branches(None)  # a later answer of the turn takes them
        self._branch_rows[row.turn_id] = row
        row.set_branches(branches)

    def forget_branches(self) -> None:
        self._branches.clear()
        self._branch_rows.clear()
        self._carried.clear()

    def show_carried_summary(self, event: p.BranchSummaryCarried) -> None:
        """A summary of the branch left behind went into this one: a note saying so, with
        Undo while it is in the model's view."""
        row = self.add_notice("background", carried_text(event))
        if not event.undone:
            from app.core.protocol import UndoBranchSummary

            row.set_undo(UndoBranchSummary(turn_id=event.turn_id))
        self._carried[event.turn_id] = (row, event)

    def carried_summary_undone(self, turn_id: str) -> None:
        shown = self._carried.get(turn_id)
        if shown is not None:
            row, event = shown
            row.set_undo(None)
            row.set_message(carried_text(event.model_copy(update={"undone": True})))


def _message_of(row: Any) -> Any:
    """A long message is drawn in parts: each part is as much in view as its message."""
    return row.message if isinstance(row, MessageSegmentRow) else row


def carried_text(event: p.BranchSummaryCarried) -> str:
    """What the note of a carried branch summary says."""
    how = "summarised by the model" if event.by_model else "in your own words from it"
    state = ", then taken out of the model's view again" if event.undone else ""
    return f"Carried a summary of the branch left behind ({how}){state}:\n{event.text}"
