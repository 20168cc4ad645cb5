"""The MCP servers of one session as one family of tools: configured from the settings (a
changed server restarted, a removed one stopped), their tools offered under namespaced names,
a call approved and routed to its server, their states told as ``mcp_servers`` events, and all
of them stopped with the session."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from mcp import types

from ... import protocol as p
from ...mcp_config import McpServerSpec
from ..calls import ToolError, ToolResult, parse_arguments
from .approval import ApprovalGate, destructive, read_only
from .connection import McpConnection
from .names import adapt_schema, tool_name

DENIED = (
    "The user denied this call of {tool} (MCP server {server!r}). Do not call it again for "
    "this request unless the user asks; say what you would have done instead."
)


class McpServers:
    """The servers, their tools by provider name, and the approval of their calls."""

    def __init__(self, emit: Callable[[p.Event], None]) -> None:
        self._emit = emit
        self.approvals = ApprovalGate(emit)
        self._servers: dict[str, McpConnection] = {}
        self._invalid: dict[str, str] = {}
        self._disabled: list[str] = []
        self._names: dict[str, tuple[McpConnection, types.Tool]] = {}
        self._specs: list[dict[str, Any]] = []
        self._always_allow: dict[str, frozenset[str]] = {}  # each server's, as configured
        self._stopping: set[asyncio.Task[None]] = set()
        self._allow_read_only = True
        self._closed = False
        self._reported = False  # an mcp_servers event was sent (so an empty list is news)
        self._report_due = False

    # ------------------------------------------------------------------ configuration

    def configure(
        self, specs: tuple[McpServerSpec, ...], invalid: dict[str, str], allow_read_only: bool
    ) -> None:
        """Put these servers in force: new and changed ones start (in the background), removed
        and disabled ones stop; an unchanged server keeps running."""
        self._allow_read_only = allow_read_only
        self._invalid = dict(invalid)
        wanted = {spec.name: spec for spec in specs}
        for name, allowed in self._always_allow.items():  # taken out of alwaysAllow: ask again
            spec = wanted.get(name)
            self.approvals.revoke(name, allowed - (spec.always_allow if spec else frozenset()))
        self._always_allow = {spec.name: spec.always_allow for spec in specs}
        for name, conn in list(self._servers.items()):
            spec = wanted.get(name)
            if spec is None or not spec.enabled or (
                spec.connection_key() != conn.spec.connection_key()
            ):
                del self._servers[name]
                self._stop_later(conn)
            else:
                conn.spec = spec  # tools turned on or off, always-allowed ones: no restart
        running = _loop_running()
        for name, spec in wanted.items():
            if spec.enabled and name not in self._servers:
                conn = McpConnection(spec, self._changed)
                self._servers[name] = conn
                if running:  # else it starts on first use
                    conn.start()
        self._disabled = [s.name for s in specs if not s.enabled]
        self._changed()

    def _stop_later(self, conn: McpConnection) -> None:
        task = asyncio.get_running_loop().create_task(conn.stop())
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)

    async def close(self) -> None:
        """Stop every server and wait until they have stopped (no process left behind)."""
        self._closed = True
        servers, self._servers = list(self._servers.values()), {}
        await asyncio.gather(*(conn.stop() for conn in servers), *self._stopping,
                             return_exceptions=True)

    async def wait_started(self) -> None:
        """Wait until no server is still starting (each ends ready or failed)."""
        for conn in list(self._servers.values()):
            await conn.ensure_ready() if conn.state == "starting" else None

    # ------------------------------------------------------------------ the tools

    def specs(self) -> list[dict[str, Any]]:
        """The function specs of the enabled tools of every server that has listed them."""
        return list(self._specs)

    def owns(self, name: str) -> bool:
        return name in self._names

    async def call(self, name: str, arguments: str, call_id: str) -> ToolResult:
        """Run the call (after the user's approval when it needs one). Never raises, except
        when cancelled: then the approval card is withdrawn or the server told."""
        conn, tool = self._names[name]
        spec = conn.spec
        try:
            args = parse_arguments(name, arguments)
        except ToolError as exc:
            return ToolResult(str(exc), ok=False)
        if self.approvals.needed(spec, tool, self._allow_read_only):
            decision = await self.approvals.ask(call_id, spec, tool, args)
            if decision == "deny":
                return ToolResult(DENIED.format(tool=tool.name, server=spec.name), ok=False)
            if decision == "always":
                self._changed()  # the tool's state says so
        result = await conn.call(tool.name, args)
        return _scrubbed(result, spec.secrets())

    # ------------------------------------------------------------------ states

    def _changed(self) -> None:
        names: dict[str, tuple[McpConnection, types.Tool]] = {}
        specs: list[dict[str, Any]] = []
        for conn in self._servers.values():
            # A crashed server's tools stay offered: calling one starts it again.
            for tool in conn.tools:
                if tool.name in conn.spec.disabled_tools:
                    continue
                name = tool_name(conn.spec.name, tool.name, frozenset(names))
                names[name] = (conn, tool)
                specs.append(_function_spec(name, conn.spec.name, tool))
        self._names, self._specs = names, specs
        if not self._report_due and not self._closed and _loop_running():
            # Said once per loop pass, after what caused it (the session's first events too).
            self._report_due = True
            asyncio.get_running_loop().call_soon(self._report)

    def _report(self) -> None:
        self._report_due = False
        statuses = self.statuses()
        if self._closed or not (statuses or self._reported):
            return
        self._reported = True
        self._emit(p.McpServers(servers=statuses))

    def statuses(self) -> list[p.McpServerInfo]:
        """Every configured server's state, in the settings' order."""
        infos = [
            p.McpServerInfo(
                name=conn.spec.name, state=conn.state, transport=conn.spec.transport,
                error=conn.error, stderr=conn.stderr_lines(),
                tools=[
                    p.McpToolInfo(
                        name=tool.name, description=tool.description or "",
                        enabled=tool.name not in conn.spec.disabled_tools,
                        read_only=read_only(tool), destructive=destructive(tool),
                        always_allowed=self.approvals.always_allowed(conn.spec, tool.name),
                    )
                    for tool in conn.tools
                ],
            )
            for conn in self._servers.values()
        ]
        infos += [p.McpServerInfo(name=n, state="disabled") for n in self._disabled]
        infos += [
            p.McpServerInfo(name=name, state="invalid", error=error)
            for name, error in self._invalid.items()
        ]
        return infos


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _function_spec(name: str, server: str, tool: types.Tool) -> dict[str, Any]:
    about = tool.description or tool.title or tool.name
    return {
        "type": "function",
        "name": name,
        "description": f"{about}\n(Tool {tool.name!r} of the MCP server {server!r}.)",
        "parameters": adapt_schema(tool.input_schema),
        "strict": False,
    }


def _scrubbed(result: ToolResult, secrets: list[str]) -> ToolResult:
    output = result.output
    for secret in secrets:
        if secret in output:
            output = output.replace(secret, "[redacted]")
    return result if output is result.output else ToolResult(output, result.ok, result.images)
