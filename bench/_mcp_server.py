"""The MCP server the MCP benchmark calls (the official SDK's ``MCPServer`` on stdio): ``echo``
for the per-call cost, ``big`` for an output of a given size (lines of log text, a marker in the
middle). Both read-only, so a session runs them without asking."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("bench")
MIDDLE = "the-middle-marker-7731"
READ_ONLY = ToolAnnotations(read_only_hint=True)


@server.tool(annotations=READ_ONLY)
def echo(text: str) -> str:
    return text


@server.tool(annotations=READ_ONLY)
def big(size: int) -> str:
    line = "2026-11-28 03:00:00 INFO worker-7 processed batch 41872 in 12.4 ms, queue depth 3\n"
    half = max(0, (size - len(MIDDLE) - 2) // 2)
    head = (line * (half // len(line) + 1))[:half]
    return head + "\n" + MIDDLE + "\n" + head


if __name__ == "__main__":
    server.run("stdio")
