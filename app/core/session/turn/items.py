"""The items a turn adds: saved first, then in the history, the undo log and the transcript;
and taken out of the model's view again when the turn is withdrawn."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ... import protocol as p
from ...items import Item

if TYPE_CHECKING:
    from ...compaction.runner import Compactor
    from ...conversation.history import ContextHistory
    from ...conversation.transcript import Transcript
    from ..usage_meter import UsageMeter


class TurnItems:
    """Adds items to the conversation; remembers the ones the running turn added."""

    def __init__(
        self,
        *,
        record: Callable[[str, dict[str, Any]], None],
        record_in_worker: Callable[[str, dict[str, Any]], Awaitable[None]],
        history: ContextHistory,
        transcript: Transcript,
        compactor: Compactor,
        meter: UsageMeter,
        emit: Callable[[p.Event], None],
    ) -> None:
        self._record = record
        self._record_in_worker = record_in_worker
        self._history = history
        self._transcript = transcript
        self._compactor = compactor
        self._meter = meter
        self._emit = emit
        self.added: list[Item] = []  # what the running turn added to the history

    def start(self) -> None:
        """A turn starts: nothing of it is in the history yet."""
        self.added = []

    def append(self, item: Item, turn_id: str, *, interrupted: bool = False) -> None:
        """Add an item to rollout, history and transcript; saved first, so an item that could
        not be saved is in none of them."""
        payload: dict[str, Any] = {"item": item, "turn_id": turn_id}
        if interrupted:
            payload["interrupted"] = True
        self._record("response_item", payload)
        self._history.append(item)
        self._compactor.undo.note_appended(item)
        self.added.append(item)
        self._transcript.add_item(item, turn_id, interrupted=interrupted)

    async def append_cut_output(self, item: Item, whole: Item, turn_id: str) -> None:
        """A tool output cut to fit: its whole is saved first (``tool_output``, indexed for
        recall and shown in the transcript; megabytes, written in a worker thread), then the
        cut item goes where ``append`` puts it."""
        await self._record_in_worker("tool_output", {"item": whole, "turn_id": turn_id})
        payload: dict[str, Any] = {"item": item, "turn_id": turn_id}
        self._record("response_item", payload)
        self._history.append(item)
        self._compactor.undo.note_appended(item)
        self.added.append(item)
        self._transcript.add_item(whole, turn_id)

    def withdraw(self, turn_id: str, text: str, reason: str) -> None:
        """Take this turn's items out of the model's view (overflow recovery failed), so the
        next message works; the transcript keeps them, the user message marked not sent."""
        ours = {id(item) for item in self.added}
        remaining = [item for item in self._history.raw_items() if id(item) not in ours]
        if len(remaining) == len(self._history):
            return
        self._history.replace(remaining)
        self._compactor.compacted_version = None
        self._meter.reset()
        self._transcript.mark_not_sent(turn_id)
        self._record(
            "history_replaced",
            {"turn_id": turn_id, "reason": "withdrawn", "replacement_history": remaining},
        )
        self._meter.emit_usage()
        self._emit(p.MessageNotSent(turn_id=turn_id, text=text, reason=reason))
