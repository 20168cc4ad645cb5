"""ResponsesProvider against the offline scripted server: request shape, events, errors, cancel."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator

import httpx2
import pytest
from pydantic import SecretStr

from app.core.config import CoreConfig
from app.core.items import assistant_message, function_call, function_call_output, user_message
from app.core.providers.base import (
    Completed,
    ModelRequest,
    OutputItemDone,
    ProviderError,
    StreamEvent,
    TextDelta,
)
from app.core.providers.chat import ChatCompletionsProvider
from app.core.providers.factory import make_provider
from app.core.providers.responses import ResponsesProvider
from app.demo import CompactReply, Fault, ModelServer, Reply, ToolCall
from tests.core.providers.provider_fakes import (
    collect,
    event_stream_client,
    make_request,
    record_sdk_transforms,
)

KEY = "sk-test-DO-NOT-LEAK-0123456789"
TOOL = {
    "type": "function",
    "name": "read_file",
    "description": "Read a file",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
}


class ClosingProbe(httpx2.AsyncBaseTransport):
    """A real transport that records when a response body stream gets closed."""

    def __init__(self) -> None:
        self._inner = httpx2.AsyncHTTPTransport()
        self.closed = asyncio.Event()
        self.drained = False  # the body was read to its end

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        inner_stream = response.stream
        closed = self.closed
        probe = self

        class _Tracked(httpx2.AsyncByteStream):
            async def __aiter__(self) -> AsyncIterator[bytes]:
                async for chunk in inner_stream:  # type: ignore[union-attr]
                    yield chunk
                probe.drained = True

            async def aclose(self) -> None:
                await inner_stream.aclose()  # type: ignore[union-attr]
                closed.set()

        response.stream = _Tracked()
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


@pytest.fixture
async def provider(server: ModelServer) -> AsyncIterator[ResponsesProvider]:
    prov = ResponsesProvider(server.url, KEY)
    try:
        yield prov
    finally:
        await prov.close()


async def failure(prov: ResponsesProvider, request: ModelRequest | None = None) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        await collect(prov, request or make_request())
    return info.value


# ------------------------------------------------------------------------------ request shape


async def test_request_body_has_store_false_cache_key_reasoning_and_tools(
    server: ModelServer, provider: ResponsesProvider
) -> None:
    server.enqueue(Reply(text="hi"), endpoint="responses")
    history = [user_message("hello"), assistant_message("yes", "msg_1"), user_message("again")]
    request = make_request(
        input=history,
        tools=[TOOL],
        prompt_cache_key="conv-1",
        reasoning_effort="high",
        include_encrypted_reasoning=True,
    )
    await collect(provider, request)
    body = server.requests_to("responses")[-1].body
    assert body["stream"] is True
    assert body["store"] is False
    assert body["model"] == "test-model"
    assert body["instructions"] == "be brief"
    assert body["input"] == history
    assert body["prompt_cache_key"] == "conv-1"
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["reasoning"] == {"effort": "high"}
    assert body["tools"] == [TOOL]
    assert body["parallel_tool_calls"] is False


async def test_tools_are_sent_as_given_not_through_the_sdk_transform(
    server: ModelServer, provider: ResponsesProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The SDK's typed transform walked the tools' schemas on the window's thread at every
    # request; the tools are wire JSON already and go in the body as they are.
    import openai.resources.responses.responses as sdk_responses

    transformed = record_sdk_transforms(monkeypatch, sdk_responses)
    server.enqueue(Reply(text="hi"), endpoint="responses")
    await collect(provider, make_request(tools=[TOOL]))
    assert transformed == []  # the body is written by Coco, none of it by the SDK's transform
    body = server.requests_to("responses")[-1].body
    assert body["tools"] == [TOOL]
    assert body["parallel_tool_calls"] is False
    assert "tool_choice" not in body


async def test_optional_fields_are_omitted_when_not_asked(
    server: ModelServer, provider: ResponsesProvider
) -> None:
    server.enqueue(Reply(text="hi"), endpoint="responses")
    await collect(provider, make_request())
    body = server.requests_to("responses")[-1].body
    for absent in (
        "tools",
        "parallel_tool_calls",
        "include",
        "reasoning",
        "prompt_cache_key",
        "max_output_tokens",
    ):
        assert absent not in body
    assert body["store"] is False


async def test_extra_headers_and_key_are_sent(
    server: ModelServer, provider: ResponsesProvider
) -> None:
    server.enqueue(Reply(text="hi"), endpoint="responses")
    await collect(provider, make_request(), extra_headers={"x-coco-request-kind": "compaction"})
    headers = server.requests_to("responses")[-1].headers
    assert headers["x-coco-request-kind"] == "compaction"
    assert headers["authorization"] == f"Bearer {KEY}"


# ---------------------------------------------------------------------------------- streaming


async def test_deltas_items_and_usage(server: ModelServer, provider: ResponsesProvider) -> None:
    usage = {"input_tokens": 40, "output_tokens": 7, "total_tokens": 47, "cached_tokens": 32}
    server.enqueue(
        Reply(
            text="hello there, world",
            function_calls=[ToolCall("read_file", {"path": "a"}, call_id="call_1")],
            usage=usage,
        ),
        endpoint="responses",
    )
    events = await collect(provider, make_request(tools=[TOOL]))

    deltas = [e for e in events if isinstance(e, TextDelta)]
    items = [e.item for e in events if isinstance(e, OutputItemDone)]
    assert "".join(d.delta for d in deltas) == "hello there, world"
    assert len(deltas) > 1
    message = next(i for i in items if i["type"] == "message")
    assert {d.item_id for d in deltas} == {message["id"]}
    assert message["role"] == "assistant"
    assert message["content"][0]["text"] == "hello there, world"
    call = next(i for i in items if i["type"] == "function_call")
    assert (call["name"], call["call_id"], call["arguments"]) == (
        "read_file",
        "call_1",
        '{"path": "a"}',
    )
    assert isinstance(events[-1], Completed)
    assert events[-1].response_id
    assert events[-1].usage is not None
    assert events[-1].usage.input_tokens == 40
    assert events[-1].usage.output_tokens == 7
    assert events[-1].usage.total_tokens == 47
    assert events[-1].usage.cached_tokens == 32
    assert not events[-1].usage.estimated


async def test_reasoning_item_is_kept_verbatim(
    server: ModelServer, provider: ResponsesProvider
) -> None:
    server.enqueue(Reply(text="ok", reasoning="ENC-opaque=="), endpoint="responses")
    events = await collect(provider, make_request(include_encrypted_reasoning=True))
    reasoning = next(
        e.item for e in events if isinstance(e, OutputItemDone) and e.item["type"] == "reasoning"
    )
    # Exactly the server's fields: nothing added (no nulls from a typed model), nothing lost.
    assert reasoning == {
        "id": reasoning["id"],
        "type": "reasoning",
        "summary": [],
        "encrypted_content": "ENC-opaque==",
    }
    assert reasoning["id"].startswith("rs")


# ------------------------------------------------------------------------------------- errors


async def test_401_names_the_server_not_the_key(
    server: ModelServer, provider: ResponsesProvider
) -> None:
    server.enqueue(Fault.status(401, message=f"Incorrect API key provided: {KEY}"))
    error = await failure(provider)
    assert error.category == "auth"
    assert error.message == f"the server rejected the API key for {server.url}"
    assert KEY not in str(error)
    assert not error.retryable


async def test_429_parses_retry_after(server: ModelServer, provider: ResponsesProvider) -> None:
    server.enqueue(Fault.status(429, retry_after=0.01))
    error = await failure(provider)
    assert error.category == "rate_limit"
    assert error.retry_after == pytest.approx(0.01)
    assert error.status == 429


async def test_500_is_retryable_server_error(
    server: ModelServer, provider: ResponsesProvider
) -> None:
    server.enqueue(Fault.status(500))
    error = await failure(provider)
    assert error.category == "server"
    assert error.retryable


async def test_404_is_not_found(server: ModelServer, provider: ResponsesProvider) -> None:
    server.enqueue(Fault.status(404, message="no such model"))
    error = await failure(provider)
    assert error.category == "not_found"
    assert "no such model" in error.message


async def test_other_4xx_carries_server_message(
    server: ModelServer, provider: ResponsesProvider
) -> None:
    server.enqueue(Fault.status(400, message="Unknown parameter: 'frobnicate'"))
    error = await failure(provider)
    assert error.category == "bad_request"
    assert "Unknown parameter: 'frobnicate'" in error.message


async def test_cut_stream_is_stream_error_after_deltas(
    server: ModelServer, provider: ResponsesProvider
) -> None:
    server.enqueue(Fault.cut(after_chunks=2))
    seen: list[StreamEvent] = []
    with pytest.raises(ProviderError) as info:
        async for event in provider.stream(make_request()):
            seen.append(event)
    assert info.value.category == "stream"
    assert info.value.retryable
    assert any(isinstance(e, TextDelta) for e in seen)
    assert not any(isinstance(e, Completed) for e in seen)


async def test_malformed_payload(server: ModelServer, provider: ResponsesProvider) -> None:
    server.enqueue(Fault.malformed())
    error = await failure(provider)
    assert error.category == "malformed"
    assert error.retryable


async def test_inband_error_event(server: ModelServer, provider: ResponsesProvider) -> None:
    server.enqueue(Fault.inband_error("the model crashed", code="server_error"))
    error = await failure(provider)
    assert error.category == "server"
    assert "the model crashed" in error.message


async def test_inband_overflow_by_phrase(server: ModelServer, provider: ResponsesProvider) -> None:
    server.enqueue(Fault.inband_error("This model's maximum context length is 8192 tokens."))
    assert (await failure(provider)).category == "context_overflow"


@pytest.mark.parametrize("mid_stream", [False, True])
async def test_overflow_before_and_mid_stream(
    server: ModelServer, provider: ResponsesProvider, mid_stream: bool
) -> None:
    server.enqueue(Fault.overflow(mid_stream=mid_stream))
    error = await failure(provider)
    assert error.category == "context_overflow"
    assert not error.retryable
    assert error.code == "context_length_exceeded"
    assert (error.status == 400) is not mid_stream


async def test_stream_that_ends_without_completed(
    server: ModelServer, provider: ResponsesProvider
) -> None:
    server.enqueue(Fault.hang(0.05))
    error = await failure(provider)
    assert error.category == "stream"


async def test_failed_response_is_server_error(
    server: ModelServer, provider: ResponsesProvider
) -> None:
    server.enqueue(Reply(text="partial", status="failed"), endpoint="responses")
    error = await failure(provider)
    assert error.category == "server"
    assert error.message == "The model failed to complete the response."


async def test_output_limit_ends_the_reply_marked_cut_short(
    server: ModelServer, provider: ResponsesProvider
) -> None:
    server.enqueue(Reply(text="partial", status="incomplete"), endpoint="responses")
    events = await collect(provider, make_request(max_output_tokens=5))
    assert server.requests_to("responses")[-1].body["max_output_tokens"] == 5
    texts = [e.item["content"][0]["text"] for e in events if isinstance(e, OutputItemDone)]
    assert texts == ["partial"]
    assert isinstance(events[-1], Completed)
    assert events[-1].stop_reason == "length"


async def test_items_only_in_the_final_response_are_taken_from_it() -> None:
    message = assistant_message("only here", "msg_9")
    events_sse = [
        {"type": "response.output_text.delta", "item_id": "msg_9", "delta": "only here"},
        {
            "type": "response.completed",
            "response": {"id": "resp_1", "output": [message], "usage": None},
        },
    ]
    body = "".join(
        f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events_sse
    ).encode()

    client = event_stream_client(content=body)
    prov = ResponsesProvider("http://model.invalid/v1", KEY, http_client=client)
    try:
        events = await collect(prov, make_request())
    finally:
        await prov.close()
    assert [e.item for e in events if isinstance(e, OutputItemDone)] == [message]
    assert isinstance(events[-1], Completed) and events[-1].stop_reason is None


async def test_clean_end_without_completed_is_stream_error() -> None:
    delta = {"type": "response.output_text.delta", "item_id": "msg_1", "delta": "hi"}
    body = f"event: response.output_text.delta\ndata: {json.dumps(delta)}\n\n".encode()

    client = event_stream_client(content=body)
    prov = ResponsesProvider("http://model.invalid/v1", KEY, http_client=client)
    try:
        seen: list[StreamEvent] = []
        with pytest.raises(ProviderError) as info:
            async for event in prov.stream(make_request()):
                seen.append(event)
    finally:
        await prov.close()
    assert seen == [TextDelta(item_id="msg_1", delta="hi")]
    assert info.value.category == "stream"
    assert info.value.message == "stream closed before response.completed"


async def test_unreachable_server_is_connection_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    prov = ResponsesProvider(url, KEY, timeout=5.0)
    try:
        error = await failure(prov)
    finally:
        await prov.close()
    assert error.category == "connection"
    assert error.message.startswith(
        f"Coco could not reach the server at {url}: nothing is listening there"
    )
    assert error.details is not None and "Errno" in error.details  # the raw text, kept apart
    assert "Errno" not in error.message
    assert KEY not in error.message


# ------------------------------------------------------------------------------------- cancel


async def test_cancelling_the_consumer_closes_the_stream_promptly(server: ModelServer) -> None:
    probe = ClosingProbe()
    provider = ResponsesProvider(server.url, KEY, http_client=httpx2.AsyncClient(transport=probe))
    server.enqueue(Reply(text="word " * 400, delay_per_chunk=0.05), endpoint="responses")
    first_delta = asyncio.Event()

    async def consume() -> None:
        async for event in provider.stream(make_request()):
            if isinstance(event, TextDelta):
                first_delta.set()

    try:
        task = asyncio.create_task(consume())
        await asyncio.wait_for(first_delta.wait(), timeout=5)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        assert task.cancelled()
        # The HTTP body stream is closed by the time the task is done, before its end.
        assert probe.closed.is_set() and not probe.drained

        # The provider is still usable afterwards.
        server.enqueue(Reply(text="again"), endpoint="responses")
        events = await collect(provider, make_request())
        assert isinstance(events[-1], Completed)
    finally:
        await provider.close()


async def test_closing_the_generator_early_closes_the_stream(server: ModelServer) -> None:
    probe = ClosingProbe()
    provider = ResponsesProvider(server.url, KEY, http_client=httpx2.AsyncClient(transport=probe))
    server.enqueue(Reply(text="word " * 400, delay_per_chunk=0.05), endpoint="responses")
    try:
        async with contextlib.aclosing(provider.stream(make_request())) as events:
            async for event in events:
                if isinstance(event, TextDelta):
                    break
        assert probe.closed.is_set() and not probe.drained
    finally:
        await provider.close()


# ------------------------------------------------------------------------------------ compact


async def test_compact_returns_raw_output_with_user_messages_as_users(
    server: ModelServer, provider: ResponsesProvider
) -> None:
    server.enqueue(CompactReply(encrypted_content="ENC-compact"), endpoint="compact")
    history = [
        user_message("first question"),
        assistant_message("first answer", "msg_a"),
        function_call("read_file", '{"path": "a"}', "call_1", "fc_1"),
        function_call_output("call_1", "contents"),
        user_message("second question"),
    ]
    result = await provider.compact(
        make_request(input=history, tools=[TOOL], prompt_cache_key="conv-1"),
        extra_headers={"x-coco-request-kind": "compaction"},
    )
    users = [i for i in result.output if i.get("type") == "message"]
    assert [u["role"] for u in users] == ["user", "user"]
    assert users[0]["content"] == history[0]["content"]
    compaction = result.output[-1]
    assert compaction["type"] == "compaction"
    assert compaction["encrypted_content"] == "ENC-compact"

    recorded = server.requests_to("compact")[-1]
    assert recorded.headers["x-coco-request-kind"] == "compaction"
    assert recorded.body["model"] == "test-model"
    assert recorded.body["input"] == history
    assert recorded.body["instructions"] == "be brief"
    assert recorded.body["prompt_cache_key"] == "conv-1"
    assert recorded.body["tools"] == [TOOL]
    assert recorded.body["parallel_tool_calls"] is False
    assert "reasoning" not in recorded.body


async def test_compact_output_is_byte_faithful(
    server: ModelServer, provider: ResponsesProvider
) -> None:
    output = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "q"}]},
        {
            "type": "compaction",
            "id": "cmp_1",
            "encrypted_content": "E==",
            "future_field": [1, None],
        },
    ]
    server.enqueue(CompactReply(output=output), endpoint="compact")
    result = await provider.compact(make_request())
    assert result.output == output


async def test_compact_without_tools_sends_none(
    server: ModelServer, provider: ResponsesProvider
) -> None:
    server.enqueue(CompactReply(), endpoint="compact")
    await provider.compact(make_request())
    body = server.requests_to("compact")[-1].body
    assert "tools" not in body
    assert "parallel_tool_calls" not in body


async def test_compact_errors_are_classified(
    server: ModelServer, provider: ResponsesProvider
) -> None:
    server.enqueue(Fault.malformed(), endpoint="compact")
    server.enqueue(Fault.status(404), endpoint="compact")
    server.enqueue(Fault.overflow(), endpoint="compact")
    categories = []
    for _ in range(3):
        with pytest.raises(ProviderError) as info:
            await provider.compact(make_request())
        categories.append(info.value.category)
    assert categories == ["malformed", "not_found", "context_overflow"]


async def test_compact_of_empty_history_makes_no_request(
    server: ModelServer, provider: ResponsesProvider
) -> None:
    result = await provider.compact(make_request(input=[]))
    assert result.output == []
    assert server.requests_to("compact") == []


# ------------------------------------------------------------------------------ misc / factory


async def test_list_models(server: ModelServer, provider: ResponsesProvider) -> None:
    models = await provider.list_models()
    assert models
    assert all(isinstance(m, str) for m in models)


async def test_factory_picks_provider_by_wire_api() -> None:
    responses = make_provider(CoreConfig(api_key=SecretStr(KEY)))
    chat = make_provider(CoreConfig(base_url="http://127.0.0.1:1/v1", wire_api="chat"))
    try:
        assert isinstance(responses, ResponsesProvider)
        assert responses.supports_remote_compaction
        assert isinstance(chat, ChatCompletionsProvider)
        assert not chat.supports_remote_compaction
    finally:
        await responses.close()
        await chat.close()


async def test_providers_share_one_tls_context(monkeypatch: pytest.MonkeyPatch) -> None:
    """Loading the CA bundle is paid once per process, not once per session."""
    import httpcore2

    from app.core.providers import openai_client

    built: list[object] = []
    real = httpcore2.default_ssl_context

    def counting(**kwargs: object) -> object:
        built.append(real(**kwargs))  # type: ignore[arg-type]
        return built[-1]

    monkeypatch.setattr(openai_client, "_tls_context", None)
    monkeypatch.setattr(httpcore2, "default_ssl_context", counting)
    providers = [ResponsesProvider("https://api.example.invalid/v1", KEY) for _ in range(3)]
    providers.append(ChatCompletionsProvider("https://llm.example.invalid/v1", KEY))
    try:
        assert len(built) == 1
        assert openai_client.shared_tls_context() is built[0]
    finally:
        for provider in providers:
            await provider.close()


@pytest.mark.parametrize("wire", ["responses", "chat"])
async def test_the_request_body_is_written_by_coco_not_by_the_sdk_s_json(
    server: ModelServer, monkeypatch: pytest.MonkeyPatch, wire: str
) -> None:
    """The SDK writes a body with the standard library's json on the window's thread (10-50
    ms for a long history); Coco writes it with orjson and hands the SDK bytes."""
    import openai._base_client as sdk_client

    def refuse(*_args: object, **_kwargs: object) -> bytes:
        raise AssertionError("the SDK wrote the body")

    monkeypatch.setattr(sdk_client, "openapi_dumps", refuse)
    cls = ResponsesProvider if wire == "responses" else ChatCompletionsProvider
    provider = cls(server.url, SecretStr("test-key"))
    history = [user_message(f"message {n} ünïcode") for n in range(300)]
    server.enqueue(Reply(text="hi"), endpoint="responses" if wire == "responses" else "chat")
    events = await collect(provider, make_request(input=history, tools=[TOOL]))
    assert any(type(e).__name__ == "Completed" for e in events)
    body = server.requests_to("responses" if wire == "responses" else "chat")[-1].body
    sent = body["input"] if wire == "responses" else body["messages"]
    assert "message 299 ünïcode" in str(sent)
    await provider.close()
