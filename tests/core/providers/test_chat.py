"""ChatCompletionsProvider: item ↔ message adapter, streaming, usage, errors, truncation."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path

import httpx2
import pytest

from app.core.items import (
    assistant_message,
    developer_message,
    function_call,
    function_call_output,
    user_message,
)
from app.core.providers.base import (
    Completed,
    ModelRequest,
    OutputItemDone,
    ProviderError,
    TextDelta,
)
from app.core.providers.chat import (
    ChatCompletionsProvider,
    chat_messages,
    items_to_messages,
    normalize_messages,
    tools_to_chat,
)
from app.core.tokens.calibration import CalibrationStore
from app.demo import Fault, ModelServer, Reply, ToolCall
from tests.core.providers import provider_fakes
from tests.core.providers.provider_fakes import collect, event_stream_client, record_sdk_transforms
from tests.core.providers.test_responses import ClosingProbe

KEY = "sk-local-SECRET-abcdef0123456789"
TOOL = {
    "type": "function",
    "name": "read_file",
    "description": "Read a file",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
}


@pytest.fixture
async def provider(server: ModelServer) -> AsyncIterator[ChatCompletionsProvider]:
    prov = ChatCompletionsProvider(server.url, KEY)
    try:
        yield prov
    finally:
        await prov.close()


# The chat tests' requests name a local server's model.
make_request = partial(provider_fakes.make_request, model="local-model")


async def failure(
    prov: ChatCompletionsProvider, request: ModelRequest | None = None
) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        await collect(prov, request or make_request())
    return info.value


HISTORY = [
    developer_message("<user_instructions>be nice</user_instructions>"),
    user_message("read a"),
    {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "OPAQUE"},
    assistant_message("Let me look.", "msg_1"),
    function_call("read_file", '{"path": "a"}', "call_1", "fc_1"),
    function_call("read_file", '{"path": "b"}', "call_2", "fc_2"),
    function_call_output("call_1", "AAA"),
    function_call_output("call_2", "BBB"),
    {"type": "compaction", "id": "cmp_1", "encrypted_content": "SECRET-SUMMARY"},
    function_call("list_dir", "{}", "call_3"),
    function_call_output("call_3", "x.txt"),
    user_message("thanks"),
]

EXPECTED_MESSAGES = [
    {"role": "system", "content": "be brief"},
    {"role": "system", "content": "<user_instructions>be nice</user_instructions>"},
    {"role": "user", "content": "read a"},
    {
        "role": "assistant",
        "content": "Let me look.",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "a"}'},
            },
            {
                "id": "call_2",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "b"}'},
            },
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "AAA"},
    {"role": "tool", "tool_call_id": "call_2", "content": "BBB"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_3",
                "type": "function",
                "function": {"name": "list_dir", "arguments": "{}"},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_3", "content": "x.txt"},
    {"role": "user", "content": "thanks"},
]


# What is sent: the two system messages as one, everything else already alternates.
SENT_MESSAGES = [
    {"role": "system", "content": "be brief\n\n<user_instructions>be nice</user_instructions>"},
    *EXPECTED_MESSAGES[2:],
]


def test_items_become_chat_messages() -> None:
    assert items_to_messages("be brief", HISTORY) == EXPECTED_MESSAGES
    assert chat_messages("be brief", HISTORY) == SENT_MESSAGES


def _roles(messages: list[dict[str, object]]) -> list[object]:
    return [message["role"] for message in messages]


def test_environment_block_and_first_message_are_sent_as_one_user_message() -> None:
    items = [user_message("<environment_context>cwd</environment_context>"), user_message("hi")]
    sent = chat_messages("be brief", items)
    assert sent == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "<environment_context>cwd</environment_context>\n\nhi"},
    ]


def test_compacted_history_alternates_once_normalised() -> None:
    # Kept user messages, then the summary as a user message, then the next question.
    items = [
        user_message("first question"),
        user_message("second question"),
        user_message("SUMMARY: we talked"),
        developer_message("<user_instructions>be nice</user_instructions>"),
        user_message("next"),
    ]
    sent = chat_messages("be brief", items)
    assert _roles(sent) == ["system", "user"]
    assert sent[0]["content"] == "be brief\n\n<user_instructions>be nice</user_instructions>"
    assert sent[1]["content"] == (
        "first question\n\nsecond question\n\nSUMMARY: we talked\n\nnext"
    )


def test_consecutive_assistant_messages_merge_but_tool_structure_stays() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "partial"},
        {"role": "assistant", "content": "again", "tool_calls": [{"id": "c1"}]},
        {"role": "tool", "tool_call_id": "c1", "content": "r1"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c2"}]},
        {"role": "tool", "tool_call_id": "c2", "content": "r2"},
        {"role": "tool", "tool_call_id": "c3", "content": "r3"},
        {"role": "assistant", "content": "done"},
        {"role": "assistant", "content": "more"},
        {"role": "user", "content": "a"},
        {"role": "user", "content": ""},
        {"role": "user", "content": "b"},
    ]
    before = json.dumps(messages)
    sent = normalize_messages(messages)
    assert json.dumps(messages) == before  # the input is not modified
    assert sent == [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "partial\n\nagain", "tool_calls": [{"id": "c1"}]},
        {"role": "tool", "tool_call_id": "c1", "content": "r1"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c2"}]},
        {"role": "tool", "tool_call_id": "c2", "content": "r2"},
        {"role": "tool", "tool_call_id": "c3", "content": "r3"},
        {"role": "assistant", "content": "done\n\nmore"},
        {"role": "user", "content": "a\n\nb"},
    ]


def test_no_system_message_when_there_is_no_system_text() -> None:
    sent = chat_messages("", [user_message("a"), assistant_message("b"), user_message("c")])
    assert _roles(sent) == ["user", "assistant", "user"]


def test_tools_become_nested_chat_tools() -> None:
    assert tools_to_chat([TOOL, {"type": "web_search"}]) == [
        {
            "type": "function",
            "function": {
                "name": "read_file",
                "description": "Read a file",
                "parameters": TOOL["parameters"],
            },
        }
    ]


async def test_request_body_is_built_from_items(
    server: ModelServer, provider: ChatCompletionsProvider
) -> None:
    server.enqueue(Reply(text="ok"), endpoint="chat")
    await collect(provider, make_request(input=HISTORY, tools=[TOOL]))
    body = server.requests_to("chat")[-1].body
    assert body["model"] == "local-model"
    assert body["messages"] == SENT_MESSAGES
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["tools"] == tools_to_chat([TOOL])
    assert "OPAQUE" not in str(body) and "SECRET-SUMMARY" not in str(body)


async def test_tools_are_sent_as_given_not_through_the_sdk_transform(
    server: ModelServer, provider: ChatCompletionsProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    import openai.resources.chat.completions.completions as sdk_chat

    transformed = record_sdk_transforms(monkeypatch, sdk_chat)
    server.enqueue(Reply(text="ok"), endpoint="chat")
    await collect(provider, make_request(input=HISTORY, tools=[TOOL]))
    assert transformed == []  # the body is written by Coco, none of it by the SDK's transform
    assert server.requests_to("chat")[-1].body["tools"] == tools_to_chat([TOOL])


async def test_stored_history_is_not_changed_by_the_normalisation(
    server: ModelServer, provider: ChatCompletionsProvider
) -> None:
    server.enqueue(Reply(text="ok"), endpoint="chat")
    items = [user_message("env"), user_message("hi")]
    before = json.dumps(items)
    await collect(provider, make_request(input=items))
    assert json.dumps(items) == before
    assert server.requests_to("chat")[-1].body["messages"][1:] == [
        {"role": "user", "content": "env\n\nhi"}
    ]


async def test_output_limit_is_sent_and_a_cut_reply_is_marked(
    server: ModelServer, provider: ChatCompletionsProvider
) -> None:
    server.enqueue(Reply(text="cut", status="incomplete"), endpoint="chat")
    events = await collect(provider, make_request(max_output_tokens=7))
    assert server.requests_to("chat")[-1].body["max_tokens"] == 7
    assert isinstance(events[-1], Completed)
    assert events[-1].stop_reason == "length"


async def test_no_tools_key_without_tools(
    server: ModelServer, provider: ChatCompletionsProvider
) -> None:
    server.enqueue(Reply(text="ok"), endpoint="chat")
    await collect(provider, make_request())
    body = server.requests_to("chat")[-1].body
    assert "tools" not in body
    assert "max_tokens" not in body


async def test_stream_yields_deltas_message_tool_calls_and_usage(
    server: ModelServer, provider: ChatCompletionsProvider
) -> None:
    server.enqueue(
        Reply(
            text="I will read two files.",
            function_calls=[
                ToolCall("read_file", {"path": "a"}, call_id="call_a"),
                ToolCall("read_file", {"path": "b"}),
            ],
            usage={"input_tokens": 30, "output_tokens": 12, "total_tokens": 42, "cached_tokens": 8},
        ),
        endpoint="chat",
    )
    events = await collect(provider, make_request(tools=[TOOL]))

    deltas = [e for e in events if isinstance(e, TextDelta)]
    items = [e.item for e in events if isinstance(e, OutputItemDone)]
    assert "".join(d.delta for d in deltas) == "I will read two files."
    message, first, second = items
    assert message["type"] == "message" and message["role"] == "assistant"
    assert message["id"].startswith("msg_")
    assert {d.item_id for d in deltas} == {message["id"]}
    assert message["content"] == [
        {"type": "output_text", "text": "I will read two files.", "annotations": []}
    ]
    assert first["type"] == second["type"] == "function_call"
    assert (first["name"], first["call_id"], first["arguments"]) == (
        "read_file",
        "call_a",
        '{"path": "a"}',
    )
    assert second["arguments"] == '{"path": "b"}'
    assert second["call_id"] and second["call_id"] != first["call_id"]
    assert first["id"].startswith("fc_")

    completed = events[-1]
    assert isinstance(completed, Completed)
    assert completed.response_id
    assert completed.usage is not None
    assert (completed.usage.input_tokens, completed.usage.output_tokens) == (30, 12)
    assert completed.usage.total_tokens == 42
    assert completed.usage.cached_tokens == 8
    assert not completed.usage.estimated


async def test_usage_is_estimated_when_the_server_sends_none(
    server: ModelServer, provider: ChatCompletionsProvider
) -> None:
    server.enqueue(Reply(text="twelve chars", include_usage=False), endpoint="chat")
    events = await collect(provider, make_request())
    completed = events[-1]
    assert isinstance(completed, Completed)
    assert completed.usage is not None
    assert completed.usage.estimated
    assert completed.usage.input_tokens == math.ceil(len("be briefhello") / 4)
    assert completed.usage.output_tokens == 3
    assert completed.usage.total_tokens == completed.usage.input_tokens + 3


async def test_tool_call_only_reply_has_no_message_item(
    server: ModelServer, provider: ChatCompletionsProvider
) -> None:
    server.enqueue(Reply(function_calls=[ToolCall("list_dir", {})]), endpoint="chat")
    events = await collect(provider, make_request(tools=[TOOL]))
    items = [e.item for e in events if isinstance(e, OutputItemDone)]
    assert [i["type"] for i in items] == ["function_call"]


async def test_inband_error_chunk(server: ModelServer, provider: ChatCompletionsProvider) -> None:
    server.enqueue(Fault.inband_error("model runner crashed"), endpoint="chat")
    error = await failure(provider)
    assert error.category == "server"
    assert "model runner crashed" in error.message


async def test_inband_overflow_chunk(
    server: ModelServer, provider: ChatCompletionsProvider
) -> None:
    server.enqueue(
        Fault.inband_error("the request exceeds the available context size"), endpoint="chat"
    )
    assert (await failure(provider)).category == "context_overflow"


@pytest.mark.parametrize("mid_stream", [False, True])
async def test_overflow(
    server: ModelServer, provider: ChatCompletionsProvider, mid_stream: bool
) -> None:
    server.enqueue(Fault.overflow(mid_stream=mid_stream), endpoint="chat")
    assert (await failure(provider)).category == "context_overflow"


async def test_401_and_cut_and_malformed(
    server: ModelServer, provider: ChatCompletionsProvider
) -> None:
    server.enqueue(Fault.status(401), endpoint="chat")
    server.enqueue(Fault.cut(after_chunks=2), endpoint="chat")
    server.enqueue(Fault.malformed(), endpoint="chat")
    auth = await failure(provider)
    assert auth.category == "auth"
    assert auth.message == f"the server rejected the API key for {server.url}"
    assert (await failure(provider)).category == "stream"
    assert (await failure(provider)).category == "malformed"


async def test_stream_ending_without_finish_reason_is_stream_error() -> None:
    chunk = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": None}],
    }
    body = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()

    client = event_stream_client(content=body)
    prov = ChatCompletionsProvider("http://model.invalid/v1", KEY, http_client=client)
    try:
        error = await failure(prov)
    finally:
        await prov.close()
    assert error.category == "stream"
    assert error.message == "stream closed before the completion finished"


async def test_silent_truncation_is_overflow(
    server: ModelServer, provider: ChatCompletionsProvider
) -> None:
    big = "lorem ipsum dolor sit amet " * 500  # ~13 500 bytes: estimate ~3 400 tokens
    server.enqueue(
        Reply(text="ok", usage={"input_tokens": 1024, "output_tokens": 1}), endpoint="chat"
    )
    error = await failure(provider, make_request(input=[user_message(big)]))
    assert error.category == "context_overflow"
    assert "truncated the prompt (reported 1024 tokens for about" in error.message


async def test_plausible_prompt_count_is_not_truncation(
    server: ModelServer, provider: ChatCompletionsProvider
) -> None:
    big = "lorem ipsum dolor sit amet " * 500
    server.enqueue(
        Reply(text="ok", usage={"input_tokens": 3000, "output_tokens": 1}), endpoint="chat"
    )
    events = await collect(provider, make_request(input=[user_message(big)]))
    assert isinstance(events[-1], Completed)


async def test_small_prompts_never_count_as_truncated(
    server: ModelServer, provider: ChatCompletionsProvider
) -> None:
    server.enqueue(Reply(text="ok", usage={"input_tokens": 1, "output_tokens": 1}), endpoint="chat")
    events = await collect(provider, make_request(input=[user_message("x" * 4000)]))
    assert isinstance(events[-1], Completed)


async def test_no_remote_compaction(provider: ChatCompletionsProvider) -> None:
    assert not provider.supports_remote_compaction
    with pytest.raises(ProviderError) as info:
        await provider.compact(make_request())
    assert info.value.category == "not_found"
    assert "Chat Completions" in info.value.message


async def test_cancel_closes_the_stream_promptly(server: ModelServer) -> None:
    probe = ClosingProbe()
    provider = ChatCompletionsProvider(
        server.url, KEY, http_client=httpx2.AsyncClient(transport=probe)
    )
    server.enqueue(Reply(text="word " * 400, delay_per_chunk=0.05), endpoint="chat")
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
        assert probe.closed.is_set() and not probe.drained  # closed before the body's end
    finally:
        await provider.close()


async def test_calibrated_estimate_keeps_a_smaller_tokenizer_from_looking_truncated(
    server: ModelServer, tmp_path: Path
) -> None:
    # A tokenizer that counts this text at 0.4 of Coco's estimate (2.5x apart): raw, the
    # truncation check would fire; calibrated by an earlier report, it must not.
    store = CalibrationStore(tmp_path / "calibration.json")
    prov = ChatCompletionsProvider(server.url, KEY, calibration=store)
    small = "漢字" * 400
    big = "漢字" * 4000
    try:
        estimate = math.ceil(len(("be brief" + small).encode()) / 4)
        server.enqueue(
            Reply(text="ok", usage={"input_tokens": int(estimate * 0.4), "output_tokens": 1}),
            endpoint="chat",
        )
        await collect(prov, make_request(input=[user_message(small)]))
        assert prov.calibration("local-model").ratio == pytest.approx(0.4, abs=0.01)
        big_estimate = math.ceil(len(("be brief" + big).encode()) / 4)
        server.enqueue(
            Reply(text="ok", usage={"input_tokens": int(big_estimate * 0.4), "output_tokens": 1}),
            endpoint="chat",
        )
        events = await collect(prov, make_request(input=[user_message(big)]))
        assert isinstance(events[-1], Completed)
        # Real truncation (the count stuck far below even the calibrated figure) still fails.
        server.enqueue(
            Reply(text="ok", usage={"input_tokens": 512, "output_tokens": 1}), endpoint="chat"
        )
        error = await failure(prov, make_request(input=[user_message(big)]))
        assert error.category == "context_overflow"
    finally:
        await prov.close()
    # What was learnt is kept for the next run.
    assert CalibrationStore(store.path).get(server.url, "local-model", "bytes").samples == 2


async def test_a_count_stuck_at_the_window_does_not_teach_the_calibration(
    server: ModelServer, tmp_path: Path
) -> None:
    store = CalibrationStore(tmp_path / "calibration.json")
    prov = ChatCompletionsProvider(server.url, KEY, calibration=store)
    try:
        for repeat, reported in ((400, 2000), (800, 2030)):
            server.enqueue(
                Reply(text="ok", usage={"input_tokens": reported, "output_tokens": 1}),
                endpoint="chat",
            )
            await collect(prov, make_request(input=[user_message("lorem ipsum " * repeat)]))
    finally:
        await prov.close()
    # The second report (twice the text, the same count) looks cut at the window: ignored.
    assert prov.calibration("local-model").samples == 1
