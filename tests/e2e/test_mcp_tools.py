"""MCP tools end to end: a real session against the loopback model server calling tools of a
real MCP server (tests/core/tools/mcp/fault_server.py, the official SDK's server) on both APIs,
with the approval card's event and op, Stop during an approval and during a call, a crashed
server started again, a huge output cut to fit and found again by recall (by any words of its
middle), and a tool's images sent as images or described."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from app.core import Session, ops
from app.core.mcp_config import parse_server
from app.demo import Reply, ToolCall
from tests.conftest import collect, of_type, run
from tests.e2e.mcp_sessions import (  # noqa: F401 - the fixture
    OPENED,
    mcp_sessions_closed,
    open_ready,
    outputs,
)

FAULT_SERVER = Path(__file__).parents[1] / "core" / "tools" / "mcp" / "fault_server.py"
MIDDLE = "the-needle-is-quetzal-8812"


def faulty(tmp_path: Path, **entry: Any) -> Any:
    return parse_server("faulty", {
        "command": sys.executable, "args": [str(FAULT_SERVER)],
        "env": {"MARK_DIR": str(tmp_path)}, "timeout": 30, **entry,
    })


pytestmark = pytest.mark.usefixtures("mcp_sessions_closed")


@pytest.mark.parametrize("wire_api", ["responses", "chat"])
async def test_a_call_waits_for_approval_and_runs_once_allowed(
    server, make_config, tmp_path, wire_api
):
    session = await open_ready(make_config(wire_api=wire_api, mcp_servers=(faulty(tmp_path),)))
    server.enqueue(Reply(function_calls=[ToolCall(
        "mcp__faulty__delete_everything", {"target": "old-logs"}, "call_1")]), endpoint=wire_api)
    server.enqueue(Reply(text="Done."), endpoint=wire_api)
    await session.submit(ops.UserTurn(text="Clean up the old logs."))
    asked = (await collect(session, "tool_approval_requested"))[-1]
    assert (asked.call_id, asked.server, asked.tool) == ("call_1", "faulty", "delete_everything")
    assert asked.arguments == {"target": "old-logs"} and asked.destructive
    await session.submit(ops.ApproveToolCall(call_id="call_1", decision="once"))
    events = await collect(session, "turn_complete")
    assert outputs(events)[0]["output"] == "deleted old-logs"
    assert of_type(events, "tool_approval_resolved")[0].decision == "once"
    first = server.requests_to(wire_api)[0].body
    names = [t.get("name") or t["function"]["name"] for t in first["tools"]]
    assert "mcp__faulty__delete_everything" in names and "recall" in names
    sent = json.dumps(server.requests_to(wire_api)[1].body)
    assert "deleted old-logs" in sent  # the model read the output

    # Allowed once only: the next call asks again.
    server.enqueue(Reply(function_calls=[ToolCall(
        "mcp__faulty__delete_everything", {"target": "tmp"}, "call_2")]), endpoint=wire_api)
    server.enqueue(Reply(text="Ok."), endpoint=wire_api)
    await session.submit(ops.UserTurn(text="And tmp."))
    asked = (await collect(session, "tool_approval_requested"))[-1]
    assert asked.call_id == "call_2"
    await session.submit(ops.ApproveToolCall(call_id="call_2", decision="deny"))
    events = await collect(session, "turn_complete")
    denial = outputs(events)[0]
    assert not denial["ok"] and "denied" in denial["output"]
    assert "denied this call" in json.dumps(server.requests_to(wire_api)[-1].body)
    await session.close()


async def test_always_allow_stops_asking_and_read_only_tools_run_unasked(
    server, make_config, tmp_path
):
    session = await open_ready(make_config(mcp_servers=(faulty(tmp_path),)))
    server.enqueue(Reply(function_calls=[ToolCall("mcp__faulty__pid", {}, "c1")]))
    server.enqueue(Reply(text="Ok."))
    await session.submit(ops.UserTurn(text="pid?"))
    await collect(session, "tool_approval_requested")
    await session.submit(ops.ApproveToolCall(call_id="c1", decision="always"))
    await collect(session, "turn_complete")
    server.enqueue(Reply(function_calls=[
        ToolCall("mcp__faulty__pid", {}, "c2"), ToolCall("mcp__faulty__echo", {"text": "hi"}, "c3"),
    ]))
    server.enqueue(Reply(text="Ok."))
    events = await run(session, ops.UserTurn(text="again"))
    assert not of_type(events, "tool_approval_requested")
    assert [o["ok"] for o in outputs(events)] == [True, True]
    assert outputs(events)[1]["output"] == "echo: hi"
    await session.close()


async def test_an_answer_for_no_waiting_call_is_refused_in_words(server, make_config, tmp_path):
    session = await Session.open(make_config())
    await session.submit(ops.ApproveToolCall(call_id="nope", decision="once"))
    error = (await collect(session, "error"))[-1]
    assert error.kind == "invalid_op" and "No tool call waits" in error.message
    await session.close()


async def test_stop_withdraws_a_pending_approval_and_the_session_goes_on(
    server, make_config, tmp_path
):
    session = await open_ready(make_config(mcp_servers=(faulty(tmp_path),)))
    server.enqueue(Reply(function_calls=[ToolCall("mcp__faulty__pid", {}, "c1")]))
    await session.submit(ops.UserTurn(text="pid?"))
    await collect(session, "tool_approval_requested")
    await session.submit(ops.Interrupt())
    events = await collect(session, "turn_complete")
    assert of_type(events, "tool_approval_resolved")[0].decision == "cancelled"
    assert events[-1].status == "aborted"
    server.enqueue(Reply(text="Still here."))
    events = await run(session, ops.UserTurn(text="hello"))
    assert events[-1].status == "completed"
    await session.close()


async def test_stop_cancels_a_running_call_and_tells_the_server(server, make_config, tmp_path):
    session = await open_ready(make_config(
        mcp_servers=(faulty(tmp_path, alwaysAllow=["hang"]),)))
    server.enqueue(Reply(function_calls=[ToolCall("mcp__faulty__hang", {}, "c1")]))
    await session.submit(ops.UserTurn(text="hang"))
    events = await collect(session, "item_started")
    while not any(e.item.kind == "function_call_output" for e in of_type(events, "item_started")):
        events = await collect(session, "item_started")
    await session.submit(ops.Interrupt())
    events = await collect(session, "turn_complete")
    assert events[-1].status == "aborted"
    mark = tmp_path / "cancelled"
    for _ in range(200):  # the server writes it when the cancellation reaches it
        if mark.exists():
            break
        await asyncio.sleep(0.05)
    assert mark.exists()
    await session.close()


async def test_a_crashed_server_ends_the_call_in_words_and_starts_again(
    server, make_config, tmp_path
):
    session = await open_ready(make_config(
        mcp_servers=(faulty(tmp_path, alwaysAllow=["exit_now", "pid"]),)))
    server.enqueue(Reply(function_calls=[ToolCall("mcp__faulty__exit_now", {}, "c1")]))
    server.enqueue(Reply(text="It crashed."))
    events = await run(session, ops.UserTurn(text="crash"), timeout=30)
    crashed = outputs(events)[0]
    assert not crashed["ok"] and "stopped during the call" in crashed["output"]
    assert "the server gives up" in crashed["output"]  # its last stderr line
    assert events[-1].status == "completed"
    server.enqueue(Reply(function_calls=[ToolCall("mcp__faulty__pid", {}, "c2")]))
    server.enqueue(Reply(text="Back."))
    events = await run(session, ops.UserTurn(text="pid"), timeout=30)
    assert outputs(events)[0]["ok"] and outputs(events)[0]["output"].isdigit()
    await session.close()


async def test_a_huge_output_is_cut_to_fit_and_its_middle_found_by_recall(
    server, make_config, tmp_path
):
    config = make_config(context_window=16_000, mcp_servers=(faulty(tmp_path, alwaysAllow=["big"]),))
    session = await open_ready(config)
    size = 2_000_000
    server.enqueue(Reply(function_calls=[ToolCall("mcp__faulty__big", {"size": size}, "c1")]))
    server.enqueue(Reply(text="That was long."))
    events = await run(session, ops.UserTurn(text="big"), timeout=60)
    # (booleans only: pytest would diff megabytes of text to explain a failure)
    shown = outputs(events)[0]["output"]
    assert len(shown) == size
    assert bool(MIDDLE in shown)  # the transcript keeps the whole
    sent = server.requests_to("responses")[-1].body["input"][-1]["output"]
    assert len(sent) < 40_000, sent[:300]
    assert bool(MIDDLE not in sent)
    assert "left out" in sent and "recall" in sent, sent[:2000]
    server.enqueue(Reply(function_calls=[ToolCall("recall", {"query": MIDDLE}, "c2")]))
    server.enqueue(Reply(text="Found."))
    events = await run(session, ops.UserTurn(text="find the needle"), timeout=60)
    found = outputs(events)[0]["output"]
    assert "output of mcp__faulty__big" in found and "no longer in your view" in found, found
    assert f"\n{MIDDLE}" in found or found.count(MIDDLE) == 2, found
    # Some words of the middle, with one it does not hold: only the question holds them all,
    # and it is never the answer; the middle is, by the words it holds.
    asked = "Where was the quetzal lighthouse in that output?"
    server.enqueue(Reply(function_calls=[ToolCall("recall", {"query": "quetzal lighthouse"},
                                                  "c3")]))
    server.enqueue(Reply(text="There."))
    events = await run(session, ops.UserTurn(text=asked), timeout=60)
    found = outputs(events)[0]["output"]
    assert "[1] turn 1 · output of mcp__faulty__big" in found and MIDDLE in found, found
    assert asked not in found
    await session.close()

    resumed = await open_ready(config, session_id=session.id)
    whole = next(e for e in resumed.transcript() if e["kind"] == "item"
             and e["item"].get("type") == "function_call_output")["item"]["output"]
    assert len(whole) == size  # shown whole on resume too
    cut = next(i for i in resumed.history() if i.get("call_id") == "c1" and "output" in i)
    assert bool(MIDDLE not in cut["output"]) and "left out" in cut["output"]
    await resumed.close()


@pytest.mark.parametrize("wire_api", ["responses", "chat"])
async def test_a_tools_image_is_sent_as_an_image_to_a_model_that_takes_them(
    server, make_config, tmp_path, wire_api
):
    session = await open_ready(make_config(wire_api=wire_api, mcp_servers=(faulty(tmp_path),)))
    server.enqueue(Reply(function_calls=[ToolCall("mcp__faulty__picture", {}, "c1")]),
                   endpoint=wire_api)
    server.enqueue(Reply(text="A red rectangle."), endpoint=wire_api)
    events = await run(session, ops.UserTurn(text="draw"), timeout=30)
    shown = outputs(events)[0]
    assert shown["ok"] and shown["output"].startswith("a red rectangle\n[image: image/png, "), shown
    assert len(shown["images"]) == 1  # for the window to show
    assert shown["images"][0]["description"].startswith(
        "mcp__faulty__picture-image-1.png, PNG image 24x16, ")
    assert Path(shown["images"][0]["path"]).is_file()  # stored beside the session
    body = server.requests_to(wire_api)[-1].body
    if wire_api == "responses":
        output = body["input"][-1]["output"]
        assert output[0] == {"type": "input_text", "text": shown["output"]}
        assert output[1]["type"] == "input_image"
        assert output[1]["image_url"].startswith("data:image/png;base64,")
        assert "coco_images" not in body["input"][-1]
    else:
        tool, images = body["messages"][-2:]
        assert tool["role"] == "tool" and tool["content"] == shown["output"]
        assert images["role"] == "user" and images["content"][0]["type"] == "text"
        assert images["content"][1]["type"] == "image_url"
        assert images["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    await session.close()

    # Reopened, the next request sends the image again (read back from its stored file).
    resumed = await open_ready(make_config(wire_api=wire_api, mcp_servers=(faulty(tmp_path),)),
                               session_id=session.id)
    replayed = [e.item.data for e in resumed.replay_events() if e.type == "item_completed"
                and e.item.kind == "function_call_output"]
    assert replayed[0]["images"] == shown["images"]  # shown on resume as live
    assert "base64" not in Path(resumed.rollout_path).read_text()  # named, never held
    server.enqueue(Reply(text="Still red."), endpoint=wire_api)
    await run(resumed, ops.UserTurn(text="and now?"), timeout=30)
    sent = json.dumps(server.requests_to(wire_api)[-1].body)
    assert sent.count("data:image/png;base64,") == 1
    await resumed.close()


async def test_a_tools_image_is_described_to_a_model_that_does_not_take_them(
    server, make_config, tmp_path
):
    config = make_config(accepts_images=False, mcp_servers=(faulty(tmp_path),))
    session = await open_ready(config)
    server.enqueue(Reply(function_calls=[
        ToolCall("mcp__faulty__picture", {}, "c1"), ToolCall("mcp__faulty__broken_picture", {}, "c2"),
    ]))
    server.enqueue(Reply(text="Described."))
    events = await run(session, ops.UserTurn(text="draw"), timeout=30)
    assert [o["ok"] for o in outputs(events)] == [True, True]
    broken = outputs(events)[1]["output"]
    assert "An image the tool returned is not sent" in broken and "damaged" in broken, broken
    sent = server.requests_to("responses")[-1].body["input"]
    picture = next(i for i in sent if i.get("call_id") == "c1" and "output" in i)["output"]
    assert isinstance(picture, str) and "input_image" not in json.dumps(sent)
    assert "[The tool returned an image: mcp__faulty__picture-image-1.png, PNG image 24x16" \
        in picture and "This model does not take images" in picture, picture
    await session.close()


async def test_a_message_sent_while_a_server_starts_is_offered_its_tools(
    server, make_config, tmp_path
):
    session = await Session.open(make_config(mcp_servers=(faulty(tmp_path),)))
    OPENED.append(session)
    # Sent at once: the server's process is still starting (Python and the SDK loading).
    assert [s.state for s in session._mcp.statuses()] == ["starting"]
    server.enqueue(Reply(text="Hello."))
    await run(session, ops.UserTurn(text="hi"), timeout=30)
    names = [t.get("name") for t in server.requests_to("responses")[0].body["tools"]]
    assert "mcp__faulty__echo" in names and "recall" in names
