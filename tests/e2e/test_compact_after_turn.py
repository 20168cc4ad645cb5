"""A turn that ends over the auto-compact limit compacts at once, as a compaction of its own
after the turn's one ``turn_complete``; a message sent meanwhile waits behind it and then goes
straight to the model (no compaction before it)."""

from __future__ import annotations

from app.core import Session, ops
from app.demo import Reply
from tests.conftest import collect, of_type, run, types

from .test_compaction import is_compaction_request, usage


async def test_a_turn_over_the_limit_compacts_right_after_its_turn_complete(server, make_config):
    session = await Session.open(make_config(context_window=1000))
    server.enqueue(Reply(text="a1", usage=usage(950)))  # over 90 % of 1000
    server.enqueue(Reply(text="SUMMARY OF q1"))
    turn = await run(session, ops.UserTurn(text="q1"))
    assert types(turn).count("turn_complete") == 1 and turn[-1].kind == "regular"
    assert not of_type(turn, "context_compacted")  # the answer was not held up by it

    compaction = await collect(session, "turn_complete")
    assert types(compaction)[0] == "turn_started" and compaction[0].kind == "compact"
    assert types(compaction).count("turn_complete") == 1
    assert compaction[-1].kind == "compact" and compaction[-1].status == "completed"
    done = of_type(compaction, "context_compacted")[0]
    assert done.trigger == "auto"
    assert types(compaction).index("item_started") < types(compaction).index("context_compacted")

    server.enqueue(Reply(text="a2", usage=usage(300)))
    events = await run(session, ops.UserTurn(text="q2"))
    assert not of_type(events, "context_compacted")  # straight to the model
    bodies = [r.body for r in server.requests_to("responses")]
    assert [is_compaction_request(b) for b in bodies] == [False, True, False]
    await session.close()


async def test_a_message_sent_meanwhile_waits_behind_the_compaction(server, make_config):
    session = await Session.open(make_config(context_window=1000))
    server.enqueue(Reply(text="a1", usage=usage(950)))
    server.enqueue(Reply(text="SUMMARY", initial_delay=0.5))  # a slow summary: q2 comes first
    server.enqueue(Reply(text="a2", usage=usage(300)))
    await run(session, ops.UserTurn(text="q1"))
    events = await collect(session, "turn_started")  # the compaction holds the slot
    await session.submit(ops.UserTurn(text="q2"))
    events += await collect(session, "turn_complete")  # the compaction's
    events += await collect(session, "turn_complete")  # then q2's
    kinds = [(e.type, e.kind) for e in events if e.type in ("turn_started", "turn_complete")]
    assert kinds == [("turn_started", "compact"), ("turn_complete", "compact"),
                     ("turn_started", "regular"), ("turn_complete", "regular")]
    assert len(of_type(events, "context_compacted")) == 1  # one compaction, none overlapping
    bodies = [r.body for r in server.requests_to("responses")]
    assert [is_compaction_request(b) for b in bodies] == [False, True, False]
    await session.close()


async def test_a_turn_under_the_limit_or_with_auto_off_leads_to_no_compaction(
    server, make_config
):
    for config, total in ((make_config(context_window=1000), 800),
                          (make_config(context_window=1000, auto_compact=False), 990)):
        session = await Session.open(config)
        server.enqueue(Reply(text="a1", usage=usage(total)))
        server.enqueue(Reply(text="a2", usage=usage(total)))
        await run(session, ops.UserTurn(text="q1"))
        events = await run(session, ops.UserTurn(text="q2"))
        assert [e.kind for e in of_type(events, "turn_started")] == ["regular"]
        assert not of_type(events, "context_compacted")
        await session.close()
    assert not any(is_compaction_request(r.body) for r in server.requests_to("responses"))
