"""A finished stream leaves its connection to the next request (no handshake per turn), and a
body that does not end after its last event still lets the stream finish."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import httpx2
import pytest

from app.core.providers.base import Completed
from app.core.providers.chat import ChatCompletionsProvider
from app.core.providers.responses import ResponsesProvider
from app.core.providers.sse import read_to_end
from app.demo import ModelServer, Reply
from tests.core.providers.provider_fakes import collect, event_stream_client, make_request

KEY = "sk-test-DO-NOT-LEAK-0123456789"


@pytest.mark.parametrize(
    ("provider_class", "endpoint"),
    [(ResponsesProvider, "responses"), (ChatCompletionsProvider, "chat")],
)
async def test_streams_of_one_provider_share_one_connection(
    server: ModelServer,
    provider_class: type[ResponsesProvider | ChatCompletionsProvider],
    endpoint: str,
) -> None:
    prov = provider_class(server.url, KEY)
    try:
        for text in ("one", "two", "three"):
            server.enqueue(Reply(text=text), endpoint=endpoint)
            events = await collect(prov, make_request())
            assert isinstance(events[-1], Completed)
    finally:
        await prov.close()
    connections = [r.connection for r in server.requests_to(endpoint)]
    assert len(connections) == 3
    assert len(set(connections)) == 1


class _OpenAfterLastEvent(httpx2.AsyncByteStream):
    """A body that sends its events, then neither ends nor sends anything more."""

    def __init__(self, payload: bytes) -> None:
        self.payload = payload
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.payload
        await asyncio.Event().wait()  # never set: the server keeps the body open
        yield b""  # pragma: no cover

    async def aclose(self) -> None:
        self.closed = True


async def test_a_body_left_open_after_completed_still_ends_the_stream() -> None:
    completed = {"type": "response.completed", "response": {"id": "resp_1", "usage": None}}
    body = _OpenAfterLastEvent(
        f"event: response.completed\ndata: {json.dumps(completed)}\n\n".encode()
    )
    client = event_stream_client(stream=body)
    prov = ResponsesProvider("http://model.invalid/v1", KEY, http_client=client)
    try:
        events = await collect(prov, make_request())
    finally:
        await prov.close()
    assert isinstance(events[-1], Completed) and events[-1].response_id == "resp_1"
    assert body.closed


async def test_read_to_end_reads_what_is_left() -> None:
    seen: list[bytes] = []

    async def ending() -> AsyncIterator[bytes]:
        for chunk in (b"data: [DONE]\n\n", b""):
            seen.append(chunk)
            yield chunk

    assert await read_to_end(ending())
    assert seen == [b"data: [DONE]\n\n", b""]


async def test_read_to_end_gives_up_on_a_body_that_goes_on() -> None:
    read = 0

    async def endless() -> AsyncIterator[bytes]:
        nonlocal read
        while True:
            read += 1024
            yield b"x" * 1024

    assert not await read_to_end(endless(), max_bytes=10_000)
    assert 10_000 < read <= 11_264  # it stopped at the first chunk over the limit
