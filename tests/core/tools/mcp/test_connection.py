"""A server's connection hears its tool list change: the list read again even while the first
listing is under way, and an older answer never replacing a newer one."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp import types

from app.core.mcp_config import parse_server
from app.core.tools.mcp.connection import McpConnection


def tool(name: str) -> types.Tool:
    return types.Tool(name=name, input_schema={"type": "object"})


class SlowFirstServer:
    """A session whose first tools/list answers only when released, with the old list;
    any later one answers at once, with the new list."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.asked = 0

    async def list_tools(self, params: Any = None) -> types.ListToolsResult:
        self.asked += 1
        if self.asked == 1:
            await self.release.wait()
            return types.ListToolsResult(tools=[tool("old")])
        return types.ListToolsResult(tools=[tool("old"), tool("new")])


async def test_a_change_said_during_the_first_listing_is_listed_again_and_kept() -> None:
    changes: list[str] = []
    conn = McpConnection(parse_server("s", {"command": "x"}), lambda: changes.append("c"))
    server = SlowFirstServer()
    conn._listing = server  # type: ignore[assignment]  # initialized, being listed
    first = asyncio.create_task(conn._list_tools(server))  # type: ignore[arg-type]
    await asyncio.sleep(0)  # the first listing is under way
    await conn._on_message(types.ToolListChangedNotification())
    assert [t.name for t in conn.tools] == ["old", "new"] and changes == ["c"]
    server.release.set()
    await first  # its older answer arrives last: dropped
    assert [t.name for t in conn.tools] == ["old", "new"]


async def test_a_change_before_the_server_is_initialized_is_not_listened_to() -> None:
    conn = McpConnection(parse_server("s", {"command": "x"}), lambda: None)
    await conn._on_message(types.ToolListChangedNotification())
    assert conn.tools == []
