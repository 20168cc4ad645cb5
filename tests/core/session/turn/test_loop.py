"""A turn's sampling loop (``app.core.session.turn.loop``), driven through a session against the
scripted server: tool rounds until a final answer, what each output shows, and the overflow
and error endings."""

from __future__ import annotations

from pathlib import Path

from app.core import Session, ops
from app.core.session.turn.loop import OVERFLOW_AUTO_OFF
from app.demo import Fault, Reply, ToolCall
from tests.conftest import of_type, run, types


async def test_the_loop_runs_tool_calls_and_samples_again_until_an_answer(
    server, make_config, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("alpha")
    server.enqueue(Reply(function_calls=[ToolCall("read_file", {"path": "a.txt"}, "c1")]))
    server.enqueue(Reply(function_calls=[ToolCall("read_file", {"path": "a.txt"}, "c2")]))
    server.enqueue(Reply(text="It says alpha."))
    session = await Session.open(make_config(workspace=workspace))
    events = await run(session, ops.UserTurn(text="read a.txt twice"))
    assert events[-1].status == "completed"
    assert events[-1].last_agent_message == "It says alpha."
    bodies = [r.body for r in server.requests_to("responses")]
    assert len(bodies) == 3
    outputs = [i for i in bodies[2]["input"] if i.get("type") == "function_call_output"]
    assert [o["call_id"] for o in outputs] == ["c1", "c2"]
    assert all(o["output"].endswith("alpha") for o in outputs)
    # Each call is shown when the model makes it, and its output once it ran.
    shown = [(e.type, e.item.kind) for e in events if e.type in ("item_started", "item_completed")]
    assert shown.index(("item_started", "function_call")) < shown.index(
        ("item_completed", "function_call_output")
    )
    assert types(events).count("token_count") >= 3  # the figures after every sample
    await session.close()


async def test_an_overflow_with_automatic_compaction_off_ends_the_turn_with_advice(
    server, make_config
) -> None:
    server.enqueue(Fault.overflow())
    session = await Session.open(make_config(auto_compact=False))
    events = await run(session, ops.UserTurn(text="hello"))
    assert events[-1].status == "failed"
    (error,) = of_type(events, "error")
    assert (error.message, error.kind) == (OVERFLOW_AUTO_OFF, "context_overflow")
    assert len(server.requests_to("responses")) == 1  # no compaction, no retry
    assert of_type(events, "retry_available")[-1].turn_id == events[-1].turn_id
    await session.close()


async def test_a_refused_request_ends_the_turn_with_the_servers_words(
    server, make_config
) -> None:
    server.enqueue(Fault.status(404, "The model does not exist."))
    session = await Session.open(make_config(max_retries=0))
    events = await run(session, ops.UserTurn(text="hello"))
    assert events[-1].status == "failed"
    (error,) = of_type(events, "error")
    assert error.kind == "not_found" and "does not exist" in error.message
    assert "404" in error.details
    await session.close()
