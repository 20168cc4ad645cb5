"""A session holding a huge message opens with an estimate of its tokens (the gauge marked
approximate), and the exact count follows from a worker thread: the totals are then those an
exact count at open gives."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from app.core import Session
from app.core.items import assistant_message
from app.core.rollout.store import RolloutWriter
from app.core.tokens import counter as tokens
from app.demo import Reply
from tests.conftest import collect, needs_tiktoken, run

HUGE = "log line: request served in 12 ms, cache hit, 200 OK\n" * 4000  # 212 000 characters


async def token_counts_until_exact(session: Session) -> list[Any]:
    """The session's ``TokenCount`` events up to the first that is not approximate."""
    counts: list[Any] = []

    async def consume() -> None:
        async for event in session.events():
            if event.type == "token_count":
                counts.append(event)
                if not event.approximate:
                    return

    await asyncio.wait_for(consume(), 30)
    return counts


async def saved_session_with_huge_reply(server: Any, config: Any) -> str:
    session = await Session.open(config)
    server.enqueue(Reply(text="short answer"))
    from app.core import ops

    await run(session, ops.UserTurn(text="paste the log"))
    assert session._counter.wait_ready(60)
    path = session.rollout_path
    await session.close()
    with RolloutWriter(path) as writer:
        writer.append("response_item", {"item": assistant_message(HUGE, "msg_huge"), "turn_id": "t2"})
    return session.id


@needs_tiktoken  # the exact count needs the real tokenizer
async def test_a_huge_message_is_estimated_at_open_and_counted_exactly_after(
    server: Any, make_config: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = make_config(model="gpt-4.1")
    session_id = await saved_session_with_huge_reply(server, config)

    # Counted exactly while opening (the message is below the huge threshold): the reference.
    monkeypatch.setattr(tokens, "HUGE_TEXT_CHARS", 10**9)
    reference = await Session.open(config, session_id=session_id)
    exact = (await token_counts_until_exact(reference))[0]
    await reference.close()

    monkeypatch.setattr(tokens, "HUGE_TEXT_CHARS", 100_000)
    resumed = await Session.open(config, session_id=session_id)
    counts = await token_counts_until_exact(resumed)
    # First an estimate, marked approximate; then the exact count, as an exact open gives it.
    assert counts[0].approximate
    assert counts[-1].total == exact.total and not counts[-1].approximate
    assert abs(counts[0].total - exact.total) <= exact.total // 10

    # A turn sent at once still decides on exact figures, and works.
    server.enqueue(Reply(text="next answer"))
    from app.core import ops

    await resumed.submit(ops.UserTurn(text="and now?"))
    events = await collect(resumed)
    assert events[-1].status == "completed"
    await resumed.close()
