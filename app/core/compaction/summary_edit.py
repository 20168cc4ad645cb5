"""The summary, seen and corrected: the user edits what the model reads in place of the old
history, and can undo the edit.

Only the latest compaction's summary is in the model's view (a later compaction replaces it),
and only a summary Coco wrote locally can be read and edited (a remote compaction's is held by
the server, encrypted; pruning writes none). An edit replaces the summary message in the
history, is recorded in the rollout first (``summary_edited``, replayed on resume), updates the
compaction's transcript entry (so a reopened session shows the edited text and "edited") and is
told as ``SummaryEdited``. Undo puts back the text before the last edit, recorded the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import protocol as p
from ..conversation.history import ContextHistory
from ..conversation.transcript import Transcript
from ..items import message_text, user_message
from .budget import CompactionBudget
from .prompts import is_summary_message, summary_prefix, summary_text
from .room_check import freed

SUMMARY_EDIT_RECORD = "summary_edited"
BUSY = "Wait for the current turn to finish before changing the summary."


class SummaryEdits:
    """Edits of the latest compaction's summary, with the texts each edit replaced."""

    def __init__(
        self,
        *,
        history: ContextHistory,
        transcript: Transcript,
        record: Callable[[str, dict[str, Any]], None],
        emit: Callable[[p.Event], None],
        unchanged: Callable[[], bool],
        rewritten: Callable[[bool, bool], None],
        usage: Callable[[], int],
        count: Callable[[str], int],
        budget: Callable[[], CompactionBudget],
    ) -> None:
        self._history = history
        self._transcript = transcript
        self._record = record
        self._emit = emit
        # Whether the history is as the last compaction left it; told after the summary
        # changed (was it unchanged before, is this live or a resume).
        self._unchanged = unchanged
        self._rewritten = rewritten
        self._usage = usage
        self._count = count
        self._budget = budget
        self._earlier: dict[str, list[str]] = {}  # compaction id → texts its edits replaced

    def handle(self, op: p.EditSummary | p.UndoSummaryEdit, *, busy: bool) -> None:
        if busy:
            self._refuse(BUSY)
            return
        refusal = self.refusal(op.item_id)
        if refusal:
            self._refuse(refusal)
            return
        entry = self._transcript.compaction_entry(op.item_id) or {}
        current = _summary_body(self._history)
        earlier = self._earlier.setdefault(op.item_id, [])
        if isinstance(op, p.UndoSummaryEdit):
            if not earlier:
                self._refuse("Nothing to undo: this summary was not edited.")
                return
            text, undo = earlier[-1], True
        else:
            text, undo = op.text.strip(), False
            if not text:
                self._refuse(
                    "The summary cannot be empty: write what the model should know in place "
                    "of the earlier conversation. Nothing was changed."
                )
                return
            if text == current:
                self._emit(p.Background(message="The summary is unchanged."))
                return
            too_large = self._too_large(text)
            if too_large:
                self._refuse(too_large)
                return
        payload = {"item_id": op.item_id, "summary": text, "previous": current, "undo": undo}
        try:  # saved first: an edit that could not be saved is not made
            self._record(SUMMARY_EDIT_RECORD, payload)
        except Exception as exc:  # noqa: BLE001 - RolloutWriteError / ReadOnlySession, in words
            self._emit(p.Error(message=f"The summary was not changed: {exc}", kind="storage"))
            return
        self._apply(payload, live=True)
        self._emit(
            p.SummaryEdited(
                item_id=op.item_id,
                summary=text,
                edited=bool(entry.get("summary_edited")),
                undoable=bool(self._earlier.get(op.item_id)),
                tokens=self._usage(),
                marker=p.CompactionMarker.from_record(entry) if entry else None,
            )
        )

    def replay(self, payload: dict[str, Any]) -> None:
        """A ``summary_edited`` record read on resume."""
        if isinstance(payload.get("summary"), str) and payload.get("item_id"):
            self._apply(payload, live=False)

    def refusal(self, item_id: str) -> str:
        """Why the summary of compaction ``item_id`` cannot be edited now ("" when it can)."""
        entry = self._transcript.compaction_entry(item_id)
        if entry is None:
            return "There is no such compaction in this conversation."
        if entry.get("undone"):
            return "This compaction was undone: its summary is no longer in the model's view."
        latest = self._transcript.latest_compaction_entry()
        if latest is None or latest.get("item_id") != item_id:
            return (
                "A later compaction replaced this summary: only the latest compaction's summary "
                "is in the model's view, so only it can be edited."
            )
        if entry.get("strategy") == "prune":
            return "This compaction wrote no summary: it only shortened old tool outputs."
        if entry.get("strategy") == "remote" or not entry.get("summary"):
            return (
                "This compaction's summary is held by the server, encrypted: Coco cannot show "
                "or edit it."
            )
        if _summary_index(self._history) is None:
            return "The summary is no longer in the model's view."
        return ""

    def _too_large(self, text: str) -> str:
        """Why ``text`` is too large to stand for the old history ("" when it fits): a
        compacted history must leave the conversation room to go on."""
        budget = self._budget()
        room = budget.history_room
        tokens = self._count(summary_text(text))
        if room is None or tokens <= room:
            return ""
        window = f"the model's {budget.window:,}-token window" if budget.window else "the model"
        return (
            f"The summary was not changed: it is about {tokens:,} tokens, and {window} leaves "
            f"room for at most {room:,} in a compacted history. Shorten it."
        )

    def _refuse(self, message: str) -> None:
        self._emit(p.Error(message=message, kind="invalid_op"))

    def _apply(self, payload: dict[str, Any], *, live: bool) -> None:
        item_id = str(payload["item_id"])
        text = str(payload["summary"])
        earlier = self._earlier.setdefault(item_id, [])
        if payload.get("undo"):
            if earlier:
                earlier.pop()
        else:
            earlier.append(str(payload.get("previous", "")))
        index = _summary_index(self._history)
        if index is not None:
            items = list(self._history.raw_items())
            items[index] = user_message(summary_text(text))
            unchanged = self._unchanged()
            self._history.replace(items)
            self._rewritten(unchanged, live)
        entry = self._transcript.compaction_entry(item_id)
        if entry is not None:
            # The marker's figures follow the summary: what the compaction left is now as
            # much larger or smaller as the new text is.
            change = self._count(summary_text(text)) - self._count(
                summary_text(str(payload.get("previous", "")))
            )
            before = int(entry.get("tokens_before") or 0)
            after = max(0, int(entry.get("tokens_after") or 0) + change)
            entry["tokens_after"] = after
            entry["freed_share"], entry["freed_little"] = freed(before, after)
            entry["summary"] = text
            entry["summary_edited"] = bool(earlier)
            entry["summary_undoable"] = bool(earlier)


def _summary_body(history: ContextHistory) -> str:
    """What the summary message in the history says (after its prefix)."""
    index = _summary_index(history)
    if index is None:
        return ""
    return message_text(history.raw_items()[index])[len(summary_prefix()) + 1 :]


def _summary_index(history: ContextHistory) -> int | None:
    items = history.raw_items()
    for index in range(len(items) - 1, -1, -1):
        if is_summary_message(items[index]):
            return index
    return None
