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
    encode_body,
    encode_request,
    has_big_strings,
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
    assert encoded == dumps(body) == openapi_dumps(body)
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

    def spied(body: object) -> bytes:
        threads.append(threading.current_thread().name)
        return encode_body(body)

    monkeypatch.setattr(request_body, "encode_body", spied)
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
    assert threads and threads[0] != threading.main_thread().name  # in a worker, once
    await session.close()
