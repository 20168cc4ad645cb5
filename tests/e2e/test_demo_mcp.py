"""The offline demo with nothing configured: the demo model calls the example MCP server Coco
ships (app/demo/mcp_example.py, started for real), its read-only tools at once and its
destructive one after the approval card; the demo's greeting says how, and none of it is
written into the settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.core import Session, ops
from app.core.settings import AppSettings, build_core_config
from app.core.tools.mcp.example import EXAMPLE_SERVER, NOTES_FOLDER
from app.demo import ModelServer
from tests.conftest import collect, of_type, run


@pytest.fixture
def demo() -> Any:
    server = ModelServer(mode="demo").start()
    yield server
    server.stop()


async def open_demo(demo: ModelServer, data_dir: Path) -> Session:
    """A session as a newcomer gets it: the demo provider, no settings changed."""
    settings = AppSettings()
    config = build_core_config(settings, api_key="", data_dir=data_dir, demo_url=demo.url)
    session = await Session.open(config)
    events = await collect(session, "mcp_servers", timeout=60)
    while any(s.state == "starting" for s in events[-1].servers):
        events = await collect(session, "mcp_servers", timeout=60)
    assert [(s.name, s.state) for s in events[-1].servers] == [(EXAMPLE_SERVER, "ready")]
    assert settings.mcp_servers == {}  # offered for the demo, not written into the settings
    return session


def outputs(events: list[Any]) -> list[dict[str, Any]]:
    return [e.item.data for e in of_type(events, "item_completed")
            if e.item.kind == "function_call_output"]


async def test_the_demo_model_calls_the_example_server_with_the_approval_card(
    demo: ModelServer, tmp_path: Path
) -> None:
    session = await open_demo(demo, tmp_path / "data")
    try:
        events = await run(session, ops.UserTurn(text="Hello!"), timeout=30)
        greeting = of_type(events, "agent_message")[-1].text
        assert "example MCP server" in greeting and "note down" in greeting

        # Read-only: it runs unasked, and the demo says what it answered.
        events = await run(session, ops.UserTurn(text="Roll 3 dice with 20 sides, seed 4"),
                           timeout=60)
        assert not of_type(events, "tool_approval_requested")
        rolled = outputs(events)[0]
        assert rolled["ok"] and rolled["output"].startswith("rolled 3d20: ")
        answer = of_type(events, "agent_message")[-1].text
        assert "example MCP server" in answer and rolled["output"] in answer

        events = await run(session, ops.UserTurn(
            text='How many words are in "the quick brown fox jumps"?'), timeout=60)
        assert outputs(events)[0]["output"] == "5 words, 1 lines, 25 characters"

        # Destructive: the card asks first; allowed once, the note is written.
        await session.submit(ops.UserTurn(text="Note down: buy oat milk on Friday"))
        asked = (await collect(session, "tool_approval_requested", timeout=60))[-1]
        assert (asked.server, asked.tool) == (EXAMPLE_SERVER, "write_note")
        assert asked.arguments == {"text": "buy oat milk on Friday"} and asked.destructive
        await session.submit(ops.ApproveToolCall(call_id=asked.call_id, decision="once"))
        events = await collect(session, "turn_complete", timeout=60)
        assert outputs(events)[0]["ok"]
        notes = tmp_path / "data" / NOTES_FOLDER / "notes.txt"
        assert notes.read_text(encoding="utf-8") == "buy oat milk on Friday\n"
        assert "wrote the note" in of_type(events, "agent_message")[-1].text

        # Denied: nothing written, and the demo says so.
        await session.submit(ops.UserTurn(text="Note down: call the plumber"))
        asked = (await collect(session, "tool_approval_requested", timeout=60))[-1]
        await session.submit(ops.ApproveToolCall(call_id=asked.call_id, decision="deny"))
        events = await collect(session, "turn_complete", timeout=60)
        assert "You denied that call" in of_type(events, "agent_message")[-1].text
        assert notes.read_text(encoding="utf-8") == "buy oat milk on Friday\n"
    finally:
        await session.close()


def test_only_the_demo_with_no_server_configured_gets_the_example(tmp_path: Path) -> None:
    def servers(**fields: Any) -> list[str]:
        config = build_core_config(AppSettings(**fields), api_key="k", data_dir=tmp_path,
                                   demo_url="http://127.0.0.1:9")
        return [spec.name for spec in config.mcp_servers]

    assert servers() == [EXAMPLE_SERVER]
    mine = {"mcpServers": {"mine": {"command": "my-server"}}}
    assert servers(**mine) == ["mine"]  # a configured server: the user's only
    assert servers(provider="openai", model="gpt-4.1") == []
    assert servers(provider="ollama", model="qwen3", base_url="http://127.0.0.1:11434/v1") == []
