"""The Chat Completions provider, for local servers (Ollama, LM Studio, vLLM, llama.cpp).

The core speaks Responses-API items; this adapter turns a request's items into chat messages and
the streamed chat chunks back into items (an assistant ``message`` and ``function_call`` items),
so history looks the same whichever wire API produced it.

Ollama truncates an over-long prompt silently and answers with HTTP 200. When the server reports
far fewer prompt tokens than the input must have (under half of a local estimate above
``TRUNCATION_MIN_ESTIMATE`` tokens), the stream fails as ``context_overflow`` so the core compacts
and retries instead of keeping an answer to a prompt the model never fully saw. The estimate is
calibrated to the server's own tokenizer (:mod:`app.core.calibration`) once it has reported a
plausible count: Gemma's tokenizer counts some text at under half of Coco's estimate, which the
raw comparison would take for truncation.

Strict chat templates. The templates shipped with many open models (Gemma, Mistral, older Llama)
accept one optional system message first, then roles alternating user / assistant, and refuse
anything else with HTTP 400 ("Conversation roles must alternate ..."). Coco's history does not
alternate: the environment block and the first user message are two user messages, a compacted
history is kept user messages followed by the summary (also a user message), and developer
messages may sit anywhere. :func:`normalize_messages` rewrites only what is sent on this wire:

- every system message (the instructions, developer messages) is merged, in order, into one
  system message at the start;
- consecutive user messages are merged into one, their texts separated by a blank line;
- consecutive assistant messages are merged when the earlier one has no tool calls (the later
  one's tool calls are kept), so an interrupted reply followed by a new one becomes one turn;
- an assistant message with tool calls and the ``tool`` messages answering it are never merged
  or reordered: each tool result stays tied to its call id.

The stored history and the Responses wire are untouched. Nothing is dropped: every text is sent,
in its order within its role (system texts move to the front, where strict templates want them),
and lenient servers read the merged request the same way.
"""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, cast

from openai import omit

from ..calibration import Calibration, CalibrationStore, tools_text
from ..items import Item, item_type, message_text, new_id
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
from .errors import classify_error_payload
from .non_api_replies import refuse_web_page
from .openai_client import OpenAIClientProvider
from .sse import json_events, json_int, json_objects, usage_from_json

# Below this estimate a low reported count is as likely a tokenizer difference as truncation.
TRUNCATION_MIN_ESTIMATE = 2000

Message = dict[str, Any]


def estimate_tokens(text: str) -> int:
    """The spec's estimate: ceil(utf-8 bytes / 4)."""
    return math.ceil(len(text.encode("utf-8")) / 4)


def _output_text(output: object) -> str:
    """A ``function_call_output`` payload as the plain string a chat ``tool`` message carries."""
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        texts = [
            str(part.get("text", ""))
            for part in output
            if isinstance(part, dict) and part.get("type") in ("input_text", "output_text", "text")
        ]
        if texts:
            return "".join(texts)
    return json.dumps(output, ensure_ascii=False)


def items_to_messages(instructions: str, items: list[Item]) -> list[Message]:
    """Chat messages for a Responses-style request.

    ``developer`` becomes ``system`` (many local servers reject the developer role). Function
    calls join the assistant message just before them, as the chat API returns them; reasoning
    and compaction items are dropped, since their encrypted content means nothing to a chat server.
    """
    messages: list[Message] = []
    if instructions:
        messages.append({"role": "system", "content": instructions})
    for item in items:
        kind = item_type(item)
        if kind == "message":
            role = item.get("role")
            text = message_text(item)
            if role == "assistant":
                messages.append({"role": "assistant", "content": text})
            elif role in ("developer", "system"):
                messages.append({"role": "system", "content": text})
            else:
                messages.append({"role": "user", "content": text})
        elif kind == "function_call":
            call = {
                "id": str(item.get("call_id") or item.get("id") or new_id("call")),
                "type": "function",
                "function": {
                    "name": str(item.get("name", "")),
                    "arguments": str(item.get("arguments") or "{}"),
                },
            }
            last = messages[-1] if messages else None
            if last is not None and last["role"] == "assistant":
                last.setdefault("tool_calls", []).append(call)
                if last.get("content") == "":
                    last["content"] = None
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": str(item.get("call_id", "")),
                    "content": _output_text(item.get("output", "")),
                }
            )
        # reasoning, compaction and unknown items have no chat equivalent: skipped.
    return messages


def _join(first: object, second: object) -> str | None:
    texts = [text for text in (first, second) if isinstance(text, str) and text]
    return "\n\n".join(texts) if texts else None


def normalize_messages(messages: list[Message]) -> list[Message]:
    """``messages`` as strict chat templates accept them (see the module docstring).

    One system message first (all system texts merged), no two user messages in a row, no two
    plain assistant messages in a row; tool-call structure kept. The input is not modified.
    """
    system_texts = [
        message["content"]
        for message in messages
        if message.get("role") == "system" and isinstance(message.get("content"), str)
    ]
    result: list[Message] = []
    system_text = "\n\n".join(text for text in system_texts if text)
    if system_text:
        result.append({"role": "system", "content": system_text})
    for message in messages:
        role = message.get("role")
        if role == "system":
            continue
        last = result[-1] if result else None
        if last is not None and role == "user" and last.get("role") == "user":
            last["content"] = _join(last.get("content"), message.get("content")) or ""
            continue
        if (
            last is not None
            and role == "assistant"
            and last.get("role") == "assistant"
            and not last.get("tool_calls")
        ):
            merged: Message = {
                "role": "assistant",
                "content": _join(last.get("content"), message.get("content")),
            }
            if message.get("tool_calls"):
                merged["tool_calls"] = list(message["tool_calls"])
            elif merged["content"] is None:
                merged["content"] = ""
            result[-1] = merged
            continue
        result.append(dict(message))
    return result


def chat_messages(instructions: str, items: list[Item]) -> list[Message]:
    """The messages sent for a request: :func:`items_to_messages`, normalised."""
    return normalize_messages(items_to_messages(instructions, items))


def tools_to_chat(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Responses function tools (flat) as chat tools (nested under ``function``)."""
    converted: list[dict[str, Any]] = []
    for tool in tools:
        if tool.get("type") != "function":
            continue  # hosted tools (web search, ...) do not exist on chat servers
        if isinstance(tool.get("function"), dict):
            converted.append(tool)  # already chat-shaped
            continue
        function: dict[str, Any] = {"name": tool.get("name", "")}
        if tool.get("description"):
            function["description"] = tool["description"]
        function["parameters"] = tool.get("parameters") or {"type": "object", "properties": {}}
        converted.append({"type": "function", "function": function})
    return converted


def _messages_text(messages: list[Message]) -> str:
    parts: list[str] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        for call in message.get("tool_calls") or []:
            parts.append(call["function"]["name"] + call["function"]["arguments"])
    return "".join(parts)


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
        self._calibration = calibration
        # Per model, the last (estimate, reported) pair: see _calibrate.
        self._last_report: dict[str, tuple[int, int]] = {}

    def _expected_prompt_tokens(self, model: str, estimate: int) -> int:
        if self._calibration is None:
            return estimate
        return self._calibration.get(self.base_url, model, "bytes").apply(estimate)

    def _calibrate(self, model: str, estimate: int, reported: int) -> None:
        """Learn from a plausible report, except one that looks silently truncated without
        falling under half: the estimate grew by a quarter since the last report and the count
        stayed put (a prompt cut at the server's window). Learning from those would slowly
        teach the check to accept truncation."""
        previous = self._last_report.get(model)
        self._last_report[model] = (estimate, reported)
        if self._calibration is None:
            return
        if (
            previous is not None
            and estimate >= previous[0] * 1.25
            and reported <= previous[1] * 1.02
        ):
            return
        self._calibration.observe(self.base_url, model, estimate, reported, "bytes")

    def calibration(self, model: str) -> Calibration:
        """What this provider has learnt of ``model``'s tokenizer so far."""
        if self._calibration is None:
            return Calibration()
        return self._calibration.get(self.base_url, model, "bytes")

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
            sdk_stream = await self._client.chat.completions.create(
                model=request.model,
                messages=[],  # sent through extra_body as-is: see ResponsesProvider.stream
                stream=True,
                stream_options={"include_usage": True},
                tools=cast(Any, tools) if tools else omit,
                # ``max_tokens``: what every local server (llama.cpp, Ollama, LM Studio, vLLM)
                # reads; the newer ``max_completion_tokens`` is OpenAI's alone.
                max_tokens=request.max_output_tokens or omit,
                extra_headers=extra_headers,
                extra_body={"messages": messages},
            )
        except Exception as exc:
            raise self._error(exc) from exc
        try:
            await refuse_web_page(
                sdk_stream.response, base_url=self.base_url, secrets=self._secrets
            )
            # The raw SSE, like ResponsesProvider.stream: the SDK's typed chunk objects cost
            # several times more than reading the stream itself.
            async for chunks in json_events(sdk_stream.response.aiter_bytes()):
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
        input_estimate = estimate_tokens(_messages_text(messages) + tools_text(tools))
        expected = self._expected_prompt_tokens(request.model, input_estimate)
        if usage is None:
            output_estimate = estimate_tokens(output_text)
            usage = Usage(
                input_tokens=input_estimate,
                output_tokens=output_estimate,
                total_tokens=input_estimate + output_estimate,
                estimated=True,
            )
        elif expected > TRUNCATION_MIN_ESTIMATE and usage.input_tokens < expected / 2:
            raise ProviderError(
                "context_overflow",
                f"the server truncated the prompt (reported {usage.input_tokens} tokens for about "
                f"{expected}); the input exceeds its context length",
            )
        else:
            self._calibrate(request.model, input_estimate, usage.input_tokens)
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
