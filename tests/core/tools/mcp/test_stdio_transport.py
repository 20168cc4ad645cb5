"""The stdio transport's reading: lines rebuilt from any chunking, each parsed as a JSON-RPC
message or returned as the reason it is not one; and a real server called through it, a line
long enough to be parsed off the event loop included."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import mcp_types as types
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.shared.message import SessionMessage

from app.core.system.json_pieces import loads_in_pieces
from app.core.tools.mcp.stderr_tail import StderrTail
from app.core.tools.mcp.stdio_transport import (
    PIECES_PARSE_BYTES,
    THREAD_PARSE_BYTES,
    LineReader,
    parse_line,
)

FAULT_SERVER = Path(__file__).with_name("fault_server.py")


def test_a_line_cut_into_many_chunks_comes_out_whole_and_once() -> None:
    reader = LineReader()
    line = b'{"jsonrpc": "2.0", "id": 1, "result": {}}'
    out: list[bytes] = []
    for i in range(len(line)):
        out += reader.feed(line[i:i + 1])
    assert out == []  # no newline yet: nothing is a line
    assert reader.feed(b"\n") == [line]
    assert reader.feed(b"") == []


def test_several_lines_in_one_chunk_and_a_partial_one_kept() -> None:
    reader = LineReader()
    assert reader.feed(b"one\ntwo\n\n  \nthr") == [b"one", b"two"]  # blank lines dropped
    assert reader.feed(b"ee\nfo") == [b"three"]
    assert reader.feed(b"ur\r\n") == [b"four\r"]  # JSON takes the \r as white space


def test_a_message_parses_and_junk_is_a_value_not_a_raise() -> None:
    message = parse_line(b'{"jsonrpc": "2.0", "id": 7, "result": {"tools": []}}\r')
    assert isinstance(message, SessionMessage)
    assert isinstance(message.message, types.JSONRPCResponse) and message.message.id == 7
    assert isinstance(parse_line(b"this is not JSON-RPC at all"), ValueError)
    assert isinstance(parse_line(b'{"jsonrpc": "2.0", "method": 42}'), ValueError)


def test_bytes_that_are_not_utf8_are_replaced_when_the_entry_says_so() -> None:
    raw = b'{"jsonrpc": "2.0", "method": "notifications/message", "params": ' \
          b'{"level": "info", "data": "caf\xe9"}}'
    message = parse_line(raw, "replace")
    assert isinstance(message, SessionMessage), message
    assert message.message.params["data"] == "caf\ufffd"
    assert isinstance(parse_line(raw, "strict"), ValueError)


def test_a_huge_line_is_parsed_in_pieces_to_the_same_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import app.core.tools.mcp.stdio_transport as transport

    text = "caf\u00e9 \\ \"quoted\" line\n" * (PIECES_PARSE_BYTES // 20)
    raw = json.dumps({"jsonrpc": "2.0", "id": 3, "result": {
        "content": [{"type": "text", "text": text}], "structuredContent": {"result": text}}})
    line = raw.encode()
    pieced: list[int] = []
    monkeypatch.setattr(transport, "loads_in_pieces",
                        lambda data: pieced.append(len(data)) or loads_in_pieces(data))
    message = parse_line(line)
    assert pieced == [len(line)]
    assert isinstance(message, SessionMessage)
    assert message.message.result["content"][0]["text"] == text
    assert message.message.result["structuredContent"]["result"] == text
    assert isinstance(parse_line(line[:PIECES_PARSE_BYTES]), ValueError)  # cut short
    # Not UTF-8: replaced as the entry says, as for a short line.
    bad = line.replace(b"caf\\u00e9", b"caf\xe9", 1)
    replaced = parse_line(bad, "replace")
    assert isinstance(replaced, SessionMessage)
    assert replaced.message.result["content"][0]["text"].startswith("caf\ufffd \\ ")
    assert isinstance(parse_line(bad, "strict"), ValueError)


async def test_a_real_server_answers_through_it_a_long_line_included() -> None:
    from app.core.tools.mcp.stdio_transport import stdio_transport

    size = THREAD_PARSE_BYTES * 8  # parsed in a worker thread
    params = StdioServerParameters(command=sys.executable, args=[str(FAULT_SERVER)])
    tail = StderrTail()
    async with stdio_transport(params, tail.writer) as (read, write):
        tail.handed_over()
        async with ClientSession(read, write, read_timeout_seconds=30) as session:
            await session.initialize()
            small = await session.call_tool("echo", {"text": "hi"})
            big = await session.call_tool("big", {"size": size})
            junk = await session.call_tool("junk", {})
    assert isinstance(small.content[0], types.TextContent) and small.content[0].text == "echo: hi"
    text = big.content[0]
    assert isinstance(text, types.TextContent) and len(text.text) == size
    assert "the-needle-is-quetzal-8812" in text.text
    assert json.dumps(junk.content[0].model_dump()).count("answered after junk") == 1
