"""The ordered stream of events a session sends to its one consumer (the UI's bridge).

A fast model streams one text delta per token: tens of thousands per reply. Building an event
object and waking the consumer for each of them cost more than reading the stream itself, and a
window that renders in batches gains nothing from them. So a delta that arrives while the event
queued last is a delta of the same message that the consumer has not taken yet is joined onto
it: a consumer that keeps up still sees every delta as it comes, one that falls behind takes
one delta carrying everything that arrived meanwhile. Order and text are unchanged.
"""

from __future__ import annotations

import asyncio
from collections import deque

from ..protocol import AgentMessageDelta, Event


class _PendingDelta:
    """Deltas of one message, queued and not yet taken: joined when the consumer takes them."""

    __slots__ = ("item_id", "parts", "turn_id")

    def __init__(self, turn_id: str, item_id: str, delta: str) -> None:
        self.turn_id = turn_id
        self.item_id = item_id
        self.parts = [delta]

    def event(self) -> AgentMessageDelta:
        return AgentMessageDelta(
            turn_id=self.turn_id, item_id=self.item_id, delta="".join(self.parts)
        )


class EventStream:
    """A queue of events with delta joining (see the module docstring); one consumer."""

    def __init__(self) -> None:
        self._queue: deque[Event | _PendingDelta] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._ended = False

    def __len__(self) -> int:
        return len(self._queue)

    def put(self, event: Event) -> None:
        """Queue ``event`` behind everything queued before it."""
        self._queue.append(event)
        self._wake()

    def put_delta(self, turn_id: str, item_id: str, delta: str) -> None:
        """Queue a text delta of one message, joined onto the last queued event when that is
        a delta of the same message still waiting to be taken."""
        queue = self._queue
        if queue:
            last = queue[-1]
            if (
                isinstance(last, _PendingDelta)
                and last.item_id == item_id
                and last.turn_id == turn_id
            ):
                last.parts.append(delta)
                return
        queue.append(_PendingDelta(turn_id, item_id, delta))
        self._wake()

    def end(self) -> None:
        """No more events: once the queue is drained, :meth:`get` returns ``None``."""
        self._ended = True
        self._wake()

    async def get(self) -> Event | None:
        """The next event (waiting for one), or ``None`` when the stream has ended."""
        while not self._queue:
            if self._ended:
                return None
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        event = self._queue.popleft()
        return event.event() if isinstance(event, _PendingDelta) else event

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
