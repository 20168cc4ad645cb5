"""What rendering knows about the request being answered (``Exchange``), and what every
endpoint's rendering shares: a reply's usage, the pieces a text streams in, a tool call's id."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..script import Reply, ToolCall
from ..wire import Json, estimate_tokens, new_id, responses_usage


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


def chunks(text: str, size: int) -> list[str]:
    """``text`` in pieces of ``size`` characters (one empty piece when there is no text)."""
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def split_even(text: str, parts: int) -> list[str]:
    """``text`` in at most ``parts`` pieces of about equal size (none when there is no text)."""
    if parts <= 0 or not text:
        return []
    size = max(1, math.ceil(len(text) / parts))
    return [text[i : i + size] for i in range(0, len(text), size)][:parts]


def reply_usage(reply: Reply, ex: Exchange) -> Json:
    """Usage of ``reply``: estimated output, the exchange's input, overridden by ``reply.usage``."""
    reasoning = estimate_tokens(reply.reasoning) if reply.reasoning else 0
    output = reasoning + (estimate_tokens(reply.text) if reply.text else 0)
    output += sum(estimate_tokens(c.name + c.arguments_json) for c in reply.function_calls)
    return usage_with_override(ex.input_tokens, output, ex.cached_tokens, reasoning, reply.usage)


def usage_with_override(
    input_tokens: int, output: int, cached: int, reasoning: int, override: dict[str, int] | None
) -> Json:
    """Responses usage from the estimates, each figure replaced by ``override``'s if it has one."""
    o = override or {}
    return responses_usage(
        input_tokens=o.get("input_tokens", input_tokens),
        output_tokens=o.get("output_tokens", output),
        cached_tokens=o.get("cached_tokens", cached),
        reasoning_tokens=o.get("reasoning_tokens", reasoning),
        total_tokens=o.get("total_tokens"),
    )


def call_id(call: ToolCall) -> str:
    """The call's own id, or a fresh one in the API's style."""
    return call.call_id or new_id("call")[:29]
