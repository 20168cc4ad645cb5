"""The ``Compact`` op's task (``app.core.session.manual_compaction``): a turn of its own, a needless one
said as a background line, a focus right after a compaction summarising the full history again,
and a failed message offered again once the compaction kept it."""

from __future__ import annotations

from app.core import Session, ops
from app.core.compaction.runner import NOTHING_NEW
from app.demo import Fault, Reply
from tests.conftest import collect, input_texts, of_type, run, types


async def test_compacting_an_empty_conversation_says_there_is_nothing_to_do(
    server, make_config
):
    session = await Session.open(make_config())
    events = await run(session, ops.Compact())
    assert [e.kind for e in of_type(events, "turn_started")] == ["compact"]
    assert events[-1].kind == "compact" and events[-1].status == "completed"
    assert [e.message for e in of_type(events, "background")] == ["Nothing to compact yet."]
    assert server.requests_to("responses") == []
    await session.close()


async def test_a_second_compaction_without_a_focus_has_nothing_new(server, make_config):
    session = await Session.open(make_config())
    server.enqueue(Reply(text="answer"))
    await run(session, ops.UserTurn(text="question"))
    server.enqueue(Reply(text="SUMMARY"))
    first = await run(session, ops.Compact())
    assert "context_compacted" in types(first) and first[-1].status == "completed"
    again = await run(session, ops.Compact())
    assert [e.message for e in of_type(again, "background")] == [NOTHING_NEW]
    assert len(server.requests_to("responses")) == 2
    await session.close()


async def test_a_focus_right_after_a_compaction_summarises_the_full_history(server, make_config):
    session = await Session.open(make_config())
    server.enqueue(Reply(text="answer"))
    await run(session, ops.UserTurn(text="question"))
    server.enqueue(Reply(text="SUMMARY"))
    await run(session, ops.Compact())
    server.enqueue(Reply(text="FOCUSED SUMMARY"))
    events = await run(session, ops.Compact(focus="the dates"))
    assert "compaction_undone" in types(events)  # from the full history, not the summary
    focused = server.requests_to("responses")[-1].body
    assert ("assistant", "answer") in input_texts(focused)
    await session.close()


async def test_a_failed_message_is_offered_again_after_a_compaction_that_kept_it(
    server, make_config
):
    session = await Session.open(make_config(max_retries=0))
    server.enqueue(Reply(text="answer"))
    await run(session, ops.UserTurn(text="first"))
    server.enqueue(Fault.status(500, "trouble"))
    failed = await run(session, ops.UserTurn(text="second"))
    assert failed[-1].status == "failed"
    server.enqueue(Reply(text="SUMMARY"))
    events = await run(session, ops.Compact())
    assert events[-1].status == "completed"
    (offer,) = await collect(session, "retry_available")  # said once the compaction ended
    assert offer.turn_id == failed[-1].turn_id
    await session.close()
