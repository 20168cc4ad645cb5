"""Exact counts of huge texts, made after the fact.

Counting a 50 MB message exactly takes seconds, and opening the session that holds it must not
wait for that: the counter gives such a text an estimate from a few samples
(``tokens.HUGE_TEXT_CHARS``), the gauge shows the usage as approximate, and this object has the
exact count made in a worker thread afterwards. Once it is known, the history's counts are
corrected and the owner is told (the session emits a new ``TokenCount``). A decision that needs
the exact figure (a turn about to be sent, a compaction) waits for it with :meth:`settled`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from ..tokens.counter import TokenCounter
from .history import ContextHistory

log = logging.getLogger(__name__)


class CountRefiner:
    """Refines the estimates ``counter`` gives out for huge texts, for ``history``."""

    def __init__(
        self, counter: TokenCounter, history: ContextHistory, on_refined: Callable[[], None]
    ) -> None:
        self._counter = counter
        self._history = history
        self._on_refined = on_refined
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False
        counter.on_estimate = self.schedule

    def schedule(self) -> None:
        """Make the exact counts of the estimated texts, unless that is under way already.
        Callable from any thread (a count in a worker thread hands over to the loop)."""
        if self._closed or not self._counter.estimating:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # a worker thread counted: the loop takes it from here
            if self._loop is not None and not self._loop.is_closed():
                self._loop.call_soon_threadsafe(self.schedule)
            return
        self._loop = loop
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._run())

    async def _run(self) -> None:
        while self._counter.estimating and not self._closed:
            try:
                texts = await self._counter.refine()
            except Exception:  # the estimates stand; nothing is lost
                log.warning("Counting a huge text exactly failed", exc_info=True)
                return
            if self._history.recount(texts) and not self._closed:
                self._on_refined()

    @property
    def busy(self) -> bool:
        """True while exact counts are being made."""
        return self._task is not None and not self._task.done()

    async def settled(self) -> None:
        """Wait until every estimate handed out so far has its exact count."""
        self.schedule()
        while self._task is not None and not self._task.done():
            await asyncio.shield(self._task)

    def recount_refined(self) -> None:
        """The history was put back (Undo) with counts from before a refinement: correct
        them from the exact counts known."""
        self._history.recount(self._counter.refined_texts())

    def reopen(self) -> None:
        """Count again, for a history that is the active branch's once more (a view kept
        while another branch was shown): the counter's estimates are told to this refiner,
        and the history takes the exact counts made meanwhile."""
        self._closed = False
        self._counter.on_estimate = self.schedule
        self.recount_refined()

    async def close(self) -> None:
        """Stop counting (the session is shutting down, or another branch's view takes
        over)."""
        self._closed = True
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
