"""The conversation is a tree (issue 36): edit, regenerate, switch and fork, before and after
compactions, on both APIs, driven through a real session against the scripted server. The
model's view on every branch is the one it had at that point, and a branch's requests say so."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.core import Session, ops
from app.core.rollout.store import read_rollout
from app.core.sessions.library import SessionLibrary
from app.demo import Reply, ToolCall
from tests.conftest import collect, input_texts, of_type, run

WIRES = ["responses", "chat"]


def ask(server: Any, wire: str, text: str) -> None:
    server.enqueue(Reply(text=text), endpoint=wire)


def sent(server: Any, wire: str, n: int = -1) -> list[tuple[str, str]]:
    """(role, text) of the ``n``-th request's conversation (the instructions left out)."""
    body = server.requests_to(wire)[n].body
    if wire == "responses":
        pairs = input_texts(body)
    else:
        pairs = [(m["role"], m["content"] or "") for m in body["messages"]]
    return [(role, text) for role, text in pairs if role in ("user", "assistant")]


def raw_input(server: Any, wire: str, n: int = -1) -> str:
    body = server.requests_to(wire)[n].body
    return json.dumps(body["input"] if wire == "responses" else body["messages"], sort_keys=True)


async def turn(session: Session, text: str) -> str:
    events = await run(session, ops.UserTurn(text=text))
    assert events[-1].status == "completed", events
    return str(of_type(events, "turn_started")[0].turn_id)


async def op_until(session: Session, op: Any, until: str) -> list[Any]:
    await session.submit(op)
    return await collect(session, until)


@pytest.mark.parametrize("wire", WIRES)
async def test_an_edit_is_a_new_branch_from_the_parent_and_the_old_one_stays(
    server, make_config, wire
):
    session = await Session.open(make_config(wire_api=wire))
    ask(server, wire, "Paris.")
    first = await turn(session, "capital of France?")
    ask(server, wire, "Berlni.")
    second = await turn(session, "capital of Germny?")

    ask(server, wire, "Berlin.")
    events = await run(session, ops.EditTurn(turn_id=second, text="capital of Germany?"))
    assert events[-1].status == "completed"
    assert sent(server, wire) == [
        ("user", "capital of France?"), ("assistant", "Paris."), ("user", "capital of Germany?"),
    ]
    edited = of_type(events, "turn_started")[0].turn_id
    switched = of_type(events, "branch_switched")
    assert [(e.turn_id, e.reason) for e in switched] == [(edited, "edit")]
    branches = of_type(events, "turn_branches")
    assert [(b.turn_id, b.siblings, b.index, b.regenerated) for b in branches] == [
        (edited, [second, edited], 1, False)
    ]
    # The edit sends the prefix the original turn had: only the message differs.
    original, again = raw_input(server, wire, 1), raw_input(server, wire, 2)
    assert original.replace("Germny", "Germany") == again

    # The old branch stays, whole; switching back shows it and the model sees it again.
    events = await op_until(session, ops.SwitchBranch(turn_id=second), "branch_switched")
    assert of_type(events, "branch_switched")[0].turn_id == second
    texts = [text for _, text in input_texts({"input": session.history()})]
    assert texts[-2:] == ["capital of Germny?", "Berlni."]
    tree = session.tree()
    assert [(n.turn_id, n.parent) for n in tree.nodes] == [
        (first, None), (second, first), (edited, first)
    ]
    assert tree.active == second and [n.active for n in tree.nodes] == [True, True, False]
    await session.close()


@pytest.mark.parametrize("wire", WIRES)
async def test_regenerate_sends_byte_for_byte_the_input_the_turn_was_sent(
    server, make_config, wire
):
    session = await Session.open(make_config(wire_api=wire))
    ask(server, wire, "One.")
    await turn(session, "first")
    ask(server, wire, "Two.")
    second = await turn(session, "second")
    ask(server, wire, "Three.")
    await turn(session, "third")

    ask(server, wire, "Two, again.")
    events = await run(session, ops.RegenerateTurn(turn_id=second))
    assert events[-1].status == "completed"
    assert raw_input(server, wire, -1) == raw_input(server, wire, 1)
    regenerated = of_type(events, "turn_branches")[0]
    assert regenerated.regenerated and regenerated.siblings[0] == second
    assert [text for _, text in input_texts({"input": session.history()})][-2:] == [
        "second", "Two, again."
    ]
    await session.close()


async def test_a_branch_before_a_compaction_sees_the_history_from_before_it(
    server, make_config
):
    session = await Session.open(make_config())
    ask(server, "responses", "A1")
    first = await turn(session, "q1")
    ask(server, "responses", "A2")
    await turn(session, "q2")
    server.enqueue(Reply(text="SUMMARY OF Q1 AND Q2"))
    compacted = await run(session, ops.Compact())
    assert of_type(compacted, "context_compacted")
    ask(server, "responses", "A3")
    await turn(session, "q3")
    assert "SUMMARY OF Q1 AND Q2" in raw_input(server, "responses")

    # Regenerating the first turn: the view it had then, no summary, nothing after it.
    ask(server, "responses", "A1 again")
    events = await run(session, ops.RegenerateTurn(turn_id=first))
    assert events[-1].status == "completed"
    assert sent(server, "responses") == [("user", "q1")]
    assert raw_input(server, "responses") == raw_input(server, "responses", 0)
    # Its transcript is that branch's: no compaction marker is drawn on it.
    drawn = session.replay_events()
    assert not of_type(drawn, "context_compacted")
    # The compacted branch is still there, compaction and all.
    await op_until(session, ops.SwitchBranch(turn_id=first), "branch_switched")
    texts = " ".join(text for _, text in input_texts({"input": session.history()}))
    assert "SUMMARY OF Q1 AND Q2" in texts and "q3" in texts
    assert of_type(session.replay_events(), "context_compacted")
    await session.close()


async def test_turn_ids_are_stable_and_a_reopened_session_opens_on_the_active_branch(
    server, make_config
):
    config = make_config()
    session = await Session.open(config)
    ask(server, "responses", "A1")
    first = await turn(session, "q1")
    ask(server, "responses", "A2")
    second = await turn(session, "q2")
    ask(server, "responses", "B2")
    events = await run(session, ops.EditTurn(turn_id=second, text="q2 edited"))
    edited = of_type(events, "turn_started")[0].turn_id
    history = session.history()
    await session.close()

    reopened = await Session.open(config, session_id=session.id)
    assert reopened.history() == history
    drawn = reopened.replay_events()
    assert [e.turn_id for e in of_type(drawn, "item_completed")] == [first, first, edited, edited]
    assert [(b.turn_id, b.siblings, b.index) for b in of_type(drawn, "turn_branches")] == [
        (edited, [second, edited], 1)
    ]
    await op_until(reopened, ops.SwitchBranch(turn_id=second), "branch_switched")
    await reopened.close()
    again = await Session.open(config, session_id=session.id)
    assert again.tree().active == second
    assert [text for _, text in input_texts({"input": again.history()})][-2:] == ["q2", "A2"]
    await again.close()


async def test_a_fork_holds_the_path_up_to_the_turn_and_the_original_is_untouched(
    server, make_config
):
    config = make_config()
    session = await Session.open(config)
    ask(server, "responses", "A1")
    first = await turn(session, "q1")
    ask(server, "responses", "A2")
    await turn(session, "q2")
    before = session.rollout_path.read_bytes()

    events = await op_until(session, ops.ForkSession(turn_id=first), "session_forked")
    forked = of_type(events, "session_forked")[0]
    assert forked.source_session_id == session.id and forked.turn_id == first
    assert session.rollout_path.read_bytes() == before
    fork = await Session.open(config, session_id=forked.session_id)
    assert [text for _, text in input_texts({"input": fork.history()})][-2:] == ["q1", "A1"]
    assert [n.turn_id for n in fork.tree().nodes] == [first]
    meta = read_rollout(fork.rollout_path)[0][0].payload
    assert meta["forked_from"] == {"session_id": session.id, "turn_id": first}
    listed = SessionLibrary(config.sessions_dir).get(forked.session_id)
    assert listed is not None and listed.forked_from == session.id
    await fork.close()
    await session.close()


async def test_branch_ops_are_refused_in_words_for_an_unknown_turn_and_while_busy(
    server, make_config
):
    session = await Session.open(make_config())
    ask(server, "responses", "A1")
    first = await turn(session, "q1")
    for op in (
        ops.EditTurn(turn_id="turn_nope", text="x"), ops.RegenerateTurn(turn_id="turn_nope"),
        ops.SwitchBranch(turn_id="turn_nope"), ops.ForkSession(turn_id="turn_nope"),
    ):
        events = await op_until(session, op, "error")
        assert "no turn 'turn_nope'" in events[-1].message
    server.enqueue(Reply(text="slow " * 50, chunk_size=2, delay_per_chunk=0.05))
    await session.submit(ops.UserTurn(text="q2"))
    await collect(session, "item_started")
    events = await op_until(session, ops.RegenerateTurn(turn_id=first), "error")
    assert "Wait for the current turn" in events[-1].message
    await session.submit(ops.Interrupt())
    await collect(session, "turn_complete")
    await session.close()


async def test_recall_searches_the_active_branch_and_find_says_which_branch(
    server, make_config
):
    session = await Session.open(make_config())
    ask(server, "responses", "noted")
    await turn(session, "the launch code is ZEBRA-42")
    ask(server, "responses", "ok")
    second = await turn(session, "the backup code is OKAPI-7")
    ask(server, "responses", "fine")
    await run(session, ops.EditTurn(turn_id=second, text="nothing to add"))

    # The model's recall call: what another branch said is not found, this branch's is.
    for query, call_id in (("OKAPI", "call_1"), ("ZEBRA", "call_2")):
        server.enqueue(Reply(function_calls=[ToolCall("recall", {"query": query}, call_id)]))
    server.enqueue(Reply(text="looked"))
    await run(session, ops.UserTurn(text="what codes did I give?"))
    outputs = {
        item["call_id"]: item["output"]
        for item in server.requests_to("responses")[-1].body["input"]
        if item.get("type") == "function_call_output"
    }
    assert "OKAPI-7" not in outputs["call_1"] and "ZEBRA-42" in outputs["call_2"]
    events = await op_until(session, ops.FindInConversation(query="OKAPI"), "conversation_matches")
    match = of_type(events, "conversation_matches")[0].matches[0]
    assert match.turn_id == second and not match.on_branch and not match.in_view
    await session.close()


async def test_an_edit_can_carry_a_summary_of_the_branch_it_leaves(server, make_config):
    session = await Session.open(make_config())
    ask(server, "responses", "A1")
    await turn(session, "plan a trip")
    ask(server, "responses", "Rome is hot in July.")
    second = await turn(session, "we tried Rome in July")

    server.enqueue(Reply(text="- Rome in July was judged too hot."))  # the branch summary
    ask(server, "responses", "Then Oslo.")
    events = await run(
        session, ops.EditTurn(turn_id=second, text="what about Oslo?", carry_summary=True)
    )
    summary_request = server.requests_to("responses")[-2].body
    assert ("user", "we tried Rome in July") in input_texts(summary_request)
    switched = of_type(events, "branch_switched")[0]
    assert switched.summary == "- Rome in July was judged too hot."
    texts = [text for _, text in sent(server, "responses")]
    assert texts[-1] == "what about Oslo?"
    assert "<branch_summary>" in texts[-2] and "judged too hot" in texts[-2]
    await session.close()


async def test_a_switch_carries_the_person_s_own_words_when_the_model_cannot(
    server, make_config
):
    session = await Session.open(make_config(max_retries=0, branch_summary="always"))
    ask(server, "responses", "A1")
    first = await turn(session, "hello")
    ask(server, "responses", "B")
    await turn(session, "my budget is 500 euros")
    ask(server, "responses", "C")
    await run(session, ops.EditTurn(turn_id=first, text="hi", carry_summary=False))

    from app.demo import Fault

    server.enqueue(Fault.status(500, "down"))  # the summary request fails
    events = await op_until(session, ops.SwitchBranch(turn_id=first), "branch_switched")
    switched = of_type(events, "branch_switched")[-1]
    assert "budget is 500 euros" not in switched.summary  # the branch left is "hi" → C
    assert switched.summary.startswith("- ")
    model_view = " ".join(text for _, text in input_texts({"input": session.history()}))
    assert "<branch_summary>" in model_view
    carried = of_type(session.replay_events(), "branch_summary_carried")
    assert [(c.text, c.by_model, c.undone) for c in carried] == [
        (switched.summary, False, False)
    ]
    await session.close()


def model_view(session: Session) -> str:
    return " ".join(text for _, text in input_texts({"input": session.history()}))


async def test_a_carried_summary_is_undone_out_of_the_model_s_view_and_stays_undone(
    server, make_config
):
    config = make_config(branch_summary="always")
    session = await Session.open(config)
    ask(server, "responses", "A1")
    first = await turn(session, "hello")
    ask(server, "responses", "B")
    await turn(session, "my budget is 500 euros")
    server.enqueue(Reply(text="- The budget was 500 euros."))  # the branch summary
    ask(server, "responses", "C")
    events = await run(session, ops.EditTurn(turn_id=first, text="hi"))
    edited = of_type(events, "turn_started")[0].turn_id
    assert "<branch_summary>" in model_view(session)

    await session.submit(ops.UndoBranchSummary(turn_id=edited))
    events = await collect(session, "token_count")
    assert [e.turn_id for e in of_type(events, "branch_summary_undone")] == [edited]
    assert "<branch_summary>" not in model_view(session)
    gauge = of_type(events, "token_count")[-1]  # the gauge follows: a fresh estimate
    assert gauge == session.token_usage() and gauge.source == "estimate"
    carried = of_type(session.replay_events(), "branch_summary_carried")
    assert [(c.turn_id, c.undone) for c in carried] == [(edited, True)]
    # Once more: refused in words, nothing changes.
    await session.submit(ops.UndoBranchSummary(turn_id=edited))
    error = of_type(await collect(session, "error"), "error")[0]
    assert "No summary of a branch left behind" in error.message
    # The next request does not hold it, and a reopened session has it undone too.
    ask(server, "responses", "D")
    await turn(session, "and now?")
    assert "<branch_summary>" not in " ".join(t for _, t in sent(server, "responses"))
    await session.close()
    reopened = await Session.open(config, session_id=session.id)
    assert "<branch_summary>" not in model_view(reopened)
    carried = of_type(reopened.replay_events(), "branch_summary_carried")
    assert [(c.turn_id, c.undone) for c in carried] == [(edited, True)]
    await reopened.close()
