"""A local server whose model cannot call tools (llama.cpp's template without tool support):
the core offers it no tools (recall, the workspace's, MCP), says once which features need them,
and the conversation goes on with the carried notes."""

from __future__ import annotations

from app.core import Session, ops
from app.demo import Reply
from tests.conftest import of_type, run


async def test_a_model_without_tool_calls_is_offered_no_tools_and_told_why(
    server, make_config, tmp_path
):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    server.props = {"chat_template_caps": {"supports_tools": False}}
    session = await Session.open(make_config(wire_api="chat", workspace=workspace))
    server.enqueue(Reply(text="a1"), endpoint="chat")
    server.enqueue(Reply(text="a2"), endpoint="chat")
    events = await run(session, ops.UserTurn(text="q1"))
    later = await run(session, ops.UserTurn(text="q2"))
    for request in server.requests_to("chat"):
        assert not request.body.get("tools")  # nothing offered it could never call
    warnings = [w.message for w in of_type(events, "warning")]
    assert len(warnings) == 1 and "cannot call tools" in warnings[0]
    assert "recall" in warnings[0] and "MCP tools" in warnings[0]
    assert not of_type(later, "warning")  # said once
    await session.close()


async def test_a_model_with_tool_calls_keeps_its_tools(server, make_config, tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    server.props = {"chat_template_caps": {"supports_tools": True}}
    session = await Session.open(make_config(wire_api="chat", workspace=workspace))
    server.enqueue(Reply(text="a1"), endpoint="chat")
    events = await run(session, ops.UserTurn(text="q1"))
    names = {t["function"]["name"] for t in server.requests_to("chat")[0].body["tools"]}
    assert "recall" in names and "read_file" in names
    assert not of_type(events, "warning")
    await session.close()
