"""A request body holding images is serialized in short steps, byte for byte as the SDK would
serialize it, and sent so against the scripted server."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest
from openai._utils._json import openapi_dumps

from app.core import Session, ops
from app.core.providers.request_body import BIG_STRING, encode_body, has_big_strings
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


@pytest.mark.parametrize("wire", ["responses", "chat"])
async def test_an_image_of_a_megabyte_reaches_the_server_intact(
    server, make_config, tmp_path: Path, monkeypatch, wire
) -> None:
    import threading

    from PIL import Image

    from app.core.providers import stream_post

    threads: list[str] = []

    def spied(body: object) -> bytes:
        threads.append(threading.current_thread().name)
        return encode_body(body)

    monkeypatch.setattr(stream_post, "encode_body", spied)
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
