"""Undo of the last compaction: one object holds what it takes and why it may be refused."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..conversation.history import HistorySnapshot
from ..items import Item

NOTHING_YET = "Nothing to undo: no compaction has happened in this conversation."
AFTER_TURN = "Cannot undo the compaction: a new turn has started since."
ALREADY = "Nothing to undo: the last compaction was already undone."
# What the last compaction's marker says about its Undo: how long it lasts, or why it is gone.
UNTIL_NEXT_MESSAGE = "Undo stays available until you send your next message."
GONE_AFTER_TURN = (
    "Undo is no longer available: a message was sent after this compaction, and the "
    "conversation went on from its summary."
)


@dataclass
class UndoEntry:
    """The history just before compaction ``item_id``, and the items appended after it (an
    automatic compaction runs inside a turn that goes on): undo restores the one, then
    appends the others."""

    item_id: str
    snapshot: HistorySnapshot
    appended: list[Item] = field(default_factory=list)


class UndoState:
    """The last compaction can be undone until the next turn starts."""

    def __init__(self) -> None:
        self._entry: UndoEntry | None = None
        self.refusal = NOTHING_YET
        self._compacted = False
        self.last_item_id: str | None = None  # the last compaction, undoable or not

    @property
    def item_id(self) -> str | None:
        """The compaction ``UndoCompaction`` would undo right now."""
        return self._entry.item_id if self._entry is not None else None

    def offer(self, item_id: str, snapshot: HistorySnapshot) -> None:
        self._entry = UndoEntry(item_id, snapshot)
        self._compacted = True
        self.last_item_id = item_id

    def note_appended(self, item: Item) -> None:
        if self._entry is not None:
            self._entry.appended.append(item)

    def turn_started(self) -> None:
        if self._entry is not None or self._compacted:
            self.refusal = AFTER_TURN
        self._entry = None

    def note(self) -> str:
        """What the last compaction's marker says about Undo now: until when it lasts, or
        why it is gone ("" once it was undone: the marker says so)."""
        if self._entry is not None:
            return UNTIL_NEXT_MESSAGE
        return GONE_AFTER_TURN if self.refusal == AFTER_TURN else ""

    def take(self) -> UndoEntry | None:
        """The entry to undo (then gone), or None: ``refusal`` says why."""
        entry, self._entry = self._entry, None
        if entry is not None:
            self.refusal = ALREADY
        return entry
