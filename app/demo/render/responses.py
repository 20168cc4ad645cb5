"""A ``Reply`` or a ``Fault`` on ``/responses``: one JSON response object, or its stream of
events in the API's order (created, in_progress, per item added → deltas → done, completed)."""

from __future__ import annotations

from ..channel import Channel
from ..script import Fault, Reply
from ..wire import (
    OVERFLOW_CODE,
    OVERFLOW_MESSAGE,
    Json,
    compaction_item,
    error_body,
    estimate_tokens,
    function_call_item,
    message_item,
    new_id,
    now,
    overflow_body,
    reasoning_item,
    response_object,
)
from .exchange import Exchange, call_id, chunks, reply_usage, split_even
from .faults import malformed, status_fault, unary_drop


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
        items.append((function_call_item(new_id("fc"), call_id(call), call.name, args), args))
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
        for piece in chunks(payload, reply.chunk_size) if payload else []:
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
        for piece in chunks(payload, reply.chunk_size):
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
        status_fault(ch, fault)
        return
    if fault.kind == "overflow" and not (fault.mid_stream and ex.stream):
        ch.send_json(400, overflow_body("input"))
        return
    if fault.kind == "inband_error" and not ex.stream:
        ch.send_json(500, error_body(500, fault.message, fault.error_code))
        return
    if fault.kind == "malformed":
        malformed(
            ch, ex, '{"type": "response.created", "response": {"id": "resp_', "response.created"
        )
        return
    if not ex.stream:
        unary_drop(ch, fault)
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
        for piece in split_even(fault.text, fault.after_chunks):
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
