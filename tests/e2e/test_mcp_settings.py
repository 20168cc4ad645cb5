"""MCP servers following the settings, end to end: a real session against the loopback model
server and real MCP servers (tests/core/tools/mcp/fault_server.py). "Always allow" written
back to settings.json holds after a restart and can be revoked; adding, removing, disabling,
enabling and editing servers in the settings restarts or stops just the servers concerned,
with no new session."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from app.core import Session, ops
from app.core.mcp_config import (
    parse_servers,
    with_always_allowed,
    with_server_enabled,
)
from app.core.settings import AppSettings, SettingsStore
from app.demo import Reply, ToolCall
from tests.conftest import collect, of_type, run

FAULT_SERVER = Path(__file__).parents[1] / "core" / "tools" / "mcp" / "fault_server.py"


def entry(tmp_path: Path, **more: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(FAULT_SERVER)],
            "env": {"MARK_DIR": str(tmp_path)}, "timeout": 30, **more}


def config_of(make_config: Any, servers: dict[str, Any]) -> Any:
    specs, errors = parse_servers(servers)
    return make_config(mcp_servers=tuple(specs), mcp_errors=tuple(errors.items()))


async def states(session: Session, want: dict[str, str]) -> list[Any]:
    """The servers' infos once their states are ``want`` (the session's events say so)."""
    while True:
        servers = (await collect(session, "mcp_servers", timeout=30))[-1].servers
        if {s.name: s.state for s in servers} == want:
            return list(servers)
        if "failed" not in want.values():
            assert not any(s.state == "failed" for s in servers), servers


async def pid_of(server: Any, session: Session, name: str) -> int:
    """The process id of the MCP server ``name``, asked through a tool call of the model."""
    server.enqueue(Reply(function_calls=[ToolCall(f"mcp__{name}__pid", {}, f"pid-{name}")]))
    server.enqueue(Reply(text="Ok."))
    events = await run(session, ops.UserTurn(text=f"pid of {name}?"), timeout=30)
    assert not of_type(events, "tool_approval_requested")
    out = [e.item.data for e in of_type(events, "item_completed")
           if e.item.kind == "function_call_output"]
    return int(out[0]["output"])


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def gone(pid: int) -> None:
    """Wait until the process ``pid`` has ended (its stop is under way in the background)."""
    async with asyncio.timeout(30):
        while alive(pid):
            await asyncio.sleep(0.02)


async def test_always_allow_is_written_to_settings_and_holds_after_a_restart(
    server, make_config, tmp_path
):
    store = SettingsStore(tmp_path / "config")
    store.save(AppSettings(mcp_servers={"faulty": entry(tmp_path)}))
    settings, _ = store.load()
    session = await Session.open(config_of(make_config, settings.mcp_servers))
    await states(session, {"faulty": "ready"})
    server.enqueue(Reply(function_calls=[ToolCall("mcp__faulty__pid", {}, "c1")]))
    server.enqueue(Reply(text="Ok."))
    await session.submit(ops.UserTurn(text="pid?"))
    await collect(session, "tool_approval_requested")
    await session.submit(ops.ApproveToolCall(call_id="c1", decision="always"))
    resolved = (await collect(session, "tool_approval_resolved"))[-1]
    # What the window does with the answer: the tool goes into the server's alwaysAllow.
    settings = settings.model_copy(update={"mcp_servers": with_always_allowed(
        settings.mcp_servers, resolved.server, resolved.tool, True)})
    store.save(settings)
    await session.submit(ops.UpdateConfig(config=config_of(make_config, settings.mcp_servers)))
    events = await collect(session, "turn_complete")
    assert not of_type(events, "background")  # allowing a tool needs no "settings applied"
    await session.close()

    reloaded, warnings = SettingsStore(tmp_path / "config").load()  # Coco started again
    assert warnings == [] and reloaded.mcp_servers["faulty"]["alwaysAllow"] == ["pid"]
    again = await Session.open(config_of(make_config, reloaded.mcp_servers), session.id)
    infos = await states(again, {"faulty": "ready"})
    assert {t.name: t.always_allowed for t in infos[0].tools}["pid"]
    assert await pid_of(server, again, "faulty") > 0  # ran unasked

    revoked = with_always_allowed(reloaded.mcp_servers, "faulty", "pid", False)
    assert "alwaysAllow" not in revoked["faulty"]
    await again.submit(ops.UpdateConfig(config=config_of(make_config, revoked)))
    server.enqueue(Reply(function_calls=[ToolCall("mcp__faulty__pid", {}, "c9")]))
    server.enqueue(Reply(text="Ok."))
    await again.submit(ops.UserTurn(text="pid again?"))
    asked = (await collect(again, "tool_approval_requested"))[-1]
    assert asked.tool == "pid"
    await again.submit(ops.ApproveToolCall(call_id="c9", decision="deny"))
    await collect(again, "turn_complete")
    await again.close()


async def test_an_always_answered_in_the_session_asks_again_once_revoked(
    server, make_config, tmp_path
):
    servers = {"faulty": entry(tmp_path, alwaysAllow=["pid"])}
    session = await Session.open(config_of(make_config, servers))
    await states(session, {"faulty": "ready"})
    server.enqueue(Reply(function_calls=[ToolCall("mcp__faulty__delete_everything",
                                                  {"target": "t"}, "d1")]))
    server.enqueue(Reply(text="Ok."))
    await session.submit(ops.UserTurn(text="delete t"))
    await collect(session, "tool_approval_requested")
    await session.submit(ops.ApproveToolCall(call_id="d1", decision="always"))
    await collect(session, "turn_complete")
    persisted = with_always_allowed(servers, "faulty", "delete_everything", True)
    await session.submit(ops.UpdateConfig(config=config_of(make_config, persisted)))
    await session.submit(ops.UpdateConfig(config=config_of(make_config, servers)))  # revoked
    server.enqueue(Reply(function_calls=[ToolCall("mcp__faulty__delete_everything",
                                                  {"target": "u"}, "d2")]))
    server.enqueue(Reply(text="Ok."))
    await session.submit(ops.UserTurn(text="delete u"))
    assert (await collect(session, "tool_approval_requested"))[-1].call_id == "d2"
    await session.submit(ops.ApproveToolCall(call_id="d2", decision="deny"))
    await collect(session, "turn_complete")
    await session.close()


async def test_settings_changes_restart_or_stop_just_the_servers_concerned(
    server, make_config, tmp_path
):
    servers = {"a": entry(tmp_path, alwaysAllow=["pid"]),
               "b": entry(tmp_path, alwaysAllow=["pid"])}
    session = await Session.open(config_of(make_config, servers))
    await states(session, {"a": "ready", "b": "ready"})
    a1, b1 = await pid_of(server, session, "a"), await pid_of(server, session, "b")

    # b edited (another working folder): b restarts, a goes on as it was.
    servers = {**servers, "b": entry(tmp_path, alwaysAllow=["pid"], cwd=str(tmp_path))}
    await session.submit(ops.UpdateConfig(config=config_of(make_config, servers)))
    said = (await collect(session, "background"))[-1].message
    assert said == "MCP servers: 'b' restarted with its new settings."
    await states(session, {"a": "ready", "b": "ready"})
    b2 = await pid_of(server, session, "b")
    assert await pid_of(server, session, "a") == a1 and b2 != b1
    await gone(b1)

    # a turned off: it stops and its tools leave the request; turned on: it starts again.
    servers = with_server_enabled(servers, "a", False)
    await session.submit(ops.UpdateConfig(config=config_of(make_config, servers)))
    await states(session, {"b": "ready", "a": "disabled"})
    await gone(a1)
    server.enqueue(Reply(text="Ok."))
    await run(session, ops.UserTurn(text="which tools?"))
    names = [t["name"] for t in server.requests_to("responses")[-1].body["tools"]]
    assert "mcp__b__pid" in names and not any(n.startswith("mcp__a__") for n in names)
    servers = with_server_enabled(servers, "a", True)
    await session.submit(ops.UpdateConfig(config=config_of(make_config, servers)))
    await states(session, {"a": "ready", "b": "ready"})
    assert await pid_of(server, session, "a") not in (a1, b2)
    assert await pid_of(server, session, "b") == b2

    # b removed, c added (with an entry that does not read, shown as such).
    servers = {"a": servers["a"], "c": {"command": ""}}
    await session.submit(ops.UpdateConfig(config=config_of(make_config, servers)))
    infos = await states(session, {"a": "ready", "c": "invalid"})
    assert "needs a command" in infos[1].error
    await gone(b2)
    await session.close()


async def test_a_server_that_fails_to_start_is_reported_with_its_last_stderr_lines(
    server, make_config, tmp_path
):
    said = "import sys; sys.stderr.write('missing GITHUB_TOKEN\\nbye\\n'); sys.exit(3)"
    servers = {"gh": {"command": sys.executable, "args": ["-c", said]}}
    session = await Session.open(config_of(make_config, servers))
    infos = await states(session, {"gh": "failed"})
    assert infos[0].stderr == ["missing GITHUB_TOKEN", "bye"]
    assert infos[0].error
    await session.close()
