"""The session's event stream: order kept, deltas joined only while the consumer is behind."""

from __future__ import annotations

import asyncio

from app.core import protocol as p
from app.core.session.event_stream import EventStream


async def drain(stream: EventStream) -> list[object]:
    events: list[object] = []
    while (event := await stream.get()) is not None:
        events.append(event)
    return events


async def test_deltas_queued_behind_each_other_are_joined_into_one_event() -> None:
    stream = EventStream()
    stream.put(p.TurnStarted(turn_id="t1"))
    for part in ["Hel", "lo", ", ", "world"]:
        stream.put_delta("t1", "msg1", part)
    stream.put(p.TurnComplete(turn_id="t1"))
    stream.end()

    events = await drain(stream)

    assert [getattr(e, "type", None) for e in events] == [
        "turn_started", "agent_message_delta", "turn_complete"
    ]
    delta = events[1]
    assert isinstance(delta, p.AgentMessageDelta)
    assert (delta.turn_id, delta.item_id, delta.delta) == ("t1", "msg1", "Hello, world")


async def test_deltas_of_different_messages_or_around_other_events_stay_apart() -> None:
    stream = EventStream()
    stream.put_delta("t1", "a", "1")
    stream.put_delta("t1", "b", "2")  # another message
    stream.put(p.Warning(message="note"))
    stream.put_delta("t1", "b", "3")  # after another event: never moved before it
    stream.put_delta("t2", "b", "4")  # another turn
    stream.end()

    events = await drain(stream)

    assert [(getattr(e, "item_id", "-"), getattr(e, "delta", e.type)) for e in events] == [
        ("a", "1"), ("b", "2"), ("-", "warning"), ("b", "3"), ("b", "4")
    ]


async def test_a_consumer_that_keeps_up_sees_every_delta_on_its_own() -> None:
    stream = EventStream()
    seen: list[str] = []

    async def consume() -> None:
        while (event := await stream.get()) is not None:
            seen.append(event.delta)

    consumer = asyncio.ensure_future(consume())
    for part in ["a", "b", "c"]:
        stream.put_delta("t1", "m", part)
        await asyncio.sleep(0)  # the consumer runs and takes it
        await asyncio.sleep(0)
    stream.end()
    await asyncio.wait_for(consumer, 1)

    assert seen == ["a", "b", "c"]


async def test_a_delta_taken_by_the_consumer_is_not_extended_afterwards() -> None:
    stream = EventStream()
    stream.put_delta("t1", "m", "first")
    taken = await stream.get()
    stream.put_delta("t1", "m", "second")
    stream.end()

    assert isinstance(taken, p.AgentMessageDelta) and taken.delta == "first"
    rest = await drain(stream)
    assert [e.delta for e in rest] == ["second"]  # type: ignore[attr-defined]


async def test_get_waits_for_an_event_and_returns_none_once_ended() -> None:
    stream = EventStream()
    waiting = asyncio.ensure_future(stream.get())
    await asyncio.sleep(0)
    assert not waiting.done()
    stream.put(p.Warning(message="hi"))
    assert (await asyncio.wait_for(waiting, 1)).message == "hi"  # type: ignore[union-attr]
    stream.end()
    assert await stream.get() is None
    assert await stream.get() is None  # and stays ended


async def test_a_cancelled_wait_does_not_break_the_stream() -> None:
    stream = EventStream()
    waiting = asyncio.ensure_future(stream.get())
    await asyncio.sleep(0)
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)
    stream.put(p.Warning(message="after"))
    event = await asyncio.wait_for(stream.get(), 1)
    assert isinstance(event, p.Warning) and event.message == "after"
