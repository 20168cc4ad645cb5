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


async def test_a_turn_that_leads_to_a_compaction_runs_it_before_the_queued_turn() -> None:
    runs = Runs()
    kinds: list[str | None] = []

    async def compaction() -> None:
        runs.started.append("compaction")
        kinds.append(slot.kind)  # in the slot: nothing runs beside it

    due = [True]

    def after_turn() -> object:
        if due and due.pop():
            return compaction()
        return None

    slot = ActiveTask(runs.turn, after_turn)  # type: ignore[arg-type]
    slot.start(runs.turn(p.UserTurn(text="first")), "regular")
    slot.queue(p.UserTurn(text="second"))
    runs.release.set()
    while len(runs.finished) < 2:
        await runs.idle.wait()
        runs.idle.clear()
        await asyncio.sleep(0)
    assert runs.started == ["first", "compaction", "second"] and kinds == ["compact"]
    assert not due  # asked once, after the first turn; the compaction itself leads to nothing


async def test_only_a_turn_leads_to_a_compaction() -> None:
    asked: list[str] = []
    def after_turn() -> None:
        asked.append("asked")

    slot = ActiveTask(lambda op: asyncio.sleep(0), after_turn)
    done = asyncio.Event()

    async def compaction_task() -> None:
        done.set()

    slot.start(compaction_task(), "compact")
    await done.wait()
    await asyncio.sleep(0)
    assert asked == [] and not slot.busy


async def test_the_slot_is_held_until_the_ended_turn_has_said_what_follows() -> None:
    """Between a turn's last step and its done callback the slot is still busy, so a message
    sent at that moment is queued behind the compaction the turn leads to (never run first)."""
    order: list[str] = []

    async def turn(op: p.UserTurn) -> None:
        order.append(op.text)

    async def compaction() -> None:
        order.append("compaction")

    due = [True]
    slot = ActiveTask(turn, lambda: compaction() if due and due.pop() else None)
    slot.start(turn(p.UserTurn(text="first")), "regular")
    await asyncio.sleep(0)  # the turn ran to its end; its done callback is queued after us
    assert order == ["first"]
    assert slot.busy  # so the coordinator queues the next message
    slot.queue(p.UserTurn(text="second"))
    while slot.busy or len(order) < 3:
        await asyncio.sleep(0)
    assert order == ["first", "compaction", "second"]
