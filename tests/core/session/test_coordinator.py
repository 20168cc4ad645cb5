"""The session as a coordinator (``app.core.session.coordinator``): one task at a time, messages sent while
one runs queued in order, ops refused in words while a task is busy, and nothing taken once
the session is closed."""

from __future__ import annotations

import asyncio

import pytest

from app.core import Session, ops
from app.demo import Reply
from tests.conftest import collect, of_type, run


async def test_messages_sent_during_a_turn_run_after_it_in_order(server, make_config):
    server.enqueue(Reply(text="one", chunk_size=5, delay_per_chunk=0.01))
    server.enqueue(Reply(text="two"))
    server.enqueue(Reply(text="three"))
    session = await Session.open(make_config())
    for text in ("first", "second", "third"):
        await session.submit(ops.UserTurn(text=text))
    completed: list[str | None] = []
    while len(completed) < 3:
        events = await collect(session, "turn_complete")
        completed.append(events[-1].last_agent_message)
    assert completed == ["one", "two", "three"]
    users = [i["content"][0]["text"] for i in session.history() if i.get("role") == "user"]
    assert users == ["first", "second", "third"]
    await session.close()


async def test_an_interrupt_drops_the_queued_messages_too(server, make_config):
    server.enqueue(Reply(text="word " * 400, chunk_size=5, delay_per_chunk=0.02))
    session = await Session.open(make_config())
    await session.submit(ops.UserTurn(text="long"))
    await collect(session, "agent_message_delta")
    await session.submit(ops.UserTurn(text="queued"))
    await session.submit(ops.Interrupt())
    events = await collect(session, "turn_complete")
    assert events[-1].status == "aborted"
    server.enqueue(Reply(text="fresh"))
    after = await run(session, ops.UserTurn(text="new"))
    assert after[-1].last_agent_message == "fresh"
    users = [i["content"][0]["text"] for i in session.history() if i.get("role") == "user"]
    assert "queued" not in users
    await session.close()


async def test_ops_that_need_an_idle_session_are_refused_while_a_turn_runs(server, make_config):
    server.enqueue(Reply(text="word " * 400, chunk_size=5, delay_per_chunk=0.02))
    session = await Session.open(make_config())
    await session.submit(ops.UserTurn(text="long"))
    await collect(session, "agent_message_delta")
    assert session.busy
    await session.submit(ops.UndoCompaction())
    await session.submit(ops.RetryTurn())
    refused = [(await collect(session, "error"))[-1] for _ in range(2)]
    assert [e.kind for e in refused] == ["invalid_op", "invalid_op"]
    assert all(e.message.startswith("Wait for the current turn") for e in refused)
    await session.submit(ops.Interrupt())
    await collect(session, "turn_complete")
    await session.close()


async def test_an_empty_message_is_refused_and_nothing_runs(server, make_config):
    session = await Session.open(make_config())
    await session.submit(ops.UserTurn(text="   "))
    (error,) = of_type(await collect(session, "error"), "error")
    assert (error.kind, error.message) == ("invalid_op", "Type a message first.")
    assert not session.busy and server.requests_to("responses") == []
    await session.close()


async def test_a_closed_session_takes_no_ops_and_ends_its_event_stream(make_config):
    session = await Session.open(make_config())
    await session.close()
    with pytest.raises(RuntimeError, match="closed"):
        await session.submit(ops.UserTurn(text="hello"))
    seen = [event.type async for event in session.events()]
    assert seen[-1] == "shutdown_complete"
    await asyncio.wait_for(session.close(), 5)  # a second close is harmless
