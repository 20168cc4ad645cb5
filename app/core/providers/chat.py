"""The Chat Completions provider, for local servers (Ollama, LM Studio, vLLM, llama.cpp).

The core speaks Responses-API items; this adapter turns a request's items into chat messages and
the streamed chat chunks back into items (an assistant ``message`` and ``function_call`` items),
so history looks the same whichever wire API produced it.

Ollama truncates an over-long prompt silently and answers with HTTP 200: when the server reports
far fewer prompt tokens than the input must have, the stream fails as ``context_overflow`` so the
core compacts and retries (:mod:`.prompt_truncation`).

The request is built in :mod:`.chat_request` (strict chat templates are explained there).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from ..items import Item, new_id
from ..tokens.calibration import Calibration, CalibrationStore, tools_text
from .base import (
    CompactResult,
    Completed,
    ModelRequest,
    OutputItemDone,
    ProviderError,
    StopReason,
    StreamEvent,
    TextDelta,
    Usage,
)
from .chat_request import (
    Message,
    chat_messages,
    items_to_messages,
    messages_text,
    normalize_messages,
    tools_to_chat,
)
from .errors.non_api_replies import refuse_web_page
from .errors.table import classify_error_payload
from .openai_client import OpenAIClientProvider
from .prompt_truncation import TRUNCATION_MIN_ESTIMATE, TruncationCheck, estimate_tokens
from .sse import json_events, json_int, json_objects, read_to_end, usage_from_json
from .stream_post import stream_post

# The request builders are also importable from here, where they were first.
__all__ = [
    "TRUNCATION_MIN_ESTIMATE",
    "ChatCompletionsProvider",
    "Message",
    "chat_messages",
    "estimate_tokens",
    "items_to_messages",
    "normalize_messages",
    "tools_to_chat",
]

@dataclass
class _ToolCallParts:
    call_id: str = ""
    name: str = ""
    arguments: str = ""


class ChatCompletionsProvider(OpenAIClientProvider):
    """A model behind ``POST /chat/completions``; no remote compaction.

    Built like ``ResponsesProvider`` (SDK retries off, optional ``http_client``). Reasoning
    effort and encrypted reasoning are not sent: local chat servers do not take them.
    """

    supports_remote_compaction: bool = False

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        calibration: CalibrationStore | None = None,
        **kwargs: Any,
    ) -> None:
        """``calibration``: where the ratio of the server's prompt counts to this provider's
        estimate is learnt and kept (basis ``"bytes"``); without one the raw estimate is used."""
        super().__init__(base_url, api_key, **kwargs)
        self._truncation = TruncationCheck(self.base_url, calibration)

    def calibration(self, model: str) -> Calibration:
        """What this provider has learnt of ``model``'s tokenizer so far."""
        return self._truncation.calibration(model)

    async def stream(
        self, request: ModelRequest, *, extra_headers: dict[str, str] | None = None
    ) -> AsyncIterator[StreamEvent]:
        """Stream one chat completion as Responses-style events.

        Text deltas come as they arrive; the assistant message item and function-call items come
        at the end, then ``Completed``. Usage is the server's, or an estimate when it sends none.
        """
        messages = chat_messages(request.instructions, request.input)
        tools = tools_to_chat(request.tools)
        message_id = new_id("msg")
        text_parts: list[str] = []
        calls: dict[int, _ToolCallParts] = {}
        response_id = ""
        finished = False
        stop_reason: StopReason | None = None
        usage: Usage | None = None
        try:
            fields: dict[str, Any] = {
                "model": request.model, "messages": messages, "stream": True,
                "stream_options": {"include_usage": True},
            }
            if request.max_output_tokens:
                # ``max_tokens``: what every local server (llama.cpp, Ollama, LM Studio, vLLM)
                # reads; the newer ``max_completion_tokens`` is OpenAI's alone.
                fields["max_tokens"] = request.max_output_tokens
            if tools:
                fields["tools"] = tools
            # The body written by Coco, as ResponsesProvider.stream sends it (``stream_post``).
            sdk_stream = await stream_post(
                self._client, "/chat/completions", fields, extra_headers
            )
        except Exception as exc:
            raise self._error(exc) from exc
        try:
            await refuse_web_page(
                sdk_stream.response, base_url=self.base_url, secrets=self._secrets
            )
            # The raw SSE, like ResponsesProvider.stream: the SDK's typed chunk objects cost
            # several times more than reading the stream itself.
            body = sdk_stream.response.aiter_bytes()
            async for chunks in json_events(body):
                for chunk in chunks:
                    if not isinstance(chunk, dict):
                        raise ProviderError("malformed", "stream chunk is not a JSON object")
                    if chunk.get("error"):
                        error = chunk["error"]
                        raise classify_error_payload(
                            error if isinstance(error, (dict, str)) else chunk,
                            base_url=self.base_url,
                            secrets=self._secrets,
                        )
                    response_id = response_id or str(chunk.get("id") or "")
                    usage = (
                        usage_from_json(chunk.get("usage"), "prompt_tokens", "completion_tokens")
                        or usage
                    )
                    for choice in json_objects(chunk.get("choices")):
                        delta = choice.get("delta")
                        delta = delta if isinstance(delta, dict) else {}
                        content = delta.get("content")
                        if content and isinstance(content, str):
                            text_parts.append(content)
                            yield TextDelta(item_id=message_id, delta=content)
                        for call_delta in json_objects(delta.get("tool_calls")):
                            index = json_int(call_delta.get("index"))
                            parts = calls.setdefault(index, _ToolCallParts())
                            if call_delta.get("id") and not parts.call_id:
                                parts.call_id = str(call_delta["id"])
                            function = call_delta.get("function")
                            if isinstance(function, dict):
                                parts.name += str(function.get("name") or "")
                                parts.arguments += str(function.get("arguments") or "")
                        if choice.get("finish_reason"):
                            finished = True
                            if choice["finish_reason"] == "length":
                                stop_reason = "length"
            if finished:
                # What follows ``[DONE]`` is the body's end: read it, so the connection is
                # reused by the next request.
                await read_to_end(body)
        except ProviderError:
            raise
        except Exception as exc:
            raise self._error(exc) from exc
        finally:
            # Also runs on cancellation: close the connection now.
            await sdk_stream.close()
        if not finished:
            raise ProviderError("stream", "stream closed before the completion finished")

        text = "".join(text_parts)
        output_text = text + "".join(c.name + c.arguments for c in calls.values())
        input_estimate = estimate_tokens(messages_text(messages) + tools_text(tools))
        self._truncation.check(
            request.model, input_estimate, None if usage is None else usage.input_tokens
        )
        if usage is None:
            output_estimate = estimate_tokens(output_text)
            usage = Usage(
                input_tokens=input_estimate,
                output_tokens=output_estimate,
                total_tokens=input_estimate + output_estimate,
                estimated=True,
            )
        if text:
            item: Item = {
                "type": "message",
                "role": "assistant",
                "id": message_id,
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
            yield OutputItemDone(item=item)
        for index in sorted(calls):
            parts = calls[index]
            yield OutputItemDone(
                item={
                    "type": "function_call",
                    "id": new_id("fc"),
                    "call_id": parts.call_id or new_id("call"),
                    "name": parts.name,
                    "arguments": parts.arguments,
                }
            )
        yield Completed(response_id=response_id, usage=usage, stop_reason=stop_reason)

    async def compact(
        self, request: ModelRequest, *, extra_headers: dict[str, str] | None = None
    ) -> CompactResult:
        """Always fails: the Chat Completions API has no compaction endpoint."""
        raise ProviderError(
            "not_found", "remote compaction is not available on the Chat Completions API"
        )
