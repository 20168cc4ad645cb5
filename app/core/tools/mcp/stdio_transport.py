"""A local MCP server's stdio, read in linear time: the SDK's ``stdio_client`` with its stdout
reader replaced. The SDK's reader joins what it buffered to each new chunk and splits the whole
again, so a line of n bytes costs n²/64 KB of copying on the event loop (a 10 MB result took 4-7
s and froze the window in 20-40 ms blocks; a 100 MB one, minutes). Here a line's chunks are kept
as they come and joined once, and a long line is parsed in a worker thread (orjson, then the
SDK's own message types; a huge one a piece at a time, see ``system.json_pieces``), so the
loop only ever waits for one chunk. The process is started, fed and stopped (its whole tree,
with the SDK's grace periods) by the SDK's own functions."""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import IO, Any, TextIO, cast

import anyio
import anyio.lowlevel
import anyio.to_thread
import mcp_types as types
from mcp import StdioServerParameters
from mcp.client import stdio as sdk_stdio
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from ...system import fastjson
from ...system.json_pieces import loads_in_pieces

log = logging.getLogger(__name__)

# Lines longer than this are parsed in a worker thread rather than on the event loop.
THREAD_PARSE_BYTES = 256 * 1024
# Lines longer than this have their long strings decoded in pieces: one call parsing 20 MB held
# the interpreter, and with it the window's thread, for 28 ms.
PIECES_PARSE_BYTES = 1024 * 1024
_WRITER_FLUSH_TIMEOUT = 0.5


def parse_line(line: bytes | bytearray, errors: str = "replace") -> SessionMessage | Exception:
    """One line of the server's stdout as a JSON-RPC message, or why it is not one (a value:
    the session hears of it and goes on)."""
    try:
        value = loads_in_pieces(line) if len(line) > PIECES_PARSE_BYTES else fastjson.loads(line)
    except ValueError:
        try:  # not UTF-8 (orjson takes nothing else): decoded as the server's entry says
            value = fastjson.loads(line.decode("utf-8", errors))
        except ValueError as exc:
            log.info("An MCP server wrote a line that is not JSON (%d bytes)", len(line))
            return exc
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_python(value, by_name=False))
    except ValidationError as exc:
        log.info("An MCP server wrote JSON that is not a JSON-RPC message (%d bytes)", len(line))
        return exc


class LineReader:
    """Bytes in chunks as they come; whole lines out. A line's bytes grow in one buffer
    (amortised linear, never copied whole again), so a long line costs about its size once."""

    def __init__(self) -> None:
        self._partial = bytearray()

    def feed(self, chunk: bytes) -> list[bytes | bytearray]:
        """The lines ``chunk`` completes (without their newline), blank ones left out."""
        lines: list[bytes | bytearray] = []
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            if self._partial:
                self._partial += chunk[start:end]
                line: bytes | bytearray = self._partial
                self._partial = bytearray()
            else:
                line = chunk[start:end]
            if line and not line.isspace():  # (strip() would copy a long line)
                lines.append(line)
            start = end + 1
        if start < len(chunk):
            self._partial += chunk[start:]
        return lines


@asynccontextmanager
async def stdio_transport(
    server: StdioServerParameters, errlog: IO[str]
) -> AsyncGenerator[tuple[Any, Any], None]:
    """The read and write streams of a session with the server ``server`` describes; leaving
    stops the server (stdin closed, a grace period, then its process tree killed)."""
    command = await sdk_stdio._get_executable_command(server.command)
    process = await sdk_stdio._create_platform_compatible_process(
        command=command,
        args=server.args,
        env=sdk_stdio.get_default_environment() | (server.env or {}),
        errlog=cast(TextIO, errlog),  # (any text file with a descriptor)
        cwd=server.cwd,
    )
    # No await until the task group is entered: a cancellation would leak the process.
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    writer_done = anyio.Event()
    errors = server.encoding_error_handler

    async def stdout_reader() -> None:
        assert process.stdout is not None
        reader = LineReader()
        try:
            async with read_writer:
                async for chunk in process.stdout:
                    lines = reader.feed(chunk)
                    del chunk
                    while lines:
                        line = lines.pop(0)
                        if len(line) > THREAD_PARSE_BYTES:
                            message = await anyio.to_thread.run_sync(parse_line, line, errors)
                        else:
                            message = parse_line(line, errors)
                        del line  # not held while the session handles the message
                        await read_writer.send(message)
                        del message
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream,
                ConnectionError, OSError):
            pass  # the session sees the stream end
        finally:
            await sdk_stdio._drain_stdout(process)

    async def stdin_writer() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for message in write_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((data + "\n").encode("utf-8", errors))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_writer.aclose()  # a request must not wait for a dead server
        finally:
            writer_done.set()

    async def shutdown() -> None:
        read_stream.close()
        write_stream.close()
        with anyio.move_on_after(_WRITER_FLUSH_TIMEOUT):
            await writer_done.wait()
        await sdk_stdio._stop_server_process(process)
        await sdk_stdio._aclose_all(
            read_stream, write_stream, read_writer, write_reader
        )
        await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as group:
        group.start_soon(stdout_reader)
        group.start_soon(stdin_writer)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await shutdown()
            group.cancel_scope.cancel()
    await anyio.lowlevel.cancel_shielded_checkpoint()
