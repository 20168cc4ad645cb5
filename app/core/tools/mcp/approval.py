"""Approval of MCP tool calls: which calls must wait for the user, the card's request and its
answer (``ApproveToolCall``), and the tools the user always allows. A tool that declares itself
read-only may run unasked (a setting); any other, destructive ones included, asks every time
until the user allows it always."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from mcp import types

from ... import protocol as p
from ...mcp_config import McpServerSpec


def read_only(tool: types.Tool) -> bool:
    return bool(tool.annotations is not None and tool.annotations.read_only_hint)


def destructive(tool: types.Tool) -> bool:
    """MCP's default: a tool that is not read-only may be destructive unless it says not."""
    if read_only(tool):
        return False
    return tool.annotations is None or tool.annotations.destructive_hint is not False


class ApprovalGate:
    """The calls waiting for the user, and the tools allowed always in this session."""

    def __init__(self, emit: Callable[[p.Event], None]) -> None:
        self._emit = emit
        self._pending: dict[str, tuple[asyncio.Future[p.ApprovalDecision], str, str]] = {}
        self._always: set[tuple[str, str]] = set()

    def needed(self, spec: McpServerSpec, tool: types.Tool, allow_read_only: bool) -> bool:
        """Whether a call of ``tool`` must wait for the user."""
        if self.always_allowed(spec, tool.name):
            return False
        return not (allow_read_only and read_only(tool))

    def always_allowed(self, spec: McpServerSpec, tool: str) -> bool:
        return tool in spec.always_allow or (spec.name, tool) in self._always

    def revoke(self, server: str, tools: frozenset[str]) -> None:
        """The user took ``tools`` out of the server's ``alwaysAllow``: they ask again, also
        those answered ``always`` in this session."""
        self._always -= {(server, tool) for tool in tools}

    @property
    def waiting(self) -> list[str]:
        """The call ids waiting for an answer."""
        return list(self._pending)

    async def ask(
        self, call_id: str, spec: McpServerSpec, tool: types.Tool, arguments: dict[str, Any]
    ) -> p.ApprovalDecision:
        """Ask the user and wait for the answer. Cancelled (the turn stopped), the card is
        withdrawn and the cancellation goes on."""
        future: asyncio.Future[p.ApprovalDecision] = asyncio.get_running_loop().create_future()
        self._pending[call_id] = (future, spec.name, tool.name)
        self._emit(p.ToolApprovalRequested(
            call_id=call_id, server=spec.name, tool=tool.name, arguments=arguments,
            description=tool.description or "", destructive=destructive(tool),
        ))
        try:
            decision = await future
        except asyncio.CancelledError:
            self._emit(p.ToolApprovalResolved(
                call_id=call_id, decision="cancelled", server=spec.name, tool=tool.name
            ))
            raise
        finally:
            self._pending.pop(call_id, None)
        if decision == "always":
            self._always.add((spec.name, tool.name))
        self._emit(p.ToolApprovalResolved(
            call_id=call_id, decision=decision, server=spec.name, tool=tool.name
        ))
        return decision

    def decide(self, call_id: str, decision: p.ApprovalDecision) -> bool:
        """Answer the call ``call_id``; False when no call waits under that id."""
        entry = self._pending.get(call_id)
        if entry is None or entry[0].done():
            return False
        entry[0].set_result(decision)
        return True
