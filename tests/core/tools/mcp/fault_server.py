"""An MCP server (the SDK's MCPServer) that misbehaves on request, for the fault tests: it never
answers, exits mid-call, writes junk on stdout, floods stderr, fails, sends a malformed result,
returns huge outputs, adds a tool and says its list changed. ``MARK_DIR`` (env) gets a file when
a call is cancelled. Run with ``http`` it serves streamable HTTP on a free loopback port, which
it prints first on stdout."""

from __future__ import annotations

import base64
import io
import json
import os
import sys
from pathlib import Path

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ImageContent, TextContent, ToolAnnotations

server = MCPServer("faulty")


def wire_write(line: str) -> None:
    """A line on the protocol's own stdout: the SDK serves the wire from a private copy of
    fd 1 and points fd 1 (print, sys.stdout) at stderr, so junk must go to that copy."""
    from mcp.server import stdio as sdk_stdio

    claim = sdk_stdio._claims.get(1)
    fd = claim.private_fd if claim is not None and claim.private_fd is not None else 1
    os.write(fd, line.encode() + b"\n")
MIDDLE = "the-needle-is-quetzal-8812"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    return f"echo: {text}"


def _image(text: str, data: bytes) -> list[TextContent | ImageContent]:
    return [TextContent(type="text", text=text),
            ImageContent(type="image", data=base64.b64encode(data).decode(), mime_type="image/png")]


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def picture() -> list[TextContent | ImageContent]:
    """Text and a 24x16 red PNG."""
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (24, 16), (220, 20, 20)).save(out, "PNG")
    return _image("a red rectangle", out.getvalue())


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def broken_picture() -> list[TextContent | ImageContent]:
    """An image block whose bytes are no image."""
    return _image("a broken picture", b"these bytes are no PNG")


@server.tool()
def pid() -> str:
    return str(os.getpid())


@server.tool()
async def hang(ctx: Context) -> str:
    try:
        await anyio.sleep(3600)
    except anyio.get_cancelled_exc_class():
        mark = os.environ.get("MARK_DIR")
        if mark:
            Path(mark, "cancelled").write_text(str(ctx.request_id))
        raise
    return "never"


@server.tool()
def exit_now() -> str:
    sys.stderr.write("fatal: the server gives up\n")
    sys.stderr.flush()
    os._exit(3)


@server.tool()
def junk() -> str:
    wire_write("this is not JSON-RPC at all")
    wire_write('{"jsonrpc": "2.0", "method": 42}')
    return "answered after junk"


@server.tool()
def flood() -> str:
    for n in range(20_000):
        sys.stderr.write(f"log line {n} " + "x" * 200 + "\n")
    sys.stderr.flush()
    return "flooded"


@server.tool()
def fail() -> str:
    raise ToolError("the database is locked")


@server.tool()
async def malformed(ctx: Context) -> str:
    """Answers with a result that is not a tool result, and nothing after it."""
    rid = ctx.request_id  # the SDK gives it as text: the client's own id is a number
    rid = int(rid) if isinstance(rid, str) and rid.isdigit() else rid
    reply = {"jsonrpc": "2.0", "id": rid, "result": {"content": "not a list"}}
    wire_write(json.dumps(reply))
    await anyio.sleep(3600)
    return "never"


@server.tool()
def big(size: int) -> str:
    half = max(0, (size - len(MIDDLE) - 2) // 2)
    line = "filler words of a long log line\n"
    head = (line * (half // len(line) + 1))[:half]
    return head + "\n" + MIDDLE + "\n" + head


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
def delete_everything(target: str) -> str:
    return f"deleted {target}"


def fresh() -> str:
    return "fresh from a changed list"


@server.tool()
async def grow(ctx: Context) -> str:
    """Adds the tool ``fresh`` and tells the client that the tool list changed."""
    server.add_tool(fresh, annotations=ToolAnnotations(read_only_hint=True))
    await ctx.request_context.session.send_tool_list_changed()
    return "grown"


def serve_http() -> None:
    import socket

    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    print(sock.getsockname()[1], flush=True)  # listening already: a client may connect
    app = server.streamable_http_app()
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])


if __name__ == "__main__":
    if sys.argv[1:] == ["http"]:
        serve_http()
    else:
        server.run("stdio")
