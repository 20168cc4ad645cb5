"""A request body is serialized in short steps, byte for byte as the SDK would serialize it:
a long history item by item with the event loop handed over between steps, an item holding
images in a worker thread; and sent so against the scripted server."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest
from openai._utils._json import openapi_dumps

from app.core import Session, ops
from app.core.providers import request_body
from app.core.providers.request_body import (
    BIG_STRING,
    STEP_ITEMS,
    BodyPieces,
    body_pieces,
    encode_body,
    encode_request,
    has_big_strings,
    streamed,
)
from app.core.system.fastjson import dumps
from app.demo import Reply
from tests.conftest import run


def _url(size: int) -> str:
    return "data:image/png;base64," + base64.b64encode(os.urandom(size)).decode()


def test_a_body_with_big_data_urls_encodes_exactly_as_the_sdk_does() -> None:
    body = {
        "model": "m", "stream": True, "temperature": 0.5,
        "input": [{"role": "user", "content": [
            {"type": "input_text", "text": 'héllo "quoted" \\ back \ue000 and\ncontrol'},
            {"type": "input_image", "image_url": _url(200_000)},
            {"type": "input_image", "image_url": _url(100)},  # small: scanned as usual
            {"type": "input_image", "image_url": _url(150_000)},
        ]}],
    }
    assert has_big_strings(body)
    assert encode_body(body) == openapi_dumps(body)


def test_a_big_string_that_needs_escaping_is_escaped() -> None:
    tricky = "data:text/plain;base64," + 'x"\\\n' * BIG_STRING
    accented = "data:image/png;base64," + "é" * BIG_STRING
    body = {"input": [tricky, accented]}
    assert encode_body(body) == openapi_dumps(body)
    assert not has_big_strings({"input": ["y" * BIG_STRING * 2]})  # not a data URL


def _history(turns: int) -> list[dict[str, object]]:
    return [
        {"role": "user" if n % 2 else "assistant", "content": [
            {"type": "input_text", "text": f"turn {n}: héllo \"quoted\" \\ \ue000\n" * (n % 7)}
        ]}
        for n in range(turns)
    ]


async def test_a_long_body_is_written_as_one_write_would_write_it() -> None:
    body = {
        "model": "m", "stream": True, "temperature": 0.5, "tools": [],
        "input": [*_history(3 * STEP_ITEMS), {"role": "user", "content": [
            {"type": "input_image", "image_url": _url(200_000)},
        ]}],
        "text": {"verbosity": "low"}, "store": False,
    }
    encoded = await encode_request(body)
    assert isinstance(encoded, BodyPieces)  # it holds an image: in pieces
    assert encoded.joined() == dumps(body) == openapi_dumps(body)
    assert encoded.length == len(encoded.joined())
    assert await encode_request({}) == b"{}"
    assert await encode_request({"input": []}) == b'{"input":[]}'


async def test_a_long_body_hands_the_loop_over_while_it_is_written() -> None:
    import asyncio

    turns: list[int] = []
    body = {"model": "m", "input": _history(10 * STEP_ITEMS)}

    async def window() -> None:  # what the window's timers do between two steps
        while True:
            turns.append(len(turns))
            await asyncio.sleep(0)

    beside = asyncio.create_task(window())
    await asyncio.sleep(0)
    started = len(turns)
    await encode_request(body)
    during = len(turns) - started
    beside.cancel()
    assert during >= 9  # a turn of the loop at least every STEP_ITEMS items


@pytest.mark.parametrize("wire", ["responses", "chat"])
async def test_an_image_of_a_megabyte_reaches_the_server_intact(
    server, make_config, tmp_path: Path, monkeypatch, wire
) -> None:
    import threading

    from PIL import Image

    threads: list[str] = []

    def spied(body: object) -> list[bytes]:
        threads.append(threading.current_thread().name)
        return body_pieces(body)

    monkeypatch.setattr(request_body, "body_pieces", spied)
    import app.core.providers.openai_client as client_module

    monkeypatch.setattr(client_module, "body_pieces", spied)
    shot = tmp_path / "noise.png"
    Image.frombytes("RGB", (700, 700), os.urandom(700 * 700 * 3)).save(shot)
    server.enqueue(Reply(text="Seen."), endpoint=wire)
    session = await Session.open(make_config(wire_api=wire))
    events = await run(session, ops.UserTurn(text="look", attachments=[str(shot)]))
    assert events[-1].status == "completed"
    body = server.requests_to(wire)[0].body
    if wire == "responses":
        url = body["input"][-1]["content"][1]["image_url"]
    else:
        url = body["messages"][-1]["content"][1]["image_url"]["url"]
        assert body["model"] and body["stream"] is True  # the merged extra body is all there
    assert len(url) > BIG_STRING
    assert base64.b64decode(url.split(",", 1)[1]) == shot.read_bytes()
    # Sent in its pieces with the body's length, not chunked (not every server reads that).
    headers = server.requests_to(wire)[0].headers
    assert "transfer-encoding" not in headers
    assert int(headers["content-length"]) == len(server.requests_to(wire)[0].raw)
    assert threads and threads[0] != threading.main_thread().name  # in a worker, once
    await session.close()


async def test_the_big_data_urls_are_pieces_of_their_own_and_the_rest_is_joined() -> None:
    url = _url(100_000)
    body = {"model": "m", "input": [*_history(30), {"role": "user", "content": [
        {"type": "input_text", "text": "look"}, {"type": "input_image", "image_url": url},
    ]}, *_history(5)]}
    encoded = await encode_request(body)
    assert isinstance(encoded, BodyPieces)
    before, image, after = encoded.pieces  # not one piece an item: thousands of writes
    assert image == url.encode("ascii")  # the image as it is, never copied into the rest
    assert before.endswith(b'"image_url":"') and after.startswith(b'"}]}')
    content, headers = streamed(encoded)
    assert content is encoded and headers == {"Content-Length": str(len(encoded.joined()))}
    assert [piece async for piece in encoded] == encoded.pieces  # sent piece by piece
    assert [piece async for piece in encoded] == encoded.pieces  # and again, on a retry
    small = await encode_request({"model": "m", "input": _history(3)})
    assert isinstance(small, bytes) and streamed(small) == (small, {})


def test_body_pieces_join_to_the_whole_body() -> None:
    body = {"input": [_url(BIG_STRING), "x", _url(10)]}
    pieces = body_pieces(body)
    assert b"".join(pieces) == encode_body(body) == openapi_dumps(body)
    assert all(pieces)  # no empty piece
