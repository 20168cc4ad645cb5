"""/v1/responses through the real openai SDK: events, items, usage, caching, pacing."""

from __future__ import annotations

import json
import math
import time
from typing import Any

import openai

from app.demo import ModelServer, Reply, ToolCall

INSTRUCTIONS = "You are Coco."


def tokens(text: str) -> int:
    return math.ceil(len(text.encode("utf-8")) / 4)


def user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


async def collect(client: openai.AsyncOpenAI, **kwargs: Any) -> list[Any]:
    stream = await client.responses.create(model="coco-demo", stream=True, **kwargs)
    return [event async for event in stream]


async def test_streamed_text_follows_the_api_event_order(
    server: ModelServer, client: openai.AsyncOpenAI
) -> None:
    text = "Hello, wire world! Ünïcode too."
    server.enqueue(Reply(text=text, chunk_size=5))
    events = await collect(client, input=[user("hi there")], instructions=INSTRUCTIONS)

    types = [e.type for e in events]
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    assert types == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        *["response.output_text.delta"] * len(deltas),
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert len(deltas) == math.ceil(len(text) / 5)
    assert "".join(deltas) == text
    assert [e.sequence_number for e in events] == list(range(len(events)))
    item = events[-2].item
    assert item.type == "message" and item.role == "assistant" and item.status == "completed"
    assert item.id.startswith("msg_") and item.content[0].text == text
    final = events[-1].response
    assert final.status == "completed" and final.object == "response"
    assert final.id.startswith("resp_") and final.id == events[0].response.id
    assert final.output[0].content[0].text == text
    usage = final.usage
    assert usage.input_tokens == tokens(INSTRUCTIONS) + tokens("hi there")
    assert usage.output_tokens == tokens(text)
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens
    assert usage.input_tokens_details.cached_tokens == 0


async def test_streamed_function_calls_parse_into_items(
    server: ModelServer, client: openai.AsyncOpenAI
) -> None:
    server.enqueue(
        Reply(
            function_calls=[
                ToolCall("read_file", {"path": "README.md"}, call_id="call_fixed"),
                ToolCall("list_directory", '{"path": "."}'),
            ]
        )
    )
    events = await collect(
        client,
        input="read it",
        tools=[
            {"type": "function", "name": "read_file", "parameters": {"type": "object"}},
        ],
    )

    done = [e.item for e in events if e.type == "response.output_item.done"]
    assert [i.type for i in done] == ["function_call", "function_call"]
    first, second = done
    assert (first.name, first.call_id, json.loads(first.arguments)) == (
        "read_file",
        "call_fixed",
        {"path": "README.md"},
    )
    assert second.name == "list_directory" and second.arguments == '{"path": "."}'
    assert second.call_id.startswith("call_") and second.id.startswith("fc_")
    for item in done:
        pieces = [
            e.delta
            for e in events
            if e.type == "response.function_call_arguments.delta" and e.item_id == item.id
        ]
        assert "".join(pieces) == item.arguments
        [args_done] = [
            e
            for e in events
            if e.type == "response.function_call_arguments.done" and e.item_id == item.id
        ]
        assert args_done.arguments == item.arguments
    assert not any(e.type == "response.output_text.delta" for e in events)
    final = events[-1].response
    assert [o.call_id for o in final.output] == [first.call_id, second.call_id]
    assert final.tools[0].name == "read_file"
    assert final.usage.output_tokens == (
        tokens('read_file{"path": "README.md"}') + tokens('list_directory{"path": "."}')
    )


async def test_reasoning_item_comes_first_with_its_encrypted_content(
    server: ModelServer, client: openai.AsyncOpenAI
) -> None:
    server.enqueue(Reply(text="answer", reasoning="gAAAA-opaque-blob"))
    events = await collect(client, input="think")

    final = events[-1].response
    assert [o.type for o in final.output] == ["reasoning", "message"]
    reasoning = final.output[0]
    assert reasoning.id.startswith("rs_") and reasoning.encrypted_content == "gAAAA-opaque-blob"
    assert reasoning.summary == []
    details = final.usage.output_tokens_details
    assert details.reasoning_tokens == tokens("gAAAA-opaque-blob")
    assert final.usage.output_tokens == tokens("gAAAA-opaque-blob") + tokens("answer")


async def test_non_streamed_response_is_one_json_object(
    server: ModelServer, client: openai.AsyncOpenAI
) -> None:
    server.enqueue(Reply(text="unary answer", function_calls=[ToolCall("search_text", {"q": 1})]))
    response = await client.responses.create(model="coco-demo", input="q")

    assert response.status == "completed"
    assert response.output_text == "unary answer"
    assert [o.type for o in response.output] == ["message", "function_call"]
    assert response.usage is not None and response.usage.total_tokens == (
        response.usage.input_tokens + response.usage.output_tokens
    )
    assert server.requests_to("responses")[0].body == {"model": "coco-demo", "input": "q"}


async def test_sdk_stream_helper_accumulates_the_final_response(
    server: ModelServer, client: openai.AsyncOpenAI
) -> None:
    server.enqueue(Reply(text="accumulated by the helper"))
    async with client.responses.stream(model="coco-demo", input=[user("x")]) as stream:
        final = await stream.get_final_response()
    assert final.output_text == "accumulated by the helper"


async def test_usage_override_replaces_the_estimate(
    server: ModelServer, client: openai.AsyncOpenAI
) -> None:
    server.enqueue(Reply(text="abcd", usage={"input_tokens": 1000, "cached_tokens": 256}))
    final = (await collect(client, input="x"))[-1].response
    assert final.usage.input_tokens == 1000
    assert final.usage.input_tokens_details.cached_tokens == 256
    assert final.usage.output_tokens == 1
    assert final.usage.total_tokens == 1001


async def test_incomplete_status_ends_with_response_incomplete(
    server: ModelServer, client: openai.AsyncOpenAI
) -> None:
    server.enqueue(Reply(text="cut short", status="incomplete"))
    events = await collect(client, input="x")
    assert events[-1].type == "response.incomplete"
    assert events[-1].response.status == "incomplete"
    assert events[-1].response.incomplete_details.reason == "max_output_tokens"


async def test_shared_prompt_prefix_is_reported_as_cached(
    server: ModelServer, client: openai.AsyncOpenAI
) -> None:
    history = [user("word " * 1200)]  # 1500 tokens: above the 1024-token caching floor
    server.enqueue(Reply(text="one"))
    server.enqueue(Reply(text="two"))
    first = (await collect(client, input=history, prompt_cache_key="k"))[-1].response
    history = [
        *history,
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "one"}],
        },
        user("more"),
    ]
    second = (await collect(client, input=history, prompt_cache_key="k"))[-1].response

    assert first.usage.input_tokens_details.cached_tokens == 0
    cached = second.usage.input_tokens_details.cached_tokens
    assert cached > 0 and cached % 128 == 0
    assert cached <= tokens("word " * 1200) < second.usage.input_tokens


async def test_tokens_per_second_paces_the_deltas(
    client: openai.AsyncOpenAI, server: ModelServer
) -> None:
    server.tokens_per_second = 400.0
    server.enqueue(Reply(text="x" * 400, chunk_size=40))  # 100 tokens at 400/s: >= 0.25 s
    started = time.monotonic()
    events = await collect(client, input="go")
    assert events[-1].type == "response.completed"
    assert time.monotonic() - started >= 0.2
