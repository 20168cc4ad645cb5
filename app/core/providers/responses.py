"""The OpenAI Responses API provider (``POST /responses``, ``POST /responses/compact``).

Output items are taken from the raw SSE JSON, not from the SDK's typed models, so every field the
server sent (ids, ``encrypted_content``, fields this SDK version does not know) is stored and
replayed byte for byte.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import aclosing
from typing import Any, cast

from openai import omit

from ..items import Item
from ..system.fastjson import loads
from .base import (
    CompactResult,
    Completed,
    ModelRequest,
    OutputItemDone,
    ProviderError,
    StreamEvent,
    TextDelta,
    Usage,
)
from .errors.non_api_replies import refuse_web_page
from .errors.overflow import is_context_overflow
from .errors.table import classify_error_payload
from .openai_client import OpenAIClientProvider
from .sse import json_events, read_to_end, usage_from_json
from .stream_post import stream_post

ENCRYPTED_REASONING = "reasoning.encrypted_content"


def parse_responses_usage(raw: object) -> Usage | None:
    """A ``Usage`` from a Responses-API usage object (``None`` when absent or not an object)."""
    return usage_from_json(raw, "input_tokens", "output_tokens")


def _stream_body(request: ModelRequest) -> dict[str, Any]:
    """What a stream request sends as-is, past the SDK's typed transform: the input items and
    the tools (wire JSON already; the SDK walking the tools' schemas against its types cost
    3-4 ms of the window's thread at each request), and ``context_management``. Optional
    fields are omitted, not sent as null: some compatible servers reject nulls."""
    body: dict[str, Any] = {"input": request.input}
    if request.tools or request.send_empty_tools:
        body["tools"] = list(request.tools)
        body["parallel_tool_calls"] = False
        if not request.tools:
            body["tool_choice"] = "auto"
    if request.context_management:
        body["context_management"] = request.context_management
    return body


def _incomplete_reason(response: object) -> str:
    details = response.get("incomplete_details") if isinstance(response, dict) else None
    return str(details.get("reason") or "unknown") if isinstance(details, dict) else "unknown"


def _final_output(event: dict[str, Any]) -> list[Item]:
    """The output items of a ``response.completed`` / ``response.incomplete`` event."""
    response = event.get("response")
    output = response.get("output") if isinstance(response, dict) else None
    if not isinstance(output, list):
        return []
    return [item for item in output if isinstance(item, dict) and item.get("type")]


class ResponsesProvider(OpenAIClientProvider):
    """A model behind the Responses API (OpenAI, or a compatible server).

    The SDK client is built with ``max_retries=0``: the core owns retries and their backoff.
    Consumers should iterate :meth:`stream` under ``contextlib.aclosing`` (or cancel the task):
    closing the generator closes the HTTP stream at once. ``http_client`` replaces the SDK's
    default HTTP client (proxies, tests).
    """

    supports_remote_compaction: bool = True

    def _payload_error(self, payload: Mapping[str, Any] | str | None) -> ProviderError:
        return classify_error_payload(payload, base_url=self.base_url, secrets=self._secrets)

    async def stream(
        self, request: ModelRequest, *, extra_headers: dict[str, str] | None = None
    ) -> AsyncIterator[StreamEvent]:
        """Stream one response: text deltas, completed output items, then ``Completed``.

        Raises ``ProviderError`` for every failure, before or during the stream, including a
        stream that ends without ``response.completed``.
        """
        # Optional fields are omitted, not sent as null: some compatible servers reject nulls.
        fields: dict[str, Any] = {
            "model": request.model, "instructions": request.instructions, "stream": True,
            "store": False,
        }
        if request.prompt_cache_key:
            fields["prompt_cache_key"] = request.prompt_cache_key
        if request.include_encrypted_reasoning:
            fields["include"] = [ENCRYPTED_REASONING]
        if request.reasoning_effort:
            fields["reasoning"] = {"effort": request.reasoning_effort}
        if request.max_output_tokens:
            fields["max_output_tokens"] = request.max_output_tokens
        try:
            # The body written by Coco (``stream_post``): the items and tools are wire JSON
            # already, and the SDK's typed transform and its ``json`` cost the window's thread
            # milliseconds to seconds for a long history.
            sdk_stream = await stream_post(
                self._client, "/responses", {**fields, **_stream_body(request)}, extra_headers
            )
        except Exception as exc:
            raise self._error(exc) from exc
        items_done = 0
        try:
            await refuse_web_page(
                sdk_stream.response, base_url=self.base_url, secrets=self._secrets
            )
            body = sdk_stream.response.aiter_bytes()
            async with aclosing(json_events(body)) as slices:
                async for events in slices:
                    for event in events:
                        if not isinstance(event, dict):
                            raise ProviderError("malformed", "stream event is not a JSON object")
                        done = self._handle_event(event)
                        if done is None:
                            continue
                        if isinstance(done, Completed):
                            if not items_done:
                                # Some servers carry the items only in the final response
                                # object: without this the reply is shown, then missing from
                                # the history.
                                for item in _final_output(event):
                                    yield OutputItemDone(item=item)
                            yield done
                            # The body's end follows: read it, so the connection is reused.
                            await read_to_end(body)
                            return
                        if isinstance(done, OutputItemDone):
                            items_done += 1
                        yield done
        except ProviderError:
            raise
        except Exception as exc:
            raise self._error(exc) from exc
        finally:
            # Runs on cancellation and on aclose() too: drop the connection now, not at GC.
            await sdk_stream.close()
        raise ProviderError("stream", "stream closed before response.completed")

    def _handle_event(self, event: dict[str, Any]) -> StreamEvent | None:
        """The stream event for one SSE payload, ``None`` to skip it; raises on error events."""
        kind = event.get("type")
        if kind == "response.output_text.delta":
            return TextDelta(
                item_id=str(event.get("item_id") or ""), delta=str(event.get("delta") or "")
            )
        if kind == "response.output_item.done":
            item = event.get("item")
            if not isinstance(item, dict):
                raise ProviderError("malformed", "response.output_item.done without an item object")
            return OutputItemDone(item=item)
        if kind == "response.completed":
            response = event.get("response")
            if not isinstance(response, dict):
                raise ProviderError("malformed", "response.completed without a response object")
            return Completed(
                response_id=str(response.get("id") or ""),
                usage=parse_responses_usage(response.get("usage")),
            )
        if kind == "response.failed":
            response = event.get("response")
            error = response.get("error") if isinstance(response, dict) else None
            raise self._payload_error(error if isinstance(error, dict) else "the response failed")
        if kind == "response.incomplete":
            response = event.get("response")
            if _incomplete_reason(response) == "max_output_tokens":
                # The output limit was reached: what came is kept, marked as cut short.
                return Completed(
                    response_id=str(response.get("id") or "") if isinstance(response, dict) else "",
                    usage=parse_responses_usage(
                        response.get("usage") if isinstance(response, dict) else None
                    ),
                    stop_reason="length",
                )
            raise self._incomplete(response)
        if kind == "error" or (kind is None and "error" in event):
            error = event.get("error")
            raise self._payload_error(error if isinstance(error, (dict, str)) else event)
        return None

    def _incomplete(self, response: object) -> ProviderError:
        reason = _incomplete_reason(response)
        message = f"the response was incomplete: {reason}"
        if is_context_overflow(reason, reason):
            return ProviderError("context_overflow", message, code=reason)
        if reason == "content_filter":
            # The same request would hit the same limit or filter again: not worth a retry.
            return ProviderError("bad_request", message, code=reason)
        return ProviderError("stream", message, code=reason)

    async def compact(
        self, request: ModelRequest, *, extra_headers: dict[str, str] | None = None
    ) -> CompactResult:
        """Call ``/responses/compact`` and return its output items exactly as sent.

        The raw JSON is parsed here because the SDK types returned user messages as assistant
        output messages. An empty history needs no request and compacts to nothing.
        """
        if not request.input:
            return CompactResult(output=[], usage=None)
        extra_body: dict[str, Any] = {"input": request.input}  # as-is: see stream()
        if request.tools:
            extra_body["tools"] = request.tools
            extra_body["parallel_tool_calls"] = False
        if request.reasoning_effort:
            extra_body["reasoning"] = {"effort": request.reasoning_effort}
        try:
            raw = await self._client.responses.with_raw_response.compact(
                model=request.model,
                instructions=request.instructions,
                prompt_cache_key=request.prompt_cache_key or omit,
                extra_body=extra_body,
                extra_headers=extra_headers,
            )
            payload = loads(raw.content)
        except Exception as exc:
            raise self._error(exc) from exc
        if not isinstance(payload, dict):
            raise ProviderError("malformed", "the compaction response is not a JSON object")
        if "error" in payload and "output" not in payload:
            error = payload["error"]
            raise self._payload_error(error if isinstance(error, (dict, str)) else None)
        output = payload.get("output")
        if not isinstance(output, list) or not all(isinstance(item, dict) for item in output):
            raise ProviderError("malformed", "the compaction response has no list of output items")
        return CompactResult(
            output=cast(list[Item], output), usage=parse_responses_usage(payload.get("usage"))
        )
