"""The user turn as a task (``app.core.session.turn.task``), driven through a session against the
scripted server: what is recorded before sampling, the refusal of a message that cannot fit,
an interruption's record, and the re-run of a failed turn."""

from __future__ import annotations

import json

from app.core import Session, ops
from app.demo import Fault, Reply
from tests.conftest import collect, of_type, run, types


def record_types(session: Session) -> list[str]:
    return [json.loads(line)["type"] for line in session.rollout_path.read_text().splitlines()]


async def test_a_turn_records_its_context_and_message_before_sampling(server, make_config):
    server.enqueue(Reply(text="hi"))
    session = await Session.open(make_config())
    events = await run(session, ops.UserTurn(text="hello"))
    assert "turn_started" in types(events) and events[-1].status == "completed"
    kinds = record_types(session)
    assert kinds[:3] == ["session_meta", "turn_context", "response_item"]
    context = json.loads(session.rollout_path.read_text().splitlines()[1])["payload"]
    assert context["model"] == "test-model" and "retry" not in context
    await session.close()


async def test_a_message_that_cannot_fit_is_refused_and_nothing_is_saved(server, make_config):
    session = await Session.open(make_config(context_window=4_096))
    text = "word " * 20_000
    events = await run(session, ops.UserTurn(text=text))
    assert events[-1].status == "failed"
    (not_sent,) = of_type(events, "message_not_sent")
    assert not_sent.text == text and "not sent" in not_sent.reason
    assert of_type(events, "error")[0].kind == "message_too_large"
    assert session.history() == [] and server.requests_to("responses") == []
    assert not of_type(events, "retry_available")  # nothing recorded: nothing to re-run
    await session.close()


async def test_an_interrupted_turn_is_recorded_as_interrupted(server, make_config):
    server.enqueue(Reply(text="word " * 400, chunk_size=5, delay_per_chunk=0.02))
    session = await Session.open(make_config())
    await session.submit(ops.UserTurn(text="a long story"))
    await collect(session, "agent_message_delta")
    await session.submit(ops.Interrupt())
    events = await collect(session, "turn_complete")
    assert events[-1].status == "aborted"
    lines = [json.loads(line) for line in session.rollout_path.read_text().splitlines()]
    assert {"kind": "interrupted", "turn_id": events[-1].turn_id} in [
        line["payload"] for line in lines if line["type"] == "event"
    ]
    assert any(line["payload"].get("interrupted") for line in lines
               if line["type"] == "response_item")
    await session.close()


async def test_a_failed_turn_runs_again_without_recording_its_message_twice(
    server, make_config
):
    server.enqueue(Fault.status(500, "Internal trouble"))
    session = await Session.open(make_config(max_retries=0))
    failed = await run(session, ops.UserTurn(text="try me"))
    assert failed[-1].status == "failed"
    server.enqueue(Reply(text="worked"))
    again = await run(session, ops.RetryTurn())
    assert again[-1].status == "completed"
    users = [i for i in session.history() if i.get("role") == "user"]
    assert len(users) == 1
    contexts = [json.loads(line)["payload"] for line in
                session.rollout_path.read_text().splitlines()
                if json.loads(line)["type"] == "turn_context"]
    assert [c.get("retry", False) for c in contexts] == [False, True]
    await session.close()
