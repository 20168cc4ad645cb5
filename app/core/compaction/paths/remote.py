"""The remote path: the provider writes the summary as an opaque ``compaction`` item, replayed
verbatim from then on (spec section 4). Two forms are asked for here:

- **trigger** (what Codex 0.169.0 sends): a normal streamed ``/responses`` request, with the same
  fields as a turn, whose input ends with ``{"type": "compaction_trigger"}``; the answer is one
  ``compaction`` output item;
- **standalone**: ``POST /responses/compact``, answered with the user messages and one
  ``compaction`` item.

The third form (compaction inside a turn's response) needs no request of its own. Nothing here
touches the session.
"""

from __future__ import annotations

from ...attachments.wire import stand_in_items
from ...items import Item, is_compaction_item, is_message, item_text_for_count, item_type
from ...providers.base import ModelProvider, ModelRequest, ProviderError, Usage
from ...providers.sampling import RetryNotice, sample, wait_before_retry
from ...tokens.counter import approx_tokens

COMPACTION_TRIGGER: Item = {"type": "compaction_trigger"}
NO_COMPACTION_ITEM = "no_compaction_item"


def is_unsupported(error: ProviderError, form: str) -> bool:
    """Whether ``error`` says the server does not offer ``form`` (a capability, not a fault):
    404; for the trigger form, a 400 about the item it does not know (OpenAI names
    ``compaction_trigger``; llama.cpp says "Cannot determine type of 'item'"), or an answer
    with no compaction item (the server ignored the trigger)."""
    if error.category == "not_found":
        return True
    if form != "trigger":
        return False
    if error.code == NO_COMPACTION_ITEM:
        return True
    text = error.message.lower()
    return error.category == "bad_request" and ("compaction_trigger" in text or "type" in text)


async def compact_with_trigger(
    provider: ModelProvider,
    request: ModelRequest,
    *,
    max_retries: int,
    base_delay: float,
    on_retry: RetryNotice,
    extra_headers: dict[str, str] | None,
) -> tuple[Item, Usage | None]:
    """Form b: ``request`` is a turn's request for the history; the trigger item goes last and
    the one ``compaction`` output item comes back."""
    trigger_request = ModelRequest(
        model=request.model,
        instructions=request.instructions,
        input=[*request.input, COMPACTION_TRIGGER],
        tools=request.tools,
        prompt_cache_key=request.prompt_cache_key,
        reasoning_effort=request.reasoning_effort,
        include_encrypted_reasoning=request.include_encrypted_reasoning,
    )
    attempt = await sample(
        provider,
        trigger_request,
        max_retries=max_retries,
        base_delay=base_delay,
        on_retry=on_retry,
        extra_headers=extra_headers,
    )
    items = [item for item in attempt.items if is_compaction_item(item)]
    if len(items) != 1:
        raise ProviderError(
            "malformed",
            f"the server answered the compaction trigger with {len(items)} compaction items "
            "instead of one",
            code=NO_COMPACTION_ITEM if not items else None,
        )
    return items[0], attempt.usage


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
    extra_headers: dict[str, str] | None = None,
) -> tuple[list[Item], Usage | None]:
    """Form a (spec section 4): trailing tool outputs / developer messages are trimmed while the
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
        input=stand_in_items(request_items),  # attachments named, not sent again
        tools=list(tools),
        prompt_cache_key=prompt_cache_key,
        reasoning_effort=reasoning_effort,
    )
    failures = 0
    while True:
        try:
            result = await provider.compact(request, extra_headers=extra_headers)
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
