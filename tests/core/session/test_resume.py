"""Resume (``app.core.session.resume``): a session rebuilt from its rollout with the history, title,
reported figures, undo state and once-said warnings it had, and a broken tool pairing repaired."""

from __future__ import annotations

import json

import pytest

from app.core import Session, ops
from app.core.items import function_call, user_message
from app.demo import Reply
from tests.conftest import collect, of_type, run


async def test_a_reopened_session_has_the_history_title_and_figures_it_had(server, make_config):
    config = make_config()
    session = await Session.open(config)
    server.enqueue(Reply(text="an answer", usage={"input_tokens": 300, "output_tokens": 20,
                                                  "total_tokens": 320}))
    await run(session, ops.UserTurn(text="a question"))
    session.rename("Named")
    history, usage = session.history(), session.token_usage()
    await session.close()

    reopened = await Session.open(config, session.id)
    events = await collect(reopened, "undo_available")
    configured = of_type(events, "session_configured")[0]
    assert configured.resumed and configured.rollout_path == str(session.rollout_path)
    assert reopened.history() == history
    assert reopened._store.title == "Named"
    figures = reopened.token_usage()
    assert (figures.total, figures.input, figures.output, figures.source) == (
        usage.total, 300, 20, "api"
    )
    await reopened.close()


async def test_a_compaction_stays_undoable_after_reopening(server, make_config):
    config = make_config()
    session = await Session.open(config)
    server.enqueue(Reply(text="an answer"))
    await run(session, ops.UserTurn(text="a question"))
    server.enqueue(Reply(text="THE SUMMARY"))
    await run(session, ops.Compact())
    compacted = session.history()
    await session.close()
    reopened = await Session.open(config, session.id)
    state = of_type(await collect(reopened, "undo_available"), "undo_available")[-1]
    assert state.item_id and reopened.history() == compacted
    await reopened.close()


async def test_a_call_left_without_its_output_is_repaired_with_a_warning(server, make_config):
    config = make_config()
    session = await Session.open(config)
    server.enqueue(Reply(text="an answer"))
    await run(session, ops.UserTurn(text="a question"))
    await session.close()
    with session.rollout_path.open("a") as rollout:  # a crash between a call and its output
        record = {"type": "response_item", "payload": {
            "item": function_call("read_file", "{}", "c9"), "turn_id": "t9"}}
        rollout.write(json.dumps(record) + "\n")
    reopened = await Session.open(config, session.id)
    events = await collect(reopened, "undo_available")
    assert any("Repaired" in e.message for e in of_type(events, "warning"))
    kinds = [(i.get("type"), i.get("call_id")) for i in reopened.history()]
    assert kinds[-2:] == [("function_call", "c9"), ("function_call_output", "c9")]
    await reopened.close()


async def test_resuming_an_unknown_id_says_so(make_config):
    with pytest.raises(FileNotFoundError, match="No saved conversation"):
        await Session.open(make_config(), "no-such-id")


def test_replay_restores_a_withdrawn_turn_as_not_sent(make_config) -> None:
    session = Session(make_config(), "sid")
    kept = user_message("kept")

    class Record:
        def __init__(self, type_: str, payload: dict) -> None:
            self.type, self.payload = type_, payload

    session._parts.resume.replay([
        Record("response_item", {"item": kept, "turn_id": "t1"}),
        Record("response_item", {"item": user_message("too big"), "turn_id": "t2"}),
        Record("history_replaced", {"turn_id": "t2", "replacement_history": [kept]}),
    ])
    assert session.history() == [kept]
    entries = [e for e in session.transcript() if e["kind"] == "item"]
    assert [bool(e.get("not_sent")) for e in entries] == [False, True]
