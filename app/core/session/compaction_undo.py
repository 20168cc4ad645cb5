"""Undo of a compaction: the ``UndoCompaction`` op (saved first, then done), the history
restored in memory (live and on resume), and the ``undo_available`` state."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .. import protocol as p
from ..sessions.record import STORAGE_ERRORS

if TYPE_CHECKING:
    from ..compaction.runner import Compactor
    from ..conversation.count_refiner import CountRefiner
    from ..conversation.history import ContextHistory
    from ..conversation.transcript import Transcript
    from ..sessions.record import SessionRecord
    from .usage_meter import UsageMeter


class CompactionUndo:
    """Undoes the last compaction the compactor's undo log offers."""

    def __init__(
        self,
        *,
        compactor: Compactor,
        history: ContextHistory,
        refiner: CountRefiner,
        transcript: Transcript,
        store: SessionRecord,
        meter: UsageMeter,
        emit: Callable[[p.Event], None],
    ) -> None:
        self._compactor = compactor
        self._history = history
        self._refiner = refiner
        self._transcript = transcript
        self._store = store
        self._meter = meter
        self._emit = emit

    def emit_state(self) -> None:
        """Tell the front end whether Undo would undo a compaction now, and if not why."""
        self._emit(self.state())

    def state(self) -> p.UndoAvailable:
        """Whether Undo would undo a compaction now (if not why), and what the last
        compaction's marker says about it."""
        undo = self._compactor.undo
        reason = "" if undo.item_id else undo.refusal
        return p.UndoAvailable(
            item_id=undo.item_id, reason=reason, last_compaction=undo.last_item_id,
            note=undo.note(),
        )

    def restore(self) -> str | None:
        """Undo the last compaction in memory: the history before it, then what came after it.
        Returns the compaction's item id, or None when there is nothing to undo."""
        entry = self._compactor.undo.take()
        if entry is None:
            return None
        self._history.restore(entry.snapshot)
        self._refiner.recount_refined()
        for item in entry.appended:
            self._history.append(item, defer_count=True)
        self._transcript.mark_undone(entry.item_id)
        self._compactor.compacted_version = None
        self._compactor.post_compaction_usage = None
        return entry.item_id

    def undo(self) -> None:
        """The ``UndoCompaction`` op: recorded and synced first, so an undo that could not be
        saved is not done."""
        item_id = self._compactor.undo.item_id
        if item_id is None:
            self._emit(p.Error(message=self._compactor.undo.refusal, kind="invalid_op"))
            self.emit_state()
            return
        try:
            self._store.record("compaction_undone", {"item_id": item_id})
            if self._store.writer is not None:
                self._store.writer.sync()
        except STORAGE_ERRORS as exc:
            self._emit(p.Error(message=str(exc), kind="storage"))
            return
        self.restore()
        self._emit(p.CompactionUndone(item_id=item_id, tokens=self._meter.usage()))
        self._meter.emit_usage()
        self.emit_state()
