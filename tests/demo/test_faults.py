"""Every Fault kind produces what it says, seen through the SDK and raw httpx2."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx2
import openai
import pytest

from app.demo import CompactReply, Fault, ModelServer, Reply

OVERFLOW_MESSAGE = (
    "Your input exceeds the context window of this model. Please adjust your input and try again."
)
CHAT: list[Any] = [{"role": "user", "content": "hi"}]


async def stream_responses(client: openai.AsyncOpenAI) -> list[Any]:
    stream = await client.responses.create(model="m", input="hi", stream=True)
    return [event async for event in stream]


async def test_status_fault_has_error_json_and_retry_after_headers(server: ModelServer) -> None:
    server.enqueue(Fault.status(429, "slow down", error_code="rate_limit_exceeded", retry_after=2))
    async with httpx2.AsyncClient() as http:
        response = await http.post(f"{server.url}/responses", json={"model": "m", "input": "x"})
    assert response.status_code == 429
    assert response.headers["retry-after"] == "2"
    assert response.headers["retry-after-ms"] == "2000"
    assert response.json() == {
        "error": {
            "message": "slow down",
            "type": "requests",
            "param": None,
            "code": "rate_limit_exceeded",
        }
    }


async def test_status_fault_raises_the_matching_sdk_error(
    server: ModelServer, client: openai.AsyncOpenAI
) -> None:
    server.enqueue(Fault.status(503, retry_after=0.5))
    with pytest.raises(openai.InternalServerError) as caught:
        await client.responses.create(model="m", input="x", stream=True)
    assert caught.value.status_code == 503
    assert caught.value.response.headers["retry-after"] == "0.5"
    assert caught.value.response.headers["retry-after-ms"] == "500"
    server.enqueue(Fault.status(401), endpoint="chat")
    with pytest.raises(openai.AuthenticationError):
        await client.chat.completions.create(model="m", messages=CHAT)


@pytest.mark.parametrize("stream", [True, False])
async def test_overflow_before_the_stream_is_a_400_context_length_exceeded(
    server: ModelServer, client: openai.AsyncOpenAI, stream: bool
) -> None:
    server.enqueue(Fault.overflow())
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(model="m", input="x", stream=stream)
    assert caught.value.code == "context_length_exceeded"
    assert caught.value.body == {
        "message": OVERFLOW_MESSAGE,
        "type": "invalid_request_error",
        "param": "input",
        "code": "context_length_exceeded",
    }
    server.enqueue(Fault.overflow(), endpoint="chat")
    with pytest.raises(openai.BadRequestError) as chat_caught:
        await client.chat.completions.create(model="m", messages=CHAT, stream=stream)
    assert chat_caught.value.code == "context_length_exceeded"


async def test_overflow_mid_stream_is_response_failed(
    server: ModelServer, client: openai.AsyncOpenAI
) -> None:
    server.enqueue(Fault.overflow(mid_stream=True))
    events = await stream_responses(client)
    assert [e.type for e in events] == [
        "response.created",
        "response.in_progress",
        "response.failed",
    ]
    failed = events[-1].response
    assert failed.status == "failed"
    assert failed.error.code == "context_length_exceeded"
    assert failed.error.message == OVERFLOW_MESSAGE


async def test_overflow_mid_stream_on_chat_is_an_inband_error_chunk(
    server: ModelServer, client: openai.AsyncOpenAI
) -> None:
    server.enqueue(Fault.overflow(mid_stream=True), endpoint="chat")
    stream = await client.chat.completions.create(model="m", messages=CHAT, stream=True)
    with pytest.raises(openai.APIError) as caught:
        async for _ in stream:
            pass
    assert not isinstance(caught.value, openai.APIStatusError)
    assert caught.value.code == "context_length_exceeded"


async def test_cut_stream_raises_after_the_partial_deltas(
    server: ModelServer, client: openai.AsyncOpenAI
) -> None:
    server.enqueue(Fault.cut(after_chunks=3, text="partial answer here"))
    stream = await client.responses.create(model="m", input="x", stream=True)
    seen: list[Any] = []
    with pytest.raises(openai.APIConnectionError):
        async for event in stream:
            seen.append(event)
    deltas = [e.delta for e in seen if e.type == "response.output_text.delta"]
    assert len(deltas) == 3 and "".join(deltas) == "partial answer here"
    assert "response.completed" not in [e.type for e in seen]


async def test_cut_chat_stream_raises_without_done(
    server: ModelServer, client: openai.AsyncOpenAI
) -> None:
    server.enqueue(Fault.cut(after_chunks=2), endpoint="chat")
    stream = await client.chat.completions.create(model="m", messages=CHAT, stream=True)
    content = ""
    with pytest.raises(openai.APIConnectionError):
        async for chunk in stream:
            content += chunk.choices[0].delta.content or ""
    assert content == "partial answer "


async def test_cut_unary_compact_raises_connection_error(
    server: ModelServer, client: openai.AsyncOpenAI
) -> None:
    server.enqueue(Fault.cut(), endpoint="compact")
    with pytest.raises(openai.APIConnectionError):
        await client.responses.compact(model="m", input="x")


async def test_malformed_is_http_200_with_invalid_json(
    server: ModelServer, client: openai.AsyncOpenAI
) -> None:
    server.enqueue(Fault.malformed())
    with pytest.raises(ValueError):
        await stream_responses(client)
    server.enqueue(Fault.malformed(), endpoint="compact")
    async with httpx2.AsyncClient() as http:
        response = await http.post(f"{server.url}/responses/compact", json={"input": "x"})
    assert response.status_code == 200
    with pytest.raises(ValueError):
        response.json()
    server.enqueue(Fault.malformed(), endpoint="chat")
    with pytest.raises(ValueError):
        await client.chat.completions.create(model="m", messages=CHAT)


async def test_inband_error_is_an_error_event_or_chunk(
    server: ModelServer, client: openai.AsyncOpenAI
) -> None:
    server.enqueue(Fault.inband_error("the model broke", code="server_error"))
    events = await stream_responses(client)
    error = events[-1]
    assert error.type == "error"
    assert (error.message, error.code) == ("the model broke", "server_error")

    server.enqueue(Fault.inband_error("chat broke", code="boom"), endpoint="chat")
    stream = await client.chat.completions.create(model="m", messages=CHAT, stream=True)
    with pytest.raises(openai.APIError, match="chat broke") as caught:
        async for _ in stream:
            pass
    assert caught.value.code == "boom"


async def test_hang_is_interrupted_by_closing_the_client(
    server: ModelServer, client: openai.AsyncOpenAI
) -> None:
    server.enqueue(Fault.hang(30))
    started = time.monotonic()
    stream = await client.responses.create(model="m", input="x", stream=True)
    seen: list[str] = []

    async def consume() -> None:
        async for event in stream:
            seen.append(event.type)

    reader = asyncio.ensure_future(consume())
    done, _ = await asyncio.wait({reader}, timeout=0.3)
    assert not done  # the server hangs after the opening events
    assert seen == ["response.created", "response.in_progress"]
    assert server.active_requests == 1
    reader.cancel()  # what an interrupt does: the SDK closes the response on the way out
    with pytest.raises(asyncio.CancelledError):
        await reader
    await asyncio.to_thread(server.wait_idle, 3.0)  # the server noticed the client left
    assert time.monotonic() - started < 5


async def test_hang_ends_when_the_server_stops(
    server: ModelServer, client: openai.AsyncOpenAI
) -> None:
    server.enqueue(Fault.hang(30), endpoint="chat")
    stream = await client.chat.completions.create(model="m", messages=CHAT, stream=True)
    started = time.monotonic()
    await asyncio.to_thread(server.stop)
    with pytest.raises(openai.APIConnectionError):
        async for _ in stream:
            pass
    assert time.monotonic() - started < 5


async def test_hang_trips_the_client_read_timeout(server: ModelServer) -> None:
    server.enqueue(Fault.hang(10))
    async with openai.AsyncOpenAI(
        base_url=server.url, api_key="test", max_retries=0, timeout=httpx2.Timeout(5, read=0.3)
    ) as api:
        stream = await api.responses.create(model="m", input="x", stream=True)
        with pytest.raises(openai.APITimeoutError):
            async for _ in stream:
                pass
    await asyncio.to_thread(server.wait_idle, 3.0)


async def test_faults_and_replies_are_consumed_in_order(
    server: ModelServer, client: openai.AsyncOpenAI
) -> None:
    server.enqueue(Fault.status(500))
    server.enqueue(Reply(text="second try works"))
    server.enqueue(Fault.overflow(), endpoint="compact")
    server.enqueue(CompactReply(encrypted_content="after"), endpoint="compact")
    with pytest.raises(openai.InternalServerError):
        await client.responses.create(model="m", input="x")
    assert (await client.responses.create(model="m", input="x")).output_text == "second try works"
    with pytest.raises(openai.BadRequestError):
        await client.responses.compact(model="m", input="x")
    assert (await client.responses.compact(model="m", input="x")).output[-1].type == "compaction"
    assert server.queued("responses") == server.queued("compact") == 0
