"""MCP faults end to end, each against a real server (tests/core/tools/mcp/fault_server.py, the
official SDK's server): streamable HTTP, an HTTP server that is down or goes down, junk on
stdout, a malformed result, a flood of stderr, a tool list that changes. Each call ends with a
clear tool result, the turn completes and the session goes on; and no server process outlives
the session that started it."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core import Session, ops
from app.core.mcp_config import parse_server
from app.demo import Reply, ToolCall
from tests.conftest import collect, run
from tests.e2e import npm_servers
from tests.e2e.mcp_sessions import (  # noqa: F401 - the fixture
    mcp_sessions_closed,
    open_ready,
    outputs,
    request_tool_names,
    servers_told,
)

pytestmark = pytest.mark.usefixtures("mcp_sessions_closed")
FAULT_SERVER = Path(__file__).parents[1] / "core" / "tools" / "mcp" / "fault_server.py"


def faulty(**entry: Any) -> Any:
    return parse_server("faulty", {
        "command": sys.executable, "args": [str(FAULT_SERVER)], "timeout": 30, **entry,
    })


@pytest.fixture
def http_server() -> Iterator[tuple[subprocess.Popen[str], str]]:
    """The fault server on streamable HTTP: its process and its URL."""
    proc = subprocess.Popen([sys.executable, str(FAULT_SERVER), "http"],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        yield proc, f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.kill()
        proc.wait()


async def goes_on(server: Any, session: Session) -> None:
    """The session still answers a plain turn."""
    server.enqueue(Reply(text="Still here."))
    events = await run(session, ops.UserTurn(text="are you there?"), timeout=30)
    assert events[-1].status == "completed"


async def call_once(server: Any, session: Session, tool: str, args: dict[str, Any]) -> Any:
    """One turn whose model calls ``tool``; its output, after checking the turn completed."""
    server.enqueue(Reply(function_calls=[ToolCall(tool, args, "c1")]))
    server.enqueue(Reply(text="Noted."))
    events = await run(session, ops.UserTurn(text=f"call {tool}"), timeout=60)
    assert events[-1].status == "completed"
    assert "c1" in json.dumps(server.requests_to("responses")[-1].body)  # the model read it
    return outputs(events)[0]


async def test_a_streamable_http_server_is_called_like_a_local_one(
    server, make_config, http_server
):
    proc, url = http_server
    session = await open_ready(make_config(mcp_servers=(parse_server("remote", {
        "url": url, "alwaysAllow": ["pid"], "timeout": 30}),)))
    told = servers_told(session)[0]
    assert told.transport == "http" and "echo" in [t.name for t in told.tools]
    result = await call_once(server, session, "mcp__remote__echo", {"text": "over http"})
    assert result == {**result, "ok": True, "output": "echo: over http"}
    result = await call_once(server, session, "mcp__remote__pid", {})
    assert result["output"] == str(proc.pid)  # it was that process that answered


async def test_an_http_server_that_is_down_fails_in_words_and_the_session_goes_on(
    server, make_config
):
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    session = await open_ready(
        make_config(mcp_servers=(parse_server("remote", {
            "url": f"http://127.0.0.1:{port}/mcp", "timeout": 10}),)),
        states=["failed"],
    )
    told = servers_told(session)[0]
    assert told.error and "Traceback" not in told.error, told
    assert any(w in told.error.lower() for w in ("connect", "refused", "reach")), told.error
    await goes_on(server, session)


async def test_an_http_server_that_goes_down_ends_the_call_in_words(
    server, make_config, http_server
):
    proc, url = http_server
    session = await open_ready(make_config(mcp_servers=(parse_server("remote", {
        "url": url, "timeout": 10}),)))
    proc.kill()
    proc.wait()
    result = await call_once(server, session, "mcp__remote__echo", {"text": "anyone?"})
    assert not result["ok"] and "'remote'" in result["output"], result
    assert "Traceback" not in result["output"]
    await goes_on(server, session)


async def test_junk_on_stdout_does_not_break_the_call(server, make_config):
    session = await open_ready(make_config(mcp_servers=(faulty(alwaysAllow=["junk"]),)))
    result = await call_once(server, session, "mcp__faulty__junk", {})
    assert result["ok"] and result["output"] == "answered after junk", result
    result = await call_once(server, session, "mcp__faulty__echo", {"text": "after"})
    assert result["output"] == "echo: after"  # the same server goes on


async def test_a_malformed_result_ends_the_call_in_words(server, make_config):
    session = await open_ready(make_config(mcp_servers=(faulty(alwaysAllow=["malformed"]),)))
    result = await call_once(server, session, "mcp__faulty__malformed", {})
    assert not result["ok"] and "malformed result" in result["output"], result
    result = await call_once(server, session, "mcp__faulty__echo", {"text": "after"})
    assert result["output"] == "echo: after"


async def test_a_server_that_floods_stderr_answers_and_keeps_only_its_last_lines(
    server, make_config
):
    session = await open_ready(make_config(mcp_servers=(faulty(alwaysAllow=["flood"]),)))
    result = await call_once(server, session, "mcp__faulty__flood", {})
    assert result["ok"] and result["output"] == "flooded", result
    mcp = session._mcp  # (the lines the next mcp_servers event will carry)
    lines = mcp.statuses()[0].stderr
    assert 0 < len(lines) <= 20 and lines[-1].startswith("log line 19999 "), lines[-3:]


async def test_a_server_error_is_a_result_in_words(server, make_config):
    session = await open_ready(make_config(mcp_servers=(faulty(alwaysAllow=["fail"]),)))
    result = await call_once(server, session, "mcp__faulty__fail", {})
    assert not result["ok"] and "the database is locked" in result["output"], result


async def test_a_changed_tool_list_is_read_again_and_offered(server, make_config):
    session = await open_ready(make_config(mcp_servers=(faulty(alwaysAllow=["grow"]),)))
    assert "fresh" not in [t.name for t in servers_told(session)[0].tools]
    server.enqueue(Reply(function_calls=[ToolCall("mcp__faulty__grow", {}, "c1")]))
    server.enqueue(Reply(text="Grown."))
    await session.submit(ops.UserTurn(text="grow"))
    events = await collect(session, "mcp_servers", timeout=30)
    while "fresh" not in [t.name for t in events[-1].servers[0].tools]:
        events = await collect(session, "mcp_servers", timeout=30)
    await collect(session, "turn_complete", timeout=30)
    result = await call_once(server, session, "mcp__faulty__fresh", {})
    assert result["ok"] and result["output"] == "fresh from a changed list", result
    assert "mcp__faulty__fresh" in request_tool_names(server.requests_to("responses")[-2].body)


def _children(pid: int) -> set[int]:
    """Every live process descended from ``pid`` (from /proc; zombies count as ended)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if state != "Z":
            parents[int(entry.name)] = int(ppid)
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux's /proc")
async def test_no_server_process_outlives_the_session(server, make_config, tmp_path):
    before = _children(os.getpid())
    servers = [faulty(), parse_server("remote-down", {"url": "http://127.0.0.1:9/mcp"})]
    states = ["ready", "failed"]
    if npm_servers.node_missing() is None:  # npx starts node under a shell: a process tree
        servers.append(parse_server("files", npm_servers.entry(
            "@modelcontextprotocol/server-filesystem", str(tmp_path))))
        states.append("ready")
    session = await open_ready(make_config(mcp_servers=tuple(servers)), states=states)
    started = _children(os.getpid()) - before
    assert len(started) >= len(states) - 1, started
    await session.close()
    assert not (_children(os.getpid()) & started)
    for pid in started:  # and none was left elsewhere (re-parented to init)
        assert not Path(f"/proc/{pid}").exists() or _zombie(pid), pid


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


async def test_a_server_stopped_mid_session_leaves_no_process(server, make_config):
    config = make_config(mcp_servers=(faulty(),))
    before = _children(os.getpid())  # (processes of earlier tests: a PDF's worker process)
    session = await open_ready(config)
    started = _children(os.getpid()) - before
    assert started
    await session.submit(ops.UpdateConfig(config=config.model_copy(update={"mcp_servers": ()})))
    events = await collect(session, "mcp_servers", timeout=30)
    assert events[-1].servers == []
    for _ in range(400):  # the stop is in the background: wait for the process to end
        if not (_children(os.getpid()) & started):
            break
        await asyncio.sleep(0.025)
    assert not (_children(os.getpid()) & started)
