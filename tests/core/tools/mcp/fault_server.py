"""An MCP server (the SDK's MCPServer) that misbehaves on request, for the fault tests: it never
answers, exits mid-call, writes junk on stdout, floods stderr, fails, sends a malformed result,
returns huge outputs. ``MARK_DIR`` (env) gets a file when a call is cancelled."""

from __future__ import annotations

import base64
import io
import json
import os
import sys
from pathlib import Path

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ImageContent, TextContent, ToolAnnotations

server = MCPServer("faulty")
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
    sys.stdout.write("this is not JSON-RPC at all\n")
    sys.stdout.flush()
    return "answered after junk"


@server.tool()
def flood() -> str:
    for n in range(20_000):
        sys.stderr.write(f"log line {n} " + "x" * 200 + "\n")
    sys.stderr.flush()
    return "flooded"


@server.tool()
def fail() -> str:
    raise ValueError("the database is locked")


@server.tool()
def malformed(ctx: Context) -> str:
    reply = {"jsonrpc": "2.0", "id": ctx.request_id, "result": {"content": "not a list"}}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
    return "late"


@server.tool()
def big(size: int) -> str:
    half = max(0, (size - len(MIDDLE) - 2) // 2)
    line = "filler words of a long log line\n"
    head = (line * (half // len(line) + 1))[:half]
    return head + "\n" + MIDDLE + "\n" + head


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
def delete_everything(target: str) -> str:
    return f"deleted {target}"


if __name__ == "__main__":
    server.run("stdio")
