"""The two compaction paths as pure steps: summarise locally, or call the remote endpoint.

Neither touches the session: they take a copy of the history and report through callbacks, so a
cancelled or failed compaction leaves nothing behind (the session applies the result at the end,
in one synchronous step).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..items import (
    Item,
    is_message,
    item_text_for_count,
    item_type,
    last_assistant_text,
    user_message,
)
from ..providers.base import ModelProvider, ModelRequest, ProviderError, Usage
from ..sampling import RetryNotice, sample, wait_before_retry
from ..tokens import approx_tokens

COMPACTION_HEADERS = {"x-coco-request-kind": "compaction"}


class ContextTooLarge(Exception):
    """Even a single item does not fit the model's window: nothing left to trim."""


@dataclass(frozen=True)
class LocalSummary:
    summary: str
    usage: Usage | None
    trimmed: int


def drop_oldest(items: list[Item]) -> int:
    """Remove the oldest item (with the output paired to a call); returns how many went."""
    first = items.pop(0)
    removed = 1
    if item_type(first) == "function_call":
        call_id = first.get("call_id")
        for index, item in enumerate(items):
            if item_type(item) == "function_call_output" and item.get("call_id") == call_id:
                del items[index]
                removed += 1
                break
    return removed


async def summarise_locally(
    provider: ModelProvider,
    *,
    model: str,
    instructions: str,
    history: list[Item],
    prompt: str,
    prompt_cache_key: str,
    max_retries: int,
    base_delay: float,
    on_retry: RetryNotice,
    on_trim: Callable[[int], None],
    on_delta: Callable[[str, str], None] | None = None,
) -> LocalSummary:
    """Spec section 3, steps 2-5: history copy + prompt as a user message, no tools; on
    context overflow drop the oldest item and try again (retries reset)."""
    request_items = list(history)
    trimmed = 0
    while True:
        request = ModelRequest(
            model=model,
            instructions=instructions,
            input=[*request_items, user_message(prompt)],
            tools=[],
            prompt_cache_key=prompt_cache_key,
        )
        try:
            attempt = await sample(
                provider,
                request,
                max_retries=max_retries,
                base_delay=base_delay,
                on_retry=on_retry,
                on_delta=on_delta,
                extra_headers=COMPACTION_HEADERS,
            )
        except ProviderError as error:
            if error.category != "context_overflow":
                raise
            if len(request_items) <= 1:
                raise ContextTooLarge(error.message) from error
            trimmed += drop_oldest(request_items)
            on_trim(trimmed)
            continue
        return LocalSummary(
            summary=last_assistant_text(attempt.items) or "", usage=attempt.usage, trimmed=trimmed
        )


def _is_trimmable_tail(item: Item) -> bool:
    return item_type(item) == "function_call_output" or is_message(item, "developer")


async def compact_remotely(
    provider: ModelProvider,
    *,
    model: str,
    instructions: str,
    history: list[Item],
    tools: list[dict[str, object]],
    prompt_cache_key: str,
    reasoning_effort: str | None,
    context_window: int | None,
    max_retries: int,
    base_delay: float,
    on_retry: RetryNotice,
) -> tuple[list[Item], Usage | None]:
    """Spec section 4: trailing tool outputs / developer messages are trimmed while the
    estimate exceeds the window; retryable failures are retried; the raw output is returned."""
    request_items = list(history)
    if context_window is not None:
        estimate = approx_tokens(instructions) + sum(
            approx_tokens(item_text_for_count(item)) for item in request_items
        )
        while request_items and estimate > context_window and _is_trimmable_tail(request_items[-1]):
            estimate -= approx_tokens(item_text_for_count(request_items.pop()))
    request = ModelRequest(
        model=model,
        instructions=instructions,
        input=request_items,
        tools=list(tools),
        prompt_cache_key=prompt_cache_key,
        reasoning_effort=reasoning_effort,
    )
    failures = 0
    while True:
        try:
            result = await provider.compact(request, extra_headers=COMPACTION_HEADERS)
        except ProviderError as error:
            failures += 1
            await wait_before_retry(
                error, failures, max_retries=max_retries, base_delay=base_delay, on_retry=on_retry
            )
            continue
        if not any(
            item_type(item) in ("compaction", "compaction_summary") for item in result.output
        ):
            raise ProviderError("malformed", "the compact endpoint returned no compaction item")
        return result.output, result.usage
