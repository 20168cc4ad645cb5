"""The SSE decoder (events from arbitrary chunks of the body) and the JSON helpers."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import AsyncIterator

import pytest

from app.core.providers.sse import (
    EVENTS_PER_SLICE,
    SSEDecoder,
    json_events,
    json_int,
    json_objects,
)
from app.core.system.fastjson import dumps_line, loads

BODY = (
    b": keep-alive comment\r\n"
    b"event: response.output_text.delta\r\n"
    b'data: {"type":"response.output_text.delta","delta":"H\xc3\xa9llo"}\r\n'
    b"\r\n"
    b"id: 7\n"
    b"data: first line\n"
    b"data:second line\n"
    b"retry: 100\n"
    b"\n"
    b"\n"  # a second blank line dispatches nothing
    b"data: [DONE]\n"
    b"\n"
)
EXPECTED = [
    b'{"type":"response.output_text.delta","delta":"H\xc3\xa9llo"}',
    b"first line\nsecond line",
    b"[DONE]",
]


def decode_in_chunks(body: bytes, size: int) -> list[bytes]:
    decoder = SSEDecoder()
    payloads: list[bytes] = []
    for start in range(0, len(body), size):
        payloads += decoder.feed(body[start : start + size])
    return payloads + decoder.close()


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64, len(BODY)])
def test_events_are_the_same_whatever_the_chunking(size: int) -> None:
    # Size 1 splits every CRLF and every multi-byte character across two chunks.
    assert decode_in_chunks(BODY, size) == EXPECTED


def test_an_event_is_dispatched_only_at_its_blank_line() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b'data: {"a": 1}\n') == []
    assert decoder.feed(b"\n") == [b'{"a": 1}']


def test_an_unterminated_last_event_is_returned_at_close() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: tail") == []
    assert decoder.close() == [b"tail"]
    assert decoder.close() == []  # nothing left twice


def test_a_body_of_comments_only_has_no_events() -> None:
    assert decode_in_chunks(b": ping\n\n: ping\n\n", 3) == []


def test_loads_parses_objects_from_bytes_and_text() -> None:
    assert loads(b'{"delta": "caf\xc3\xa9", "n": 3}') == {"delta": "café", "n": 3}
    assert loads('{"ok": true}') == {"ok": True}


def test_loads_accepts_what_the_standard_library_accepts() -> None:
    # orjson refuses these; the fallback keeps them parsing as they always did.
    assert math.isnan(loads(b'{"x": NaN}')["x"])
    assert loads(b'{"s": "\\ud800"}')["s"] == "\ud800"


def test_loads_raises_json_decode_error_on_garbage() -> None:
    with pytest.raises(json.JSONDecodeError):
        loads(b"{not json")


async def _chunks(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


async def test_json_events_groups_values_by_chunk_and_stops_at_done() -> None:
    body = _chunks(
        b'data: {"n": 1}\n\ndata: {"n": 2}\n\ndata: {"n"',  # two events and a half
        b": 3}\n\n",
        b"data: [DONE]\n\n",
        b'data: {"n": 4}\n\n',  # after [DONE]: never read
    )
    assert [events async for events in json_events(body)] == [
        [{"n": 1}, {"n": 2}], [{"n": 3}], []
    ]


async def test_json_events_returns_an_unterminated_last_event_at_the_end() -> None:
    body = _chunks(b'data: {"n": 1}\n\ndata: {"n": 2}')
    assert [events async for events in json_events(body)] == [[{"n": 1}], [{"n": 2}]]


async def test_json_events_lets_the_loop_run_between_slices_of_a_buffered_stream() -> None:
    # What the connection already holds is read without the loop running in between: the
    # events are handed over in slices with a turn of the loop between two, so the window
    # (on the same thread) paints while a fast stream is read.
    total = 5 * EVENTS_PER_SLICE + 3
    body = _chunks(*(b'data: {"n": %d}\n\n' % n for n in range(total)))  # one event a chunk
    handed: list[int] = []
    loop_ran_after: list[int] = []  # how many events had been handed over each time

    def tick() -> None:
        loop_ran_after.append(len(handed))
        if len(handed) < total:
            asyncio.get_running_loop().call_soon(tick)

    asyncio.get_running_loop().call_soon(tick)
    async for events in json_events(body):
        handed += [event["n"] for event in events]
    assert handed == list(range(total))  # nothing lost, nothing reordered
    # The loop ran after each full slice (this coroutine itself ran up to the first).
    assert sorted(set(loop_ran_after)) == [k * EVENTS_PER_SLICE for k in range(1, 6)]


async def test_json_events_raises_on_a_payload_that_is_not_json() -> None:
    with pytest.raises(json.JSONDecodeError):
        [events async for events in json_events(_chunks(b"data: {oops\n\n"))]


def test_json_helpers_keep_only_values_of_the_expected_type() -> None:
    assert [json_int(v) for v in (3, True, "4", None, 2.5)] == [3, 0, 0, 0, 0]
    assert json_objects([{"a": 1}, "x", None, {"b": 2}]) == [{"a": 1}, {"b": 2}]
    assert json_objects({"a": 1}) == []


def test_dumps_line_writes_what_the_standard_library_writes() -> None:
    value = {"text": "caf\u00e9 \u2028 \x07 \"q\" \\ /", "n": 7, "ok": None, "l": [True, 1.5]}
    expected = json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n"
    assert dumps_line(value) == expected.encode("utf-8")


def test_dumps_line_falls_back_for_what_orjson_cannot_write() -> None:
    # A lone surrogate cannot be UTF-8: escaped to ASCII, it still reads back the same.
    assert loads(dumps_line({"s": "\ud800"})) == {"s": "\ud800"}
    assert dumps_line({"s": "\ud800"}).isascii()
    # Non-string keys and integers past 64 bits, the json way.
    assert dumps_line({1: "a"}) == b'{"1":"a"}\n'
    assert loads(dumps_line({"big": 2**70})) == {"big": float(2**70)}  # read back by orjson
    assert json.loads(dumps_line({"big": 2**70})) == {"big": 2**70}  # written exactly
