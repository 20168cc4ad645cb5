"""The compaction a turn leads to when it ends over the auto-compact limit: run at once, as a
task of its own in the session's slot, while the person reads the answer and types the next
message (which waits in the queue behind it), so the next message goes straight to the model.

Its events are a compaction's own turn (``turn_started``/``turn_complete`` of kind
``compact``, the compaction's events between them, trigger ``auto``): the user turn before it
has ended with its one ``turn_complete``, and the next one starts after it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Literal

from ... import protocol as p
from ...compaction import policy
from ...items import new_id
from ...sessions.record import STORAGE_ERRORS

if TYPE_CHECKING:
    from ...compaction.runner import Compactor
    from ...conversation.count_refiner import CountRefiner
    from ...sessions.record import SessionRecord
    from ..notices import Notices
    from ..usage_meter import UsageMeter
    from .request import TurnRequests
    from .task import UserTurnTask


class CompactAfterTurn:
    """Says whether the turn that just ended left the context over the limit, and runs the
    automatic compaction then."""

    def __init__(
        self,
        *,
        turns: UserTurnTask,
        compactor: Compactor,
        refiner: CountRefiner,
        meter: UsageMeter,
        requests: TurnRequests,
        notices: Notices,
        store: SessionRecord,
        emit: Callable[[p.Event], None],
    ) -> None:
        self._turns = turns
        self._compactor = compactor
        self._refiner = refiner
        self._meter = meter
        self._requests = requests
        self._notices = notices
        self._store = store
        self._emit = emit

    def due(self) -> bool:
        """Automatic compaction is on and the history is over the limit (and has grown back
        over it since the last compaction)."""
        compactor = self._compactor
        return policy.should_compact_after_turn(
            auto=self._requests.client_compacts(),
            usage=self._meter.usage(),
            limit=self._meter.limit(),
            unchanged_since_compaction=compactor.unchanged_since_compaction,
            post_compaction=compactor.post_compaction_usage,
        )

    def task(self) -> Coroutine[Any, Any, None] | None:
        """The compaction to run now that a task has ended, or None: only after a user turn
        that completed (a failed or stopped one is left as the person left it)."""
        ended, self._turns.ended = self._turns.ended, None
        if ended != "completed" or not self.due():
            return None
        return self.run()

    async def run(self) -> None:
        await self._refiner.settled()  # the decision and the figures count huge texts exactly
        if not self.due():
            return  # the exact count is under the limit: nothing to say
        turn_id = new_id("turn")
        self._emit(
            p.TurnStarted(turn_id=turn_id, kind="compact", context_window=self._meter.window())
        )
        status: Literal["completed", "aborted", "failed"] = "completed"
        try:
            if not await self._compactor.run(turn_id, "auto"):
                status = "failed"
        except asyncio.CancelledError:
            status = "aborted"
        except STORAGE_ERRORS as exc:
            status = "failed"
            self._notices.storage_failed(turn_id, exc, None)
        finally:
            await self._store.flush_in_worker()
        self._emit(p.TurnComplete(turn_id=turn_id, kind="compact", status=status))
