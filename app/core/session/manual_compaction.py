"""The ``Compact`` op's task: a compaction the user asked for (``/compact``, with an optional
focus), run as a turn of its own, or said to be needless."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from .. import protocol as p
from ..compaction.runner import NOTHING_NEW
from ..items import new_id
from ..sessions.record import STORAGE_ERRORS

if TYPE_CHECKING:
    from ..compaction.runner import Compactor
    from ..conversation.count_refiner import CountRefiner
    from ..conversation.history import ContextHistory
    from ..sessions.record import SessionRecord
    from .compaction_undo import CompactionUndo
    from .notices import Notices
    from .turn.retry import TurnRetry
    from .usage_meter import UsageMeter


class ManualCompaction:
    """Runs the user's compactions."""

    def __init__(
        self,
        *,
        compactor: Compactor,
        history: ContextHistory,
        refiner: CountRefiner,
        undo: CompactionUndo,
        meter: UsageMeter,
        notices: Notices,
        store: SessionRecord,
        retry: TurnRetry,
        emit: Callable[[p.Event], None],
    ) -> None:
        self._compactor = compactor
        self._history = history
        self._refiner = refiner
        self._undo = undo
        self._meter = meter
        self._notices = notices
        self._store = store
        self._retry = retry
        self._emit = emit

    async def run(self, focus: str | None) -> None:
        turn_id = new_id("turn")
        self._emit(
            p.TurnStarted(turn_id=turn_id, kind="compact", context_window=self._meter.window())
        )
        status: Literal["completed", "aborted", "failed"] = "completed"
        compactor = self._compactor
        try:
            await self._refiner.settled()  # the compaction's figures count huge texts exactly
            # Nothing to do is information, not a failure: said as a background line.
            unchanged = compactor.unchanged_since_compaction
            if len(self._history) == 0 or (unchanged and not focus):
                said = "Nothing to compact yet." if not unchanged else NOTHING_NEW
                self._emit(p.Background(turn_id=turn_id, message=said))
            else:  # a focus right after a compaction: summarise the same history again
                if unchanged and compactor.undo.item_id:
                    self._undo.undo()  # from the full history, not from the summary
                if not await compactor.run(turn_id, "manual", focus=focus, force=True):
                    status = "failed"
        except asyncio.CancelledError:
            status = "aborted"
        except STORAGE_ERRORS as exc:
            status = "failed"
            self._notices.storage_failed(turn_id, exc, None)
        finally:
            await self._store.flush_in_worker()
        self._emit(p.TurnComplete(turn_id=turn_id, kind="compact", status=status))
        self._retry.offer_again()  # a failed message survives a compaction that kept it
