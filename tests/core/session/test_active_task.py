"""The session's task slot: one task at a time, queued turns run in order after it, an abort
stops the running task without starting the queue, and a closed slot starts nothing."""

from __future__ import annotations

import asyncio

from app.core import protocol as p
from app.core.session.active_task import ActiveTask


class Runs:
    """Turn tasks that record their text and wait until released."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.finished: list[str] = []
        self.release = asyncio.Event()
        self.idle = asyncio.Event()

    async def turn(self, op: p.UserTurn) -> None:
        self.started.append(op.text)
        self.idle.clear()
        await self.release.wait()
        self.finished.append(op.text)
        self.idle.set()


async def test_queued_turns_run_one_after_another_in_order() -> None:
    runs = Runs()
    slot = ActiveTask(runs.turn)
    slot.start(runs.turn(p.UserTurn(text="first")), "regular")
    slot.queue(p.UserTurn(text="second"))
    slot.queue(p.UserTurn(text="third"))
    await asyncio.sleep(0)  # the first task starts
    assert slot.busy and slot.kind == "regular"
    assert runs.started == ["first"]
    runs.release.set()
    while len(runs.finished) < 3:
        await runs.idle.wait()
        runs.idle.clear()
        await asyncio.sleep(0)
    assert runs.started == runs.finished == ["first", "second", "third"]
    await asyncio.sleep(0)
    assert not slot.busy and slot.kind is None


async def test_an_abort_cancels_the_task_and_leaves_the_queue_waiting() -> None:
    runs = Runs()
    slot = ActiveTask(runs.turn)
    slot.start(runs.turn(p.UserTurn(text="long")), "compact")
    slot.queue(p.UserTurn(text="next"))
    await asyncio.sleep(0)
    await slot.abort()
    assert not slot.busy and slot.kind is None
    await asyncio.sleep(0)
    assert runs.started == ["long"] and runs.finished == []  # cancelled, and nothing started
    slot.clear_queue()
    await slot.abort()  # nothing runs: a no-op


async def test_a_closed_slot_drops_its_queue() -> None:
    runs = Runs()
    slot = ActiveTask(runs.turn)
    slot.start(runs.turn(p.UserTurn(text="running")), "regular")
    slot.queue(p.UserTurn(text="never"))
    await asyncio.sleep(0)
    await slot.close()
    await asyncio.sleep(0)
    assert runs.started == ["running"] and not slot.busy
