"""What the MCP end-to-end tests share: sessions opened once their servers have answered (and
closed at the end of the test, failed or not, their servers with them), and the tool outputs of
a turn's events."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from app.core import Session
from tests.conftest import collect, of_type

OPENED: list[Session] = []
STATUSES: dict[int, list[Any]] = {}  # the servers as the last mcp_servers event told them


@pytest.fixture
async def mcp_sessions_closed() -> AsyncIterator[None]:
    """Every session a test opened with ``open_ready`` is closed, failed or not."""
    yield
    for session in OPENED:
        await session.close()
    OPENED.clear()
    STATUSES.clear()


async def open_ready(
    config: Any, session_id: str | None = None, states: list[str] | None = None
) -> Session:
    """A session whose MCP servers have all answered: ``states`` (all ready by default)."""
    session = await Session.open(config, session_id)
    OPENED.append(session)
    events = await collect(session, "mcp_servers", timeout=60)
    while not all(s.state != "starting" for s in events[-1].servers):
        events = await collect(session, "mcp_servers", timeout=60)
    expected = states or ["ready"] * len(config.mcp_servers)
    assert [s.state for s in events[-1].servers] == expected, events[-1]
    STATUSES[id(session)] = events[-1].servers
    return session


def servers_told(session: Session) -> list[Any]:
    """The servers (``McpServerInfo``) as the event that found them all started told them."""
    return STATUSES[id(session)]


def outputs(events: list[Any]) -> list[dict[str, Any]]:
    """The function-call outputs a turn's events completed, in order."""
    return [e.item.data for e in of_type(events, "item_completed")
            if e.item.kind == "function_call_output"]


def request_tool_names(body: dict[str, Any]) -> list[str]:
    """The tool names a recorded request offered (Responses or Chat Completions shape)."""
    return [t.get("name") or t["function"]["name"] for t in body.get("tools", [])]
