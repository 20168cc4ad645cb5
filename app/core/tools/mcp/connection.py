"""One MCP server's connection: started in the background by a task that owns the SDK's
transport and session (entered and left in that task, as anyio requires), its tools listed and
re-listed when it says they changed, calls with the server's timeout, faults in words, and a
crashed server started again on the next call, after a growing pause."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import Any, Literal

import anyio
from mcp import ClientSession, MCPError, StdioServerParameters, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from pydantic import ValidationError

from ...mcp_config import McpServerSpec
from ...preload import import_modules
from ..calls import ToolResult
from .results import result_text
from .stderr_tail import StderrTail
from .stdio_transport import stdio_transport

log = logging.getLogger(__name__)

State = Literal["starting", "ready", "failed", "stopped"]
# What the SDK imports to check a result against a tool's output schema.
SCHEMA_MODULES = ("jsonschema", "referencing.exceptions")
# Pauses before a failed server is started again: 1 s, 2 s, 4 s… up to a minute.
BACKOFF_FIRST = 1.0
BACKOFF_MAX = 60.0
STOP_GRACE = 5.0  # seconds a stopping server's task gets before it is cancelled
STDERR_DRAIN = 2.0  # seconds a failed server's last stderr lines are waited for at most


class McpConnection:
    """A server's connection and what it offers; ``on_change`` hears every change of state."""

    def __init__(self, spec: McpServerSpec, on_change: Callable[[], None]) -> None:
        self.spec = spec
        self.state: State = "stopped"
        self.error = ""
        self.tools: list[types.Tool] = []
        self._on_change = on_change
        self._session: ClientSession | None = None
        self._listing: ClientSession | None = None  # initialized, its tools (being) listed
        self._lists_asked = 0  # listings asked for, and the newest one whose answer is kept
        self._list_kept = 0
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._done = asyncio.Event()
        self._stderr: StderrTail | None = None
        self._failures = 0
        self._retry_at = 0.0

    # ------------------------------------------------------------------ life

    def start(self) -> None:
        """Start the server in the background (nothing waits for it)."""
        if self._task is not None and not self._task.done():
            return
        self._ready = asyncio.Event()
        self._done = asyncio.Event()
        self._set("starting", "")
        self._task = asyncio.get_running_loop().create_task(
            self._run(), name=f"mcp-server-{self.spec.name}"
        )

    async def stop(self) -> None:
        """Stop the server (its process tree ends with it) and wait until it has."""
        task, self._task = self._task, None
        self._done.set()
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(asyncio.shield(task), STOP_GRACE)
            except (TimeoutError, asyncio.CancelledError):
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        self._session = None
        self._set("stopped", "")

    def stderr_lines(self) -> list[str]:
        return self._stderr.lines() if self._stderr is not None else []

    async def _run(self) -> None:
        stderr = StderrTail(self.spec.secrets()) if self.spec.transport == "stdio" else None
        self._stderr = stderr
        try:
            async with AsyncExitStack() as stack:
                read, write = await self._open(stack, stderr)
                session = await stack.enter_async_context(
                    ClientSession(
                        read, write, read_timeout_seconds=self.spec.timeout,
                        message_handler=self._on_message,
                    )
                )
                with anyio.fail_after(self.spec.timeout):
                    await session.initialize()
                    self._listing = session  # a change said from now on is listened to
                    await self._list_tools(session)
                self._session = session
                self._failures = 0
                self._set("ready", "")
                self._ready.set()
                if any(t.output_schema for t in self.tools):
                    # The SDK checks such a tool's result with jsonschema, imported at its
                    # first call: 80-90 ms on the window's thread. Imported here, off it.
                    await asyncio.to_thread(import_modules, SCHEMA_MODULES)
                await self._done.wait()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # noqa: BLE001 - any failure is the server's state
            if stderr is not None:  # its process has ended: what it said before is read
                await asyncio.to_thread(stderr.drained, STDERR_DRAIN)
            self._failed(_start_failure(exc, self.spec.timeout))
        finally:
            self._session = self._listing = None
            self._ready.set()  # wake whoever waits: the state says how it went
            if stderr is not None:
                stderr.handed_over()

    async def _open(self, stack: AsyncExitStack, stderr: StderrTail | None) -> Any:
        spec = self.spec
        if spec.transport == "stdio":
            assert stderr is not None
            params = StdioServerParameters(
                command=spec.command, args=list(spec.args), env=spec.env_values() or None,
                cwd=spec.cwd or None, encoding_error_handler="replace",
            )
            streams = await stack.enter_async_context(stdio_transport(params, stderr.writer))
            stderr.handed_over()
            return streams
        client = create_mcp_http_client(headers=spec.header_values() or None)
        await stack.enter_async_context(client)
        return await stack.enter_async_context(streamable_http_client(spec.url, http_client=client))

    async def _list_tools(self, session: ClientSession) -> None:
        """The server's tools, every page; an answer older than one already kept is dropped
        (a change said while the first listing was under way is listed again, and wins)."""
        self._lists_asked += 1
        asked = self._lists_asked
        tools: list[types.Tool] = []
        cursor: str | None = None
        while True:
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        if asked > self._list_kept:
            self.tools, self._list_kept = tools, asked

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification) and self._listing is not None:
            try:
                await self._list_tools(self._listing)
            except Exception as exc:  # noqa: BLE001 - the old list stays
                log.info("MCP server %s: re-listing its tools failed: %s", self.spec.name, exc)
            self._on_change()
        elif isinstance(message, Exception):
            log.debug("MCP server %s: %s", self.spec.name, type(message).__name__)

    # ------------------------------------------------------------------ calls

    async def ensure_ready(self) -> str | None:
        """Wait until the server is ready, starting a failed one again when its pause is
        over; ``None`` when ready, else why it is not, in words."""
        if self.state == "failed" or self.state == "stopped":
            wait = self._retry_at - time.monotonic()
            if wait > 0:
                return (f"The MCP server {self.spec.name!r} is not available ({self.error}); "
                        f"Coco tries to start it again in {wait:.0f} s.")
            if self._task is not None and not self._task.done():
                await asyncio.gather(self._task, return_exceptions=True)  # the old one ends
            self.start()
        await self._ready.wait()
        if self.state != "ready" or self._session is None:
            return f"The MCP server {self.spec.name!r} could not be started: {self.error}"
        return None

    async def call(self, tool: str, arguments: dict[str, Any]) -> ToolResult:
        """Call ``tool``; every fault is a result in words. Cancelling the caller cancels the
        request (the SDK tells the server)."""
        problem = await self.ensure_ready()
        if problem is not None:
            return ToolResult(problem, ok=False)
        session = self._session
        assert session is not None
        name = self.spec.name
        try:
            result = await session.call_tool(tool, arguments, self.spec.timeout)
        except MCPError as exc:
            if exc.code == types.REQUEST_TIMEOUT:
                return ToolResult(f"The MCP server {name!r} gave no answer within "
                                  f"{self.spec.timeout:g} s; the call was cancelled.", ok=False)
            if exc.code == types.CONNECTION_CLOSED:
                return self._lost()
            return ToolResult(f"The MCP server {name!r} answered with an error: "
                              f"{exc.message}", ok=False)
        except ValidationError:
            return ToolResult(f"The MCP server {name!r} sent a malformed result for {tool}.",
                              ok=False)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            return self._lost()
        except RuntimeError as exc:
            return ToolResult(f"The MCP server {name!r} asked for something Coco cannot give "
                              f"during a tool call: {exc}", ok=False)
        if not isinstance(result, types.CallToolResult):
            return ToolResult(f"The MCP server {name!r} sent an unexpected result for {tool}.",
                              ok=False)
        return result_text(result)

    def _lost(self) -> ToolResult:
        lines = self.stderr_lines()
        said = f" Its last words: {lines[-1]}" if lines else ""
        self._failed("the server stopped (connection closed)")
        self._done.set()
        return ToolResult(f"The MCP server {self.spec.name!r} stopped during the call; Coco "
                          f"starts it again on the next call.{said}", ok=False)

    # ------------------------------------------------------------------ state

    def _failed(self, error: str) -> None:
        self._failures += 1
        pause = min(BACKOFF_MAX, BACKOFF_FIRST * 2 ** (self._failures - 1))
        self._retry_at = time.monotonic() + (0.0 if self._failures == 1 else pause)
        self._set("failed", error)

    def _set(self, state: State, error: str) -> None:
        if (state, error) == (self.state, self.error) and state != "ready":
            return
        self.state, self.error = state, error
        self._on_change()


def _start_failure(exc: BaseException, timeout: float) -> str:
    """Why a server did not start, in words."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, TimeoutError):
        return f"no answer within {timeout:g} s"
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    if isinstance(exc, MCPError):
        if exc.code == types.CONNECTION_CLOSED:
            return "the server exited while starting"
        return exc.message
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 300 else text[:299] + "…"
