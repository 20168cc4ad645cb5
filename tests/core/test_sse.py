"""The SSE decoder (events from arbitrary chunks of the body) and the JSON payload parser."""

from __future__ import annotations

import json
import math

import pytest

from app.core.providers.sse import SSEDecoder, loads

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
