"""Writing a ``Reply`` / ``CompactReply`` / ``Fault`` in each endpoint's wire format.

Responses streams follow the API's event order (created, in_progress, per item added → deltas
→ done, completed); chat streams send role, content and tool-call deltas, a finish chunk, the
optional usage chunk and ``[DONE]``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .channel import Channel
from .script import CompactReply, Fault, Reply, ToolCall
from .wire import (
    OVERFLOW_CODE,
    OVERFLOW_MESSAGE,
    Json,
    chat_usage,
    compaction_item,
    content_text,
    error_body,
    estimate_tokens,
    function_call_item,
    message_item,
    new_id,
    now,
    overflow_body,
    reasoning_item,
    response_object,
    responses_usage,
    user_message,
)


@dataclass(frozen=True)
class Exchange:
    """What rendering needs to know about the request being answered."""

    body: Json
    model: str
    stream: bool
    input_tokens: int
    cached_tokens: int = 0
    items: tuple[Json, ...] = ()

    @property
    def include_usage(self) -> bool:
        """Whether a chat request asked for the final usage chunk."""
        options = self.body.get("stream_options")
        return isinstance(options, dict) and bool(options.get("include_usage"))


def fault_headers(fault: Fault) -> dict[str, str]:
    """``Retry-After`` (seconds) and ``retry-after-ms`` when the fault sets a delay."""
    if fault.retry_after is None:
        return {}
    seconds = fault.retry_after
    text = str(int(seconds)) if float(seconds).is_integer() else f"{seconds:g}"
    return {"Retry-After": text, "retry-after-ms": str(math.ceil(seconds * 1000))}


def _chunks(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _split_even(text: str, parts: int) -> list[str]:
    if parts <= 0 or not text:
        return []
    size = max(1, math.ceil(len(text) / parts))
    return [text[i : i + size] for i in range(0, len(text), size)][:parts]


def reply_usage(reply: Reply, ex: Exchange) -> Json:
    """Usage of ``reply``: estimated output, the exchange's input, overridden by ``reply.usage``."""
    reasoning = estimate_tokens(reply.reasoning) if reply.reasoning else 0
    output = reasoning + (estimate_tokens(reply.text) if reply.text else 0)
    output += sum(estimate_tokens(c.name + c.arguments_json) for c in reply.function_calls)
    return _with_override(ex.input_tokens, output, ex.cached_tokens, reasoning, reply.usage)


def _with_override(
    input_tokens: int, output: int, cached: int, reasoning: int, override: dict[str, int] | None
) -> Json:
    o = override or {}
    return responses_usage(
        input_tokens=o.get("input_tokens", input_tokens),
        output_tokens=o.get("output_tokens", output),
        cached_tokens=o.get("cached_tokens", cached),
        reasoning_tokens=o.get("reasoning_tokens", reasoning),
        total_tokens=o.get("total_tokens"),
    )


def _call_id(call: ToolCall) -> str:
    return call.call_id or new_id("call")[:29]


# -------------------------------------------------------------------------------- responses


def responses_reply(ch: Channel, reply: Reply, ex: Exchange) -> None:
    """A Reply on ``/responses``, streamed or as one JSON object."""
    response_id = new_id("resp")
    created = now()
    status = reply.status
    items = _planned_items(reply)
    usage = reply_usage(reply, ex)
    if not ex.stream:
        ch.wait(reply.initial_delay)
        done = [item for item, _ in items]
        ch.send_json(200, _final_response(response_id, created, ex, status, done, usage))
        return
    ch.start_stream()
    _stream_opening(ch, response_id, created, ex)
    ch.wait(reply.initial_delay)
    done_items: list[Json] = []
    for index, (item, payload) in enumerate(items):
        _stream_item(ch, index, item, payload, reply)
        done_items.append(item)
        if reply.pause_after_items is not None and index + 1 == reply.pause_after_items:
            ch.wait(3600)  # until the client leaves (or the server stops)
    final = _final_response(response_id, created, ex, status, done_items, usage)
    event = {
        "completed": "response.completed",
        "incomplete": "response.incomplete",
        "failed": "response.failed",
    }.get(status, "response.completed")
    ch.event(event, {"response": final})
    ch.end_stream()


def _planned_items(reply: Reply) -> list[tuple[Json, str]]:
    """The output items (completed form) and the text each streams as deltas."""
    items: list[tuple[Json, str]] = []
    if reply.compaction is not None:
        items.append((compaction_item(reply.compaction), ""))
    if reply.reasoning is not None:
        items.append((reasoning_item(new_id("rs"), reply.reasoning), ""))
    if reply.text is not None or not (reply.function_calls or reply.compaction is not None):
        text = reply.text or ""
        status = "incomplete" if reply.status == "incomplete" else "completed"
        items.append((message_item(new_id("msg"), text, status), text))
    for call in reply.function_calls:
        args = call.arguments_json
        items.append((function_call_item(new_id("fc"), _call_id(call), call.name, args), args))
    return items


def _stream_opening(ch: Channel, response_id: str, created: int, ex: Exchange) -> None:
    opening = response_object(response_id, created, ex.body, ex.model, "in_progress", [], None)
    ch.event("response.created", {"response": opening})
    ch.event("response.in_progress", {"response": opening})


def _final_response(
    response_id: str, created: int, ex: Exchange, status: str, output: list[Json], usage: Json
) -> Json:
    error = None
    incomplete = None
    if status == "failed":
        error = {"code": "server_error", "message": "The model failed to complete the response."}
    elif status == "incomplete":
        incomplete = "max_output_tokens"
    return response_object(
        response_id,
        created,
        ex.body,
        ex.model,
        status,
        output,
        usage,
        error=error,
        incomplete_reason=incomplete,
    )


def _stream_item(ch: Channel, index: int, item: Json, payload: str, reply: Reply) -> None:
    item_id = item["id"]
    kind = item["type"]
    if kind == "message":
        ch.event(
            "response.output_item.added",
            {
                "output_index": index,
                "item": {**item, "status": "in_progress", "content": []},
            },
        )
        part = {"type": "output_text", "text": "", "annotations": []}
        ch.event(
            "response.content_part.added",
            {"item_id": item_id, "output_index": index, "content_index": 0, "part": part},
        )
        for piece in _chunks(payload, reply.chunk_size) if payload else []:
            ch.pace(estimate_tokens(piece), reply.delay_per_chunk)
            ch.event(
                "response.output_text.delta",
                {
                    "item_id": item_id,
                    "output_index": index,
                    "content_index": 0,
                    "delta": piece,
                    "logprobs": [],
                },
            )
        ch.event(
            "response.output_text.done",
            {
                "item_id": item_id,
                "output_index": index,
                "content_index": 0,
                "text": payload,
                "logprobs": [],
            },
        )
        ch.event(
            "response.content_part.done",
            {
                "item_id": item_id,
                "output_index": index,
                "content_index": 0,
                "part": {**part, "text": payload},
            },
        )
    elif kind == "function_call":
        ch.event(
            "response.output_item.added",
            {
                "output_index": index,
                "item": {**item, "status": "in_progress", "arguments": ""},
            },
        )
        for piece in _chunks(payload, reply.chunk_size):
            ch.pace(estimate_tokens(piece), reply.delay_per_chunk)
            ch.event(
                "response.function_call_arguments.delta",
                {"item_id": item_id, "output_index": index, "delta": piece},
            )
        ch.event(
            "response.function_call_arguments.done",
            {"item_id": item_id, "output_index": index, "name": item["name"], "arguments": payload},
        )
    else:
        ch.event(
            "response.output_item.added",
            {
                "output_index": index,
                "item": {"id": item_id, "type": kind, "summary": []},
            },
        )
        ch.pace(estimate_tokens(str(item.get("encrypted_content") or "")))
    ch.event("response.output_item.done", {"output_index": index, "item": item})


def responses_fault(ch: Channel, fault: Fault, ex: Exchange) -> None:
    """A Fault on ``/responses``."""
    if fault.kind == "status":
        _status_fault(ch, fault)
        return
    if fault.kind == "overflow" and not (fault.mid_stream and ex.stream):
        ch.send_json(400, overflow_body("input"))
        return
    if fault.kind == "inband_error" and not ex.stream:
        ch.send_json(500, error_body(500, fault.message, fault.error_code))
        return
    if fault.kind == "malformed":
        _malformed(
            ch, ex, '{"type": "response.created", "response": {"id": "resp_', "response.created"
        )
        return
    if not ex.stream:
        _unary_drop(ch, fault)
        return
    response_id = new_id("resp")
    created = now()
    ch.start_stream()
    _stream_opening(ch, response_id, created, ex)
    if fault.kind == "overflow":
        failed = response_object(
            response_id,
            created,
            ex.body,
            ex.model,
            "failed",
            [],
            None,
            error={"code": OVERFLOW_CODE, "message": OVERFLOW_MESSAGE},
        )
        ch.event("response.failed", {"response": failed})
        ch.end_stream()
    elif fault.kind == "inband_error":
        ch.event(
            "error",
            {"code": fault.error_code, "message": fault.message or "Stream error", "param": None},
        )
        ch.end_stream()
    elif fault.kind == "cut":
        item = message_item(new_id("msg"), "", "in_progress")
        ch.event("response.output_item.added", {"output_index": 0, "item": {**item, "content": []}})
        ch.event(
            "response.content_part.added",
            {
                "item_id": item["id"],
                "output_index": 0,
                "content_index": 0,
                "part": {"type": "output_text", "text": "", "annotations": []},
            },
        )
        for piece in _split_even(fault.text, fault.after_chunks):
            ch.pace(estimate_tokens(piece))
            ch.event(
                "response.output_text.delta",
                {
                    "item_id": item["id"],
                    "output_index": 0,
                    "content_index": 0,
                    "delta": piece,
                    "logprobs": [],
                },
            )
        ch.abort()
    elif fault.kind == "hang":
        ch.wait(fault.seconds)
        ch.abort()


def _status_fault(ch: Channel, fault: Fault) -> None:
    ch.send_json(
        fault.http_status,
        error_body(fault.http_status, fault.message, fault.error_code),
        fault_headers(fault),
    )


def _malformed(ch: Channel, ex: Exchange, broken: str, event: str | None = None) -> None:
    """HTTP 200 whose JSON (the whole body, or the first SSE event's data) is cut short."""
    if ex.stream:
        ch.start_stream()
        prefix = f"event: {event}\n" if event else ""
        ch.raw_event(f"{prefix}data: {broken}\n\n")
        ch.end_stream()
    else:
        ch.send_bytes(200, broken.encode("utf-8"), "application/json")


def _unary_drop(ch: Channel, fault: Fault) -> None:
    """Cut/hang on a unary request: promise a body and never deliver it whole."""
    if fault.kind == "hang":
        ch.wait(fault.seconds)
        ch.abort()
        return
    ch.send_truncated(
        200, b'{"id": "resp_partial", "object": "response", "output": []}', "application/json"
    )


# ------------------------------------------------------------------------------------- chat


def _chat_chunk(
    chunk_id: str, created: int, ex: Exchange, delta: Json | None, finish: str | None = None
) -> Json:
    chunk: Json = {
        "id": chunk_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": ex.model,
        "system_fingerprint": None,
        "service_tier": "default",
        "choices": []
        if delta is None
        else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }
    if ex.include_usage:
        chunk["usage"] = None
    return chunk


def _finish_reason(reply: Reply) -> str:
    if reply.function_calls:
        return "tool_calls"
    return "length" if reply.status == "incomplete" else "stop"


def chat_reply(ch: Channel, reply: Reply, ex: Exchange) -> None:
    """A Reply on ``/chat/completions``, streamed or as one JSON object."""
    chunk_id = new_id("chatcmpl", "-")
    created = now()
    usage = chat_usage(reply_usage(reply, ex))
    calls = [(call, _call_id(call)) for call in reply.function_calls]
    if not ex.stream:
        ch.wait(reply.initial_delay)
        message: Json = {
            "role": "assistant",
            "content": reply.text,
            "refusal": None,
            "annotations": [],
        }
        if calls:
            message["tool_calls"] = [
                {
                    "id": cid,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments_json},
                }
                for c, cid in calls
            ]
        ch.send_json(
            200,
            {
                "id": chunk_id,
                "object": "chat.completion",
                "created": created,
                "model": ex.model,
                "system_fingerprint": None,
                "service_tier": "default",
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "logprobs": None,
                        "finish_reason": _finish_reason(reply),
                    }
                ],
                "usage": usage,
            },
        )
        return
    ch.start_stream()
    ch.data(
        _chat_chunk(chunk_id, created, ex, {"role": "assistant", "content": "", "refusal": None})
    )
    ch.wait(reply.initial_delay)
    for piece in _chunks(reply.text, reply.chunk_size) if reply.text else []:
        ch.pace(estimate_tokens(piece), reply.delay_per_chunk)
        ch.data(_chat_chunk(chunk_id, created, ex, {"content": piece}))
    for index, (call, cid) in enumerate(calls):
        ch.data(
            _chat_chunk(
                chunk_id,
                created,
                ex,
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": cid,
                            "type": "function",
                            "function": {"name": call.name, "arguments": ""},
                        }
                    ]
                },
            )
        )
        for piece in _chunks(call.arguments_json, reply.chunk_size):
            ch.pace(estimate_tokens(piece), reply.delay_per_chunk)
            ch.data(
                _chat_chunk(
                    chunk_id,
                    created,
                    ex,
                    {"tool_calls": [{"index": index, "function": {"arguments": piece}}]},
                )
            )
    ch.data(_chat_chunk(chunk_id, created, ex, {}, _finish_reason(reply)))
    if ex.include_usage and reply.include_usage:
        final = _chat_chunk(chunk_id, created, ex, None)
        final["usage"] = usage
        ch.data(final)
    ch.data("[DONE]")
    ch.end_stream()


def chat_fault(ch: Channel, fault: Fault, ex: Exchange) -> None:
    """A Fault on ``/chat/completions``."""
    if fault.kind == "status":
        _status_fault(ch, fault)
        return
    if fault.kind == "overflow" and not (fault.mid_stream and ex.stream):
        ch.send_json(400, overflow_body("messages"))
        return
    if fault.kind == "inband_error" and not ex.stream:
        ch.send_json(500, error_body(500, fault.message, fault.error_code))
        return
    if fault.kind == "malformed":
        _malformed(ch, ex, '{"id": "chatcmpl-broken", "object": "chat.completion.chunk", "cho')
        return
    if not ex.stream:
        _unary_drop(ch, fault)
        return
    chunk_id = new_id("chatcmpl", "-")
    created = now()
    ch.start_stream()
    ch.data(
        _chat_chunk(chunk_id, created, ex, {"role": "assistant", "content": "", "refusal": None})
    )
    if fault.kind == "overflow":
        ch.data(overflow_body("messages"))
        ch.end_stream()
    elif fault.kind == "inband_error":
        ch.data(
            error_body(500, fault.message or "Stream error", fault.error_code, type_="server_error")
        )
        ch.end_stream()
    elif fault.kind == "cut":
        for piece in _split_even(fault.text, fault.after_chunks):
            ch.pace(estimate_tokens(piece))
            ch.data(_chat_chunk(chunk_id, created, ex, {"content": piece}))
        ch.abort()
    elif fault.kind == "hang":
        ch.wait(fault.seconds)
        ch.abort()


# ---------------------------------------------------------------------------------- compact


def user_texts_of(items: tuple[Json, ...] | list[Json]) -> list[str]:
    """The text of every user message among ``items``, in order."""
    return [
        content_text(item.get("content"))
        for item in items
        if item.get("type", "message") == "message" and item.get("role") == "user"
    ]


def compaction_output(user_texts: list[str], encrypted_content: str) -> list[Json]:
    """The compact endpoint's output: user messages, then one compaction item."""
    return [*(user_message(text) for text in user_texts), compaction_item(encrypted_content)]


def compact_reply(
    ch: Channel,
    reply: CompactReply,
    ex: Exchange,
    user_texts: list[str] | None = None,
    output_tokens: int | None = None,
) -> None:
    """A CompactReply on ``/responses/compact`` (always unary JSON).

    Without an explicit ``reply.output`` the answer keeps ``user_texts`` (default: every user
    message of the request) and appends the compaction item.
    """
    kept = user_texts if user_texts is not None else user_texts_of(ex.items)
    output = (
        reply.output
        if reply.output is not None
        else compaction_output(kept, reply.encrypted_content)
    )
    produced = (
        output_tokens if output_tokens is not None else estimate_tokens(reply.encrypted_content)
    )
    usage = _with_override(ex.input_tokens, produced, ex.cached_tokens, 0, reply.usage)
    ch.send_json(
        200,
        {
            "id": new_id("cmp"),
            "object": "response.compaction",
            "created_at": now(),
            "output": output,
            "usage": usage,
        },
    )


def compact_fault(ch: Channel, fault: Fault, ex: Exchange) -> None:
    """A Fault on ``/responses/compact``: everything is unary here."""
    if fault.kind == "status":
        _status_fault(ch, fault)
    elif fault.kind == "overflow":
        ch.send_json(400, overflow_body("input"))
    elif fault.kind == "inband_error":
        ch.send_json(500, error_body(500, fault.message, fault.error_code))
    elif fault.kind == "malformed":
        ch.send_bytes(
            200, b'{"id": "cmp_broken", "object": "response.compaction", "outp', "application/json"
        )
    else:
        _unary_drop(ch, fault)
