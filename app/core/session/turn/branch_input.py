"""A turn's input, copied for an edit or a regeneration of it: what the turn sent before its
first model output (taken from the rollout as it streams by), with the edited text in place of
its message (its attachments kept), or a branch summary before it, so a server's prompt cache
still holds the prefix.
"""

from __future__ import annotations

from typing import Any

from ...attachments.parts import retexted
from ...items import Item, is_injected_context, is_message, message_text, user_message
from ...rollout.store import RolloutRecord
from ..branch_summary.summary import BranchSummary, summary_item

Record = RolloutRecord
# What a turn sends before its first model output: its input, copied into an edit or a
# regeneration of it.
_INPUT_ROLES = frozenset(("user", "developer", "system"))


class TurnInput:
    """What turn ``turn_id`` sent before its first model output, taken from the rollout's
    records as they go by (``see``, given each record with its place in the file): its user
    messages (the environment block too when it added one) and what it compacted before its
    first request."""

    def __init__(self, anchors: list[str | None], turn_id: str) -> None:
        self._anchors = anchors
        self.turn = turn_id
        self._state = 0  # 0: not reached, 1: in the turn's input, 2: past it
        self._last = -1  # the place of the last record of the turn seen
        self.records: list[Record] = []

    def see(self, seq: int, record: Record) -> None:
        """Record number ``seq``: any record, or only those of the turn (the others' places
        then lie between)."""
        if self._state == 2:
            return
        anchor = self._anchors[seq] if seq < len(self._anchors) else None
        if anchor != self.turn or (self._state == 1 and seq != self._last + 1):
            if self._state == 1:
                self._state = 2  # a turn's own records are contiguous up to its first child
            return
        self._state, self._last = 1, seq
        if record.type == "compacted":
            self.records.append(record)
        elif record.type == "response_item":
            item = record.payload.get("item")
            if not (isinstance(item, dict) and item.get("role") in _INPUT_ROLES):
                self._state = 2  # the model's output begins
                return
            self.records.append(record)


def message_of(records: list[Record]) -> str | None:
    """The user's own message among a turn's input (the last user message it recorded)."""
    for record in reversed(records):
        item = record.payload.get("item")
        if (
            record.type == "response_item"
            and isinstance(item, dict)
            and is_message(item, "user")
            and not is_injected_context(item)
        ):
            return message_text(item)
    return None


def with_text(
    records: list[Record], old: str, new: str, keep: list[str] | None = None
) -> list[Record]:
    """A turn's input with its message ``old`` replaced by ``new`` (its attachments kept, or
    those ``keep`` names): in its own record, and where a compaction before its first request
    put it back after the summary."""
    changed: list[Record] = []
    for record in records:
        payload = record.payload
        if record.type == "response_item" and _is_text(payload.get("item"), old):
            payload = dict(payload, item=retexted(payload["item"], new, keep))
        elif record.type == "compacted" and isinstance(payload.get("replacement_history"), list):
            history = list(payload["replacement_history"])
            for index in range(len(history) - 1, -1, -1):
                if _is_text(history[index], old):
                    history[index] = retexted(history[index], new, keep)
                    break
            payload = dict(payload, replacement_history=history)
        changed.append(record._replace(payload=payload))
    return changed


def edited_message(records: list[Record], text: str) -> Item:
    """The edited message as it will be sent (``text`` and the original's attachments)."""
    for record in records:
        item = record.payload.get("item")
        if record.type == "response_item" and isinstance(item, dict) and _is_text(item, text):
            return item
    return user_message(text)


def with_summary(records: list[Record], message: str, summary: BranchSummary) -> list[Record]:
    """A turn's input with the branch summary just before its message (in its own record, and
    where a compaction before its first request put the message back)."""
    block = summary_item(summary)
    out: list[Record] = []
    for record in records:
        payload = record.payload
        if record.type == "response_item" and _is_text(payload.get("item"), message):
            out.append(record._replace(payload={"item": block}))
        elif record.type == "compacted" and isinstance(payload.get("replacement_history"), list):
            history = list(payload["replacement_history"])
            for index in range(len(history) - 1, -1, -1):
                if _is_text(history[index], message):
                    history.insert(index, block)
                    break
            record = record._replace(payload=dict(payload, replacement_history=history))
        out.append(record)
    return out


def summary_record(summary: BranchSummary, turn_id: str) -> Record:
    item = summary_item(summary)
    return RolloutRecord(0, "", "response_item", {"item": item, "turn_id": turn_id})


def _is_text(item: Any, text: str) -> bool:
    return isinstance(item, dict) and is_message(item, "user") and message_text(item) == text
