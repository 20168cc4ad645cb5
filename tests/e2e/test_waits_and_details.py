"""Waits said in words and errors with their detail, from the real core against the scripted
server: a stalled stream is announced (and its end), and a failed request's error carries its
technical detail, kept for resume and scrubbed of the key."""

from __future__ import annotations

from typing import Any

import pytest

from app.core import Session, ops
from app.core.providers import sampling
from app.core.providers.sse import StreamActivity, json_events
from app.demo import Fault, Reply
from tests.conftest import TEST_KEY, collect, of_type, run


@pytest.fixture
def quick_stall_notice(monkeypatch: pytest.MonkeyPatch) -> None:
    """Announce a stall after 50 ms instead of 5 s (the server then holds for good)."""
    monkeypatch.setattr(sampling, "STALL_NOTICE_SECONDS", 0.05)


async def test_a_stalled_stream_is_announced_with_the_request_timeout(
    server: Any, make_config: Any, quick_stall_notice: None
) -> None:
    # The reasoning item streams, then the server sends nothing until the client leaves.
    server.enqueue(Reply(reasoning="thinking", text="never sent", pause_after_items=1))
    session = await Session.open(make_config(request_timeout=300.0))
    await session.submit(ops.UserTurn(text="think hard"))
    events = await collect(session, "stream_waiting")
    waiting = events[-1]
    assert waiting.stalled and waiting.turn_id == of_type(events, "turn_started")[0].turn_id
    assert waiting.since_seconds >= 0.05
    assert waiting.timeout_seconds == 300.0
    await session.submit(ops.Interrupt())
    events = await collect(session, "turn_complete")
    assert events[-1].status == "aborted"
    # The wait is said to be over before the turn ends, and only once.
    ended = of_type(events, "stream_waiting")
    assert [event.stalled for event in ended] == [False]
    await session.close()


async def test_a_reply_that_flows_says_nothing_about_waiting(
    server: Any, make_config: Any
) -> None:
    server.enqueue(Reply(text="quick answer"))
    session = await Session.open(make_config())
    events = await run(session, ops.UserTurn(text="hi"))
    assert events[-1].status == "completed"
    assert not of_type(events, "stream_waiting")
    await session.close()


async def test_bytes_that_show_nothing_still_end_a_stall() -> None:
    """A chunk of the body (even one that completes no event) ends a stall at once."""
    chunks: list[bytes] = [b": keep-alive\n\n", b'data: {"a": 1}\n\n']
    resumed: list[bool] = []
    activity = StreamActivity()
    activity.on_resume = lambda: resumed.append(True)
    sampling.STREAM_ACTIVITY.set(activity)

    async def body() -> Any:
        for chunk in chunks:
            yield chunk

    try:
        reader = json_events(body())
        activity.mark_stalled()
        assert await anext(reader) == []  # the comment: no event, but bytes
        assert resumed == [True] and not activity.stalled
        assert await anext(reader) == [{"a": 1}]
        assert resumed == [True]  # not stalled any more: said once
    finally:
        sampling.STREAM_ACTIVITY.set(None)


async def test_a_failed_request_carries_its_detail_and_keeps_it_for_resume(
    server: Any, make_config: Any
) -> None:
    page = (
        "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway"
        f"</h1></center><hr><center>nginx</center><!-- key {TEST_KEY} --></body></html>"
    )
    server.enqueue(Fault.status(401, f"Incorrect API key provided: {TEST_KEY}. {page}"))
    config = make_config(max_retries=0)
    session = await Session.open(config)
    events = await run(session, ops.UserTurn(text="hello"))
    [error] = of_type(events, "error")
    assert error.details
    assert "401" in error.details
    assert TEST_KEY not in error.details and TEST_KEY not in error.message
    session_id = session.id
    await session.close()

    reopened = await Session.open(config, session_id=session_id)
    replayed = [event for event in reopened.replay_events() if event.type == "error"]
    assert [(event.message, event.details) for event in replayed] == [
        (error.message, error.details)
    ]
    await reopened.close()
