"""The one task a session runs at a time (a user turn or a compaction), and the user turns
queued behind it: started, aborted, and when one ends, the compaction it leads to (a turn that
ended over the limit) or else the next queued turn started."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any, Literal

from .. import protocol as p

TaskKind = Literal["regular", "compact", "branch"]


class ActiveTask:
    """The session's task slot. ``run_turn`` makes the task of a queued user turn;
    ``after_turn`` the compaction a turn that has just ended leads to (None: none), run before
    any queued turn, in the same slot (so never beside another compaction or turn)."""

    def __init__(
        self,
        run_turn: Callable[[p.UserTurn], Coroutine[Any, Any, None]],
        after_turn: Callable[[], Coroutine[Any, Any, None] | None] = lambda: None,
    ) -> None:
        self._run_turn = run_turn
        self._after_turn = after_turn
        self._task: asyncio.Task[None] | None = None
        self._pending: deque[p.UserTurn] = deque()
        self._closed = False
        self.kind: TaskKind | None = None

    @property
    def busy(self) -> bool:
        """A task holds the slot. A task that has just ended holds it until its done callback
        has run: a turn submitted in between waits for the compaction the ended turn leads to,
        rather than starting beside it and skipping it."""
        return self._task is not None

    def start(self, coro: Coroutine[Any, Any, None], kind: TaskKind) -> None:
        self.kind = kind
        self._task = asyncio.get_running_loop().create_task(coro)
        self._task.add_done_callback(self._on_done)

    def queue(self, op: p.UserTurn) -> None:
        """Run ``op`` once the task running now has ended."""
        self._pending.append(op)

    def clear_queue(self) -> None:
        self._pending.clear()

    async def abort(self) -> None:
        """Cancel the running task and wait until it has ended (queued turns stay queued)."""
        task = self._task
        if task is None:
            return
        self._task = None  # the done callback must not start queued turns
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        self.kind = None

    async def close(self) -> None:
        """No task runs from now on: the queue is dropped and the running task aborted."""
        self._closed = True
        self._pending.clear()
        await self.abort()

    def _on_done(self, task: asyncio.Task[None]) -> None:
        if task is not self._task:
            return
        kind, self._task, self.kind = self.kind, None, None
        if self._closed:
            return
        if kind in ("regular", "branch") and (compaction := self._after_turn()) is not None:
            self.start(compaction, "compact")
            return
        if self._pending:
            self.start(self._run_turn(self._pending.popleft()), "regular")
