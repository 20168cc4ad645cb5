"""The remote path: the provider writes the summary as an opaque item (spec section 4, form a).

``POST /responses/compact`` takes the history and answers with the user messages and one
``compaction`` item, replayed verbatim from then on. Nothing here touches the session.
"""

from __future__ import annotations

from ..items import Item, is_message, item_text_for_count, item_type
from ..providers.base import ModelProvider, ModelRequest, ProviderError, Usage
from ..sampling import RetryNotice, wait_before_retry
from ..tokens import approx_tokens
from .local import COMPACTION_HEADERS


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
            # A stalled compaction is not waited out again: the fallback is quicker.
            await wait_before_retry(
                error,
                failures,
                max_retries=max_retries,
                base_delay=base_delay,
                on_retry=on_retry,
                retry_stalls=False,
            )
            continue
        if not any(
            item_type(item) in ("compaction", "compaction_summary") for item in result.output
        ):
            raise ProviderError("malformed", "the compact endpoint returned no compaction item")
        return result.output, result.usage
