"""Retry of a failed turn (issue 16, item 4): the core decides when a retry is possible
(``RetryAvailable``) and runs the turn again on the history as it is, without recording the
user's message a second time; the rollout and a reopened session show it once, then the reply.
"""

from __future__ import annotations

from app.core import Session, ops
from app.core.rollout.store import read_rollout
from app.demo import Fault, Reply
from tests.conftest import input_texts, of_type, run, types

WINDOW = 4_096


def user_texts(items: list[dict]) -> list[str]:
    return [text for role, text in input_texts({"input": items}) if role == "user"]


async def fail_a_turn(session: Session, server, text: str = "the question") -> list:
    server.enqueue(Fault.status(500, "upstream is down"))
    events = await run(session, ops.UserTurn(text=text))
    assert events[-1].status == "failed"
    return events


async def test_a_failed_turn_is_offered_for_retry_and_runs_again_once(server, make_config):
    session = await Session.open(make_config(max_retries=0))
    events = await fail_a_turn(session, server)
    turn_id = of_type(events, "turn_started")[0].turn_id
    error = of_type(events, "error")[0]
    assert error.turn_id == turn_id
    offered = of_type(events, "retry_available")
    assert [(e.turn_id, e.reason) for e in offered] == [(turn_id, "")]
    assert types(events).index("retry_available") < types(events).index("turn_complete")

    server.enqueue(Reply(text="the answer"))
    events = await run(session, ops.RetryTurn())
    assert events[-1].status == "completed"
    assert events[-1].last_agent_message == "the answer"
    withdrawn = of_type(events, "retry_available")
    assert len(withdrawn) == 1 and withdrawn[0].turn_id is None
    # The message is not shown or recorded again: no user item event in the retried turn.
    assert not [e for e in of_type(events, "item_completed") if e.item.kind == "user_message"]

    # The retried request carries the message once, exactly as the failed one did.
    failed_body, retried_body = (r.body for r in server.requests_to("responses"))
    assert user_texts(retried_body["input"]) == user_texts(failed_body["input"])
    assert user_texts(retried_body["input"]) == ["the question"]
    assert user_texts(session.history()) == ["the question"]
    assert [item["role"] for item in session.history()] == ["user", "assistant"]
    path = session.rollout_path
    await session.close()

    # On disk: the message once, the error note, then the reply.
    records = read_rollout(path)[0]
    items = [r.payload["item"] for r in records if r.type == "response_item"]
    notes = [r.payload for r in records if r.type == "event" and r.payload["kind"] == "error"]
    assert len(notes) == 1 and "upstream is down" in notes[0]["message"]
    assert [(i["role"], i["content"][0]["text"]) for i in items] == [
        ("user", "the question"),
        ("assistant", "the answer"),
    ]
    # A reopened session draws the same thing.
    reopened = await Session.open(make_config(max_retries=0), session_id=session.id)
    shown = [
        (e.item.kind, e.item.data.get("text"))
        for e in reopened.replay_events()
        if e.type == "item_completed"
    ]
    assert shown == [("user_message", "the question"), ("agent_message", "the answer")]
    assert user_texts(reopened.history()) == ["the question"]
    await reopened.close()


async def test_a_retry_that_fails_again_is_offered_again(server, make_config):
    session = await Session.open(make_config(max_retries=0))
    await fail_a_turn(session, server)
    server.enqueue(Fault.status(503, "still down"))
    events = await run(session, ops.RetryTurn())
    assert events[-1].status == "failed"
    retried = of_type(events, "turn_started")[0].turn_id
    assert [e.turn_id for e in of_type(events, "retry_available")] == [None, retried]
    assert of_type(events, "error")[0].turn_id == retried
    server.enqueue(Reply(text="third time lucky"))
    events = await run(session, ops.RetryTurn())
    assert events[-1].last_agent_message == "third time lucky"
    assert user_texts(session.history()) == ["the question"]
    await session.close()


async def test_nothing_to_retry_is_refused_in_words(server, make_config):
    session = await Session.open(make_config(max_retries=0))
    server.enqueue(Reply(text="fine"))
    await run(session, ops.UserTurn(text="hello"))
    await session.submit(ops.RetryTurn())
    events = await _until_error(session)
    assert events[-1].kind == "invalid_op"
    assert events[-1].message == "There is no failed message to send again."
    assert len(server.requests_to("responses")) == 1  # nothing was sent
    await session.close()


async def test_a_new_message_withdraws_the_retry(server, make_config):
    session = await Session.open(make_config(max_retries=0))
    failed = await fail_a_turn(session, server)
    server.enqueue(Reply(text="answer to the new one"))
    events = await run(session, ops.UserTurn(text="never mind, another question"))
    withdrawn = of_type(events, "retry_available")
    assert [e.turn_id for e in withdrawn] == [None]
    assert types(events).index("retry_available") < types(events).index("item_completed")
    await session.submit(ops.RetryTurn())
    refused = (await _until_error(session))[-1]
    assert refused.kind == "invalid_op"
    assert of_type(failed, "turn_started")[0].turn_id not in refused.message
    assert user_texts(session.history()) == ["the question", "never mind, another question"]
    await session.close()


async def test_a_message_that_was_never_sent_is_not_offered_for_retry(server, make_config):
    session = await Session.open(make_config(context_window=WINDOW, max_retries=0))
    events = await run(session, ops.UserTurn(text="word " * 6_000))
    assert events[-1].status == "failed"
    assert of_type(events, "message_not_sent")  # it goes back to the composer instead
    assert not of_type(events, "retry_available")
    await session.close()


async def _until_error(session: Session) -> list:
    from tests.conftest import collect

    return await collect(session, "error")
