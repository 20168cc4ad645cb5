"""/v1/chat/completions and /v1/responses/compact through the real openai SDK."""

from __future__ import annotations

import json
import math
from typing import Any

import openai
import pytest

from app.demo import CompactReply, ModelServer, Reply, ToolCall

MESSAGES: list[Any] = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "list files"},
]


def tokens(text: str) -> int:
    return math.ceil(len(text.encode("utf-8")) / 4)


async def test_chat_stream_carries_text_tool_calls_and_the_usage_chunk(
    server: ModelServer, client: openai.AsyncOpenAI
) -> None:
    server.enqueue(
        Reply(
            text="Looking now.",
            function_calls=[
                ToolCall("list_directory", {"path": "."}, call_id="call_a"),
                ToolCall("read_file", {"path": "a.py", "start_line": 1}),
            ],
            chunk_size=4,
        ),
        endpoint="chat",
    )
    stream = await client.chat.completions.create(
        model="coco-demo", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
    )
    chunks = [chunk async for chunk in stream]

    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    calls: dict[int, dict[str, str]] = {}
    for chunk in chunks:
        for call in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            entry = calls.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
            entry["id"] += call.id or ""
            entry["name"] += (call.function.name or "") if call.function else ""
            entry["arguments"] += (call.function.arguments or "") if call.function else ""
    assert content == "Looking now."
    assert calls[0] == {"id": "call_a", "name": "list_directory", "arguments": '{"path": "."}'}
    assert calls[1]["name"] == "read_file" and calls[1]["id"].startswith("call_")
    assert json.loads(calls[1]["arguments"]) == {"path": "a.py", "start_line": 1}
    assert chunks[0].choices[0].delta.role == "assistant"
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finishes[-1] == "tool_calls" and set(finishes[:-1]) == {None}
    last = chunks[-1]
    assert last.choices == [] and last.usage is not None
    assert all(c.usage is None for c in chunks[:-1])
    assert last.usage.prompt_tokens == tokens("Be brief.") + tokens("list files")
    assert last.usage.completion_tokens == (
        tokens("Looking now.")
        + tokens('list_directory{"path": "."}')
        + tokens('read_file{"path": "a.py", "start_line": 1}')
    )
    assert last.usage.total_tokens == last.usage.prompt_tokens + last.usage.completion_tokens


@pytest.mark.parametrize(("asked", "allowed"), [(True, False), (False, True)])
async def test_chat_usage_chunk_only_when_asked_and_allowed(
    server: ModelServer, client: openai.AsyncOpenAI, asked: bool, allowed: bool
) -> None:
    server.enqueue(Reply(text="hi", include_usage=allowed), endpoint="chat")
    extra: dict[str, Any] = {"stream_options": {"include_usage": True}} if asked else {}
    stream = await client.chat.completions.create(
        model="m", messages=MESSAGES, stream=True, **extra
    )
    chunks = [chunk async for chunk in stream]
    assert all(c.choices for c in chunks)
    assert all(getattr(c, "usage", None) is None for c in chunks)
    assert chunks[-1].choices[0].finish_reason == "stop"


async def test_chat_without_stream_is_one_completion(
    server: ModelServer, client: openai.AsyncOpenAI
) -> None:
    server.enqueue(
        Reply(text="plain", function_calls=[ToolCall("f", {"x": 1}, call_id="c1")]), endpoint="chat"
    )
    completion = await client.chat.completions.create(model="m", messages=MESSAGES)
    message = completion.choices[0].message
    assert message.content == "plain"
    assert message.tool_calls is not None
    assert (message.tool_calls[0].id, message.tool_calls[0].function.name) == ("c1", "f")
    assert completion.choices[0].finish_reason == "tool_calls"
    assert completion.usage is not None and completion.usage.completion_tokens > 0


async def test_chat_and_responses_queues_are_separate(
    server: ModelServer, client: openai.AsyncOpenAI
) -> None:
    server.enqueue(Reply(text="for responses"))
    with pytest.raises(openai.InternalServerError, match="no reply queued for chat"):
        await client.chat.completions.create(model="m", messages=MESSAGES)
    assert server.queued("responses") == 1


COMPACT_INPUT: list[Any] = [
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "first"}]},
    {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "answer"}],
    },
    {"type": "function_call", "name": "f", "arguments": "{}", "call_id": "c"},
    {"type": "function_call_output", "call_id": "c", "output": "out"},
    {"type": "message", "role": "user", "content": "second"},
]


async def test_compact_default_output_is_user_messages_then_compaction_item(
    server: ModelServer, client: openai.AsyncOpenAI
) -> None:
    server.enqueue(CompactReply(encrypted_content="ENC"))  # routed to "compact" by its type
    raw = await client.responses.with_raw_response.compact(
        model="coco-demo", input=COMPACT_INPUT, instructions="Be brief."
    )
    payload = raw.http_response.json()

    assert payload["object"] == "response.compaction" and payload["id"].startswith("cmp_")
    output = payload["output"]
    assert [o["type"] for o in output] == ["message", "message", "compaction"]
    assert [o["content"][0] for o in output[:2]] == [
        {"type": "input_text", "text": "first"},
        {"type": "input_text", "text": "second"},
    ]
    assert all(o["role"] == "user" for o in output[:2])
    assert output[2]["encrypted_content"] == "ENC" and output[2]["id"].startswith("cmp_")
    usage = payload["usage"]
    expected_input = (
        tokens("Be brief.")
        + tokens("first")
        + tokens("answer")
        + tokens("f{}")
        + tokens("out")
        + tokens("second")
    )
    assert usage["input_tokens"] == expected_input
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]
    parsed = raw.parse()
    assert parsed.object == "response.compaction"
    assert parsed.output[-1].type == "compaction"


async def test_compact_explicit_output_is_sent_verbatim(
    server: ModelServer, client: openai.AsyncOpenAI
) -> None:
    output = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "kept"}]},
        {"type": "compaction", "id": "cmp_x", "encrypted_content": "blob"},
    ]
    usage = {"input_tokens": 50, "output_tokens": 7}
    server.enqueue(CompactReply(output=output, usage=usage), endpoint="compact")
    raw = await client.responses.with_raw_response.compact(model="m", input=COMPACT_INPUT)
    payload = raw.http_response.json()
    assert payload["output"] == output
    assert payload["usage"]["input_tokens"] == 50 and payload["usage"]["total_tokens"] == 57


async def test_compact_through_the_sdk_method(
    server: ModelServer, client: openai.AsyncOpenAI
) -> None:
    server.enqueue(CompactReply(encrypted_content="E2"))
    result = await client.responses.compact(model="m", input=COMPACT_INPUT)
    assert result.output[-1].type == "compaction"
    assert result.output[-1].encrypted_content == "E2"  # type: ignore[union-attr]
    assert result.usage.input_tokens > 0


async def test_a_reply_queued_for_compact_is_a_clear_error(
    server: ModelServer, client: openai.AsyncOpenAI
) -> None:
    server.enqueue(Reply(text="wrong"), endpoint="compact")
    with pytest.raises(openai.InternalServerError, match="queue a CompactReply"):
        await client.responses.compact(model="m", input=COMPACT_INPUT)
