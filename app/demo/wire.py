"""OpenAI wire objects: ids, token estimates, usage blocks, error bodies, response objects.

Everything here is a pure function returning plain JSON-able dicts, shaped after what the real
API sends so the ``openai`` package parses it unchanged.
"""

from __future__ import annotations

import json
import math
import time
import uuid
from typing import Any

Json = dict[str, Any]

OVERFLOW_MESSAGE = (
    "Your input exceeds the context window of this model. Please adjust your input and try again."
)
OVERFLOW_CODE = "context_length_exceeded"

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "permission_error",
    404: "invalid_request_error",
    409: "invalid_request_error",
    422: "invalid_request_error",
    429: "requests",
}

_DEFAULT_MESSAGES = {
    400: "The request was invalid.",
    401: "Incorrect API key provided. You can find your API key in your account settings.",
    403: "You are not allowed to sample from this model.",
    404: "The model does not exist or you do not have access to it.",
    429: "Rate limit reached for requests. Please try again later.",
    500: "The server had an error while processing your request. Sorry about that!",
    502: "Bad gateway.",
    503: "The engine is currently overloaded, please try again later.",
}


def new_id(prefix: str, sep: str = "_") -> str:
    """A fresh id in the API's style (``resp_…``, ``msg_…``, ``chatcmpl-…``)."""
    return f"{prefix}{sep}{uuid.uuid4().hex}"


def now() -> int:
    """Unix time in whole seconds, as the API stamps objects."""
    return int(time.time())


def estimate_tokens(text: str) -> int:
    """The house estimate: ceil(utf-8 bytes / 4)."""
    return math.ceil(len(text.encode("utf-8")) / 4)


# ------------------------------------------------------------------------------ items and text


def content_text(content: Any) -> str:
    """All text of a message ``content`` (a string or a list of text parts)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for part in content:
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            parts.append(part["text"])
    return "".join(parts)


def item_type(item: Json) -> str:
    """An item's type; items with only a role are messages."""
    return str(item.get("type") or ("message" if "role" in item else ""))


def item_count_text(item: Json) -> str:
    """The text whose size stands for an item in token estimates (opaque blobs count too)."""
    kind = item_type(item)
    if kind == "message":
        return content_text(item.get("content"))
    if kind == "function_call":
        return f"{item.get('name', '')}{item.get('arguments', '')}"
    if kind == "function_call_output":
        output = item.get("output", "")
        return output if isinstance(output, str) else json.dumps(output)
    if kind == "reasoning":
        summary = item.get("summary") or []
        text = "".join(str(s.get("text", "")) for s in summary if isinstance(s, dict))
        return text + str(item.get("encrypted_content") or "")
    if kind in ("compaction", "compaction_summary"):
        return str(item.get("encrypted_content") or "")
    return json.dumps(item)


def input_tokens_of(instructions: str, items: list[Json]) -> int:
    """Estimated input tokens: instructions plus every input item, each rounded up."""
    total = estimate_tokens(instructions) if instructions else 0
    return total + sum(estimate_tokens(item_count_text(item)) for item in items)


def normalize_input(raw: Any) -> list[Json]:
    """A Responses ``input`` as a list of item dicts (a bare string is one user message)."""
    if isinstance(raw, str):
        return [user_message(raw)]
    if not isinstance(raw, list):
        return []
    return [item for item in raw if isinstance(item, dict)]


def user_message(text: str) -> Json:
    """A user message item with one ``input_text`` part."""
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def chat_messages_to_items(messages: Any) -> tuple[str, list[Json]]:
    """Chat Completions ``messages`` as (instructions, Responses-style items)."""
    instructions: list[str] = []
    items: list[Json] = []
    if not isinstance(messages, list):
        return "", items
    for message in messages:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        text = content_text(message.get("content"))
        if role in ("system", "developer"):
            instructions.append(text)
        elif role == "tool":
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": str(message.get("tool_call_id", "")),
                    "output": text,
                }
            )
        elif role == "assistant":
            if text:
                items.append(
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": text}],
                    }
                )
            for call in message.get("tool_calls") or []:
                if not isinstance(call, dict):
                    continue
                function = call.get("function")
                if not isinstance(function, dict):
                    function = {}
                items.append(
                    {
                        "type": "function_call",
                        "name": str(function.get("name", "")),
                        "arguments": str(function.get("arguments", "")),
                        "call_id": str(call.get("id", "")),
                    }
                )
        else:
            items.append(
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": text}],
                }
            )
    return "\n\n".join(instructions), items


def offered_tool_names(tools: Any) -> set[str]:
    """Names of the function tools a request offers (Responses or Chat shape)."""
    names: set[str] = set()
    if not isinstance(tools, list):
        return names
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        function = tool.get("function")
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            names.add(function["name"])
        elif isinstance(tool.get("name"), str):
            names.add(tool["name"])
    return names


# ------------------------------------------------------------------------------------- usage


def responses_usage(
    input_tokens: int,
    output_tokens: int,
    cached_tokens: int = 0,
    reasoning_tokens: int = 0,
    total_tokens: int | None = None,
) -> Json:
    """A Responses ``usage`` block; total defaults to input + output."""
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": cached_tokens},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
        "total_tokens": input_tokens + output_tokens if total_tokens is None else total_tokens,
    }


def chat_usage(usage: Json) -> Json:
    """A Responses usage block in Chat Completions terms."""
    return {
        "prompt_tokens": usage["input_tokens"],
        "completion_tokens": usage["output_tokens"],
        "total_tokens": usage["total_tokens"],
        "prompt_tokens_details": {
            "cached_tokens": usage["input_tokens_details"]["cached_tokens"],
            "audio_tokens": 0,
        },
        "completion_tokens_details": {
            "reasoning_tokens": usage["output_tokens_details"]["reasoning_tokens"],
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


# ------------------------------------------------------------------------------------ errors


def error_body(
    status: int,
    message: str | None = None,
    code: str | None = None,
    param: str | None = None,
    type_: str | None = None,
) -> Json:
    """The OpenAI error envelope ``{"error": {message, type, param, code}}``."""
    return {
        "error": {
            "message": message or _DEFAULT_MESSAGES.get(status, f"HTTP error {status}."),
            "type": type_ or _ERROR_TYPES.get(status, "server_error"),
            "param": param,
            "code": code,
        }
    }


def overflow_body(param: str = "input") -> Json:
    """The API's ``context_length_exceeded`` error body."""
    return error_body(400, OVERFLOW_MESSAGE, OVERFLOW_CODE, param=param)


# --------------------------------------------------------------------------- response objects


def message_item(item_id: str, text: str, status: str = "completed") -> Json:
    """A completed assistant message output item."""
    return {
        "id": item_id,
        "type": "message",
        "status": status,
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def function_call_item(
    item_id: str, call_id: str, name: str, arguments: str, status: str = "completed"
) -> Json:
    """A function call output item."""
    return {
        "id": item_id,
        "type": "function_call",
        "status": status,
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
    }


def reasoning_item(item_id: str, encrypted_content: str) -> Json:
    """A reasoning output item carrying opaque ``encrypted_content``."""
    return {
        "id": item_id,
        "type": "reasoning",
        "summary": [],
        "encrypted_content": encrypted_content,
    }


def compaction_item(encrypted_content: str) -> Json:
    """A compaction item as ``/responses/compact`` returns it."""
    return {"type": "compaction", "id": new_id("cmp"), "encrypted_content": encrypted_content}


def response_object(
    response_id: str,
    created_at: int,
    body: Json,
    model: str,
    status: str,
    output: list[Json],
    usage: Json | None,
    error: Json | None = None,
    incomplete_reason: str | None = None,
) -> Json:
    """A full ``Response`` object, echoing the request's settings as the API does."""
    reasoning = body.get("reasoning") if isinstance(body.get("reasoning"), dict) else None
    return {
        "id": response_id,
        "object": "response",
        "created_at": created_at,
        "status": status,
        "background": False,
        "completed_at": now() if status == "completed" else None,
        "error": error,
        "incomplete_details": {"reason": incomplete_reason} if incomplete_reason else None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "metadata": body.get("metadata") or {},
        "model": model,
        "output": output,
        "parallel_tool_calls": bool(body.get("parallel_tool_calls", True)),
        "previous_response_id": body.get("previous_response_id"),
        "prompt_cache_key": body.get("prompt_cache_key"),
        "reasoning": {
            "effort": (reasoning or {}).get("effort"),
            "summary": (reasoning or {}).get("summary"),
        },
        "service_tier": "default",
        "store": bool(body.get("store", True)),
        "temperature": body.get("temperature", 1.0),
        "text": body.get("text") or {"format": {"type": "text"}},
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools") or [],
        "top_p": body.get("top_p", 1.0),
        "truncation": body.get("truncation", "disabled"),
        "usage": usage,
        "user": None,
    }


def model_list(model: str, created: int) -> Json:
    """The ``GET /models`` payload advertising one model."""
    return {
        "object": "list",
        "data": [{"id": model, "object": "model", "created": created, "owned_by": "coco"}],
    }
