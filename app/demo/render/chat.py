"""A ``Reply`` or a ``Fault`` on ``/chat/completions``: one completion object, or its chunks
(role, content and tool-call deltas, a finish chunk, the optional usage chunk, ``[DONE]``)."""

from __future__ import annotations

from ..channel import Channel
from ..script import Fault, Reply
from ..wire import Json, chat_usage, error_body, estimate_tokens, new_id, now, overflow_body
from .exchange import Exchange, call_id, chunks, reply_usage, split_even
from .faults import malformed, status_fault, unary_drop


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
    calls = [(call, call_id(call)) for call in reply.function_calls]
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
    for piece in chunks(reply.text, reply.chunk_size) if reply.text else []:
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
        for piece in chunks(call.arguments_json, reply.chunk_size):
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
        status_fault(ch, fault)
        return
    if fault.kind == "overflow" and not (fault.mid_stream and ex.stream):
        ch.send_json(400, overflow_body("messages"))
        return
    if fault.kind == "inband_error" and not ex.stream:
        ch.send_json(500, error_body(500, fault.message, fault.error_code))
        return
    if fault.kind == "malformed":
        malformed(ch, ex, '{"id": "chatcmpl-broken", "object": "chat.completion.chunk", "cho')
        return
    if not ex.stream:
        unary_drop(ch, fault)
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
        for piece in split_even(fault.text, fault.after_chunks):
            ch.pace(estimate_tokens(piece))
            ch.data(_chat_chunk(chunk_id, created, ex, {"content": piece}))
        ch.abort()
    elif fault.kind == "hang":
        ch.wait(fault.seconds)
        ch.abort()
