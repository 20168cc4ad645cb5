"""MCP tools of the npm reference servers, end to end: ``@modelcontextprotocol/server-everything``
and ``@modelcontextprotocol/server-filesystem`` (pinned, run through npx as a person configures
them) behind a real session and the loopback model server: their tools listed and namespaced,
a call through the approval card on both APIs, images, resources and structured content in
words, a huge file cut to fit and its middle found by recall, a temp folder read. Skipped only
where Node is not installed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from app.core import ops
from app.core.mcp_config import parse_server
from app.core.tools.mcp.names import NAME_RULE
from app.demo import Reply, ToolCall
from tests.conftest import collect, of_type, run
from tests.e2e import npm_servers
from tests.e2e.mcp_sessions import (  # noqa: F401 - the fixture
    mcp_sessions_closed,
    open_ready,
    outputs,
    request_tool_names,
    servers_told,
)

pytestmark = [
    pytest.mark.usefixtures("mcp_sessions_closed"),
    pytest.mark.skipif(npm_servers.node_missing() is not None,
                       reason=str(npm_servers.node_missing())),
]
EVERYTHING = "@modelcontextprotocol/server-everything"
FILESYSTEM = "@modelcontextprotocol/server-filesystem"
NEEDLE = "the-needle-is-okapi-5521"


def everything(**extra: Any) -> Any:
    return parse_server("everything", npm_servers.entry(EVERYTHING, "stdio", timeout=60, **extra))


def filesystem(folder: Path, **extra: Any) -> Any:
    return parse_server("files", npm_servers.entry(FILESYSTEM, str(folder), timeout=60, **extra))


async def test_the_everything_servers_tools_are_offered_namespaced(server, make_config):
    session = await open_ready(make_config(mcp_servers=(everything(),)))
    tools = [t.name for t in servers_told(session)[0].tools]
    assert {"echo", "get-sum", "get-tiny-image", "get-structured-content"} <= set(tools)
    server.enqueue(Reply(text="Hello."))
    await run(session, ops.UserTurn(text="What can you do?"))
    names = request_tool_names(server.requests_to("responses")[0].body)
    offered = [n for n in names if n.startswith("mcp__everything__")]
    assert sorted(offered) == sorted(f"mcp__everything__{t}" for t in tools)
    assert all(NAME_RULE.match(n) for n in names), names
    assert "recall" in names  # the built-in tools stay


@pytest.mark.parametrize("wire_api", ["responses", "chat"])
async def test_a_call_waits_for_approval_and_the_model_reads_its_output(
    server, make_config, wire_api
):
    # Read-only tools are not allowed by default here, so get-sum asks.
    config = make_config(wire_api=wire_api, mcp_servers=(everything(),),
                         mcp_allow_read_only=False)
    session = await open_ready(config)
    server.enqueue(Reply(function_calls=[ToolCall(
        "mcp__everything__get-sum", {"a": 1234, "b": 4321}, "call_1")]), endpoint=wire_api)
    server.enqueue(Reply(text="It is 5555."), endpoint=wire_api)
    await session.submit(ops.UserTurn(text="Add 1234 and 4321."))
    asked = (await collect(session, "tool_approval_requested", timeout=30))[-1]
    assert (asked.call_id, asked.server, asked.tool) == ("call_1", "everything", "get-sum")
    assert asked.arguments == {"a": 1234, "b": 4321} and not asked.destructive
    await session.submit(ops.ApproveToolCall(call_id="call_1", decision="once"))
    events = await collect(session, "turn_complete", timeout=30)
    assert events[-1].status == "completed"
    result = outputs(events)[0]
    assert result["ok"] and "5555" in result["output"], result
    sent = json.dumps(server.requests_to(wire_api)[1].body)
    assert "5555" in sent and "call_1" in sent  # the model read the output, paired to its call


async def test_images_resources_and_structured_content_are_told_in_words(server, make_config):
    session = await open_ready(make_config(mcp_servers=(everything(),)))
    server.enqueue(Reply(function_calls=[
        ToolCall("mcp__everything__get-tiny-image", {}, "c1"),
        ToolCall("mcp__everything__get-resource-reference",
                 {"resourceType": "Text", "resourceId": 3}, "c2"),
        ToolCall("mcp__everything__get-structured-content", {"location": "Chicago"}, "c3"),
        ToolCall("mcp__everything__get-resource-links", {"count": 2}, "c4"),
        ToolCall("mcp__everything__get-resource-reference",
                 {"resourceType": "Blob", "resourceId": 2}, "c5"),
    ]))
    server.enqueue(Reply(text="Seen."))
    events = await run(session, ops.UserTurn(text="show me"), timeout=60)
    assert not of_type(events, "tool_approval_requested")  # read-only: allowed by default
    image, text_resource, weather, links, blob = (o["output"] for o in outputs(events))
    assert all(o["ok"] for o in outputs(events)), outputs(events)
    assert re.search(r"\n\[image: image/png, \d+ (bytes|KB)\]\n", image), image
    assert "[resource demo://resource/dynamic/text/3]" in text_resource, text_resource
    assert "Resource 3: This is a plaintext resource" in text_resource
    assert json.loads(weather) == {"temperature": 36, "conditions": "Light rain / drizzle",
                                   "humidity": 82}
    assert links.count("[resource link ") == 2, links
    assert "[resource demo://resource/dynamic/blob/2:" in blob, blob
    sent = json.dumps(server.requests_to("responses")[1].body)
    assert "Light rain / drizzle" in sent and "image/png" in sent


async def test_a_temp_folder_is_listed_and_read_through_the_filesystem_server(
    server, make_config, tmp_path
):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "plan.txt").write_text("Ship the MCP tests on Friday.\n")
    (folder / "todo.md").write_text("- buy okapi food\n")
    session = await open_ready(make_config(mcp_servers=(filesystem(folder),)))
    server.enqueue(Reply(function_calls=[
        ToolCall("mcp__files__list_directory", {"path": str(folder)}, "c1"),
        ToolCall("mcp__files__read_text_file", {"path": str(folder / "plan.txt")}, "c2"),
        ToolCall("mcp__files__read_text_file", {"path": str(tmp_path / "outside.txt")}, "c3"),
    ]))
    server.enqueue(Reply(text="Friday."))
    events = await run(session, ops.UserTurn(text="What is the plan?"), timeout=60)
    listing, plan, outside = outputs(events)
    assert "[FILE] plan.txt" in listing["output"] and "[FILE] todo.md" in listing["output"]
    assert plan["ok"] and plan["output"] == "Ship the MCP tests on Friday.\n"
    # Outside the allowed folder: the server refuses, and the refusal is a result in words.
    assert not outside["ok"] and "error" in outside["output"].lower(), outside
    assert events[-1].status == "completed"


async def test_a_huge_file_is_cut_to_fit_and_its_middle_found_by_recall(
    server, make_config, tmp_path
):
    line = "a long line of a build log that goes on and on\n"
    half = line * 20_000  # about 1 MB each side
    (tmp_path / "build.log").write_text(half + NEEDLE + "\n" + half)
    config = make_config(context_window=16_000, mcp_servers=(filesystem(tmp_path),))
    session = await open_ready(config)
    server.enqueue(Reply(function_calls=[ToolCall(
        "mcp__files__read_text_file", {"path": str(tmp_path / "build.log")}, "c1")]))
    server.enqueue(Reply(text="That was long."))
    events = await run(session, ops.UserTurn(text="read the log"), timeout=60)
    shown = outputs(events)[0]["output"]  # (booleans only: no diff of megabytes)
    assert len(shown) == 2 * len(half) + len(NEEDLE) + 1 and bool(NEEDLE in shown)
    sent = server.requests_to("responses")[-1].body["input"][-1]["output"]
    assert len(sent) < 40_000 and bool(NEEDLE not in sent)
    assert "left out" in sent and "recall" in sent, sent[:300]
    server.enqueue(Reply(function_calls=[ToolCall("recall", {"query": NEEDLE}, "c2")]))
    server.enqueue(Reply(text="Found."))
    events = await run(session, ops.UserTurn(text="find the needle"), timeout=60)
    found = outputs(events)[0]["output"]
    assert "output of mcp__files__read_text_file" in found and NEEDLE in found, found[:2000]
