"""The remote path (spec section 4, forms b and a): the compaction trigger, then the standalone
endpoint; a form the server answers as unsupported is remembered and skipped from then on."""

from __future__ import annotations

from ...config import CoreConfig
from ...items import Item, is_compaction_item, is_message
from ...providers.base import ProviderError
from ...providers.capabilities import RemoteCapabilities
from ...providers.sampling import RetryNotice
from ..budget import CompactionBudget
from ..failure import fail_fast, server_unreachable
from ..fit import fit_items
from ..notes.block import is_notes_message
from ..rebuild import assemble, filter_remote_output, real_user_messages, select_with_notes
from .path import PathResult, PathRun, notes_items
from .remote import compact_remotely, compact_with_trigger, is_unsupported

# Remote forms, in the order they are tried (spec section 4, forms b and a).
REMOTE_FORMS = ("trigger", "standalone")
REMOTE_FORM_NAMES = {"trigger": "the compaction trigger", "standalone": "/responses/compact"}
REMOTE_STAGE_TEXT = {
    "trigger": "Compacting remotely (compaction trigger)…",
    "standalone": "Compacting remotely (/responses/compact)…",
}


def remote_forms(config: CoreConfig, capabilities: RemoteCapabilities) -> list[str]:
    """The remote forms to try, in order, less those this server said it does not offer."""
    unsupported = capabilities.unsupported(config.base_url, config.model)
    return [form for form in REMOTE_FORMS if form not in unsupported]


async def run_remote(
    run: PathRun,
    history: list[Item],
    budget: CompactionBudget,
    context: list[Item],
) -> PathResult:
    """The trigger form, then the standalone endpoint; a form the server answers as
    unsupported is remembered (on disk) and skipped from then on."""
    config = run.config()
    forms = remote_forms(config, run.capabilities)
    failure: ProviderError | None = None
    for index, form in enumerate(forms):
        run.remote_form = form
        run.progress("remote", REMOTE_STAGE_TEXT[form])
        try:
            if form == "trigger":
                return await _trigger(run, history, budget, context)
            return await _standalone(run, history, budget, context)
        except ProviderError as error:
            failure = error
            if is_unsupported(error, form):
                run.capabilities.mark_unsupported(config.base_url, config.model, form)
            if server_unreachable(error):
                raise  # the other form is on the same server
            if index + 1 < len(forms):
                run.say(
                    run.turn_id,
                    (
                        f"Remote compaction with {REMOTE_FORM_NAMES[form]} failed "
                        f"({error.message}); trying "
                        f"{REMOTE_FORM_NAMES[forms[index + 1]]}."
                    ),
                )
    raise failure or ProviderError("not_found", "the server offers no remote compaction")


async def _trigger(
    run: PathRun,
    history: list[Item],
    budget: CompactionBudget,
    context: list[Item],
) -> PathResult:
    config = run.config()
    compaction, usage = await compact_with_trigger(
        run.provider(),
        run.turn_request(history),
        max_retries=config.max_retries,
        base_delay=config.retry_base_delay,
        on_retry=_retry_notice(run),
        extra_headers=run.headers(),
    )
    # The new history as Codex builds it: kept user messages from Coco's own history, the
    # context before the last of them, the compaction item last.
    count, context_tokens = run.kept_counting(budget, context)
    item_tokens = run.counts.count_item(compaction)
    kept, truncated, carried, _ = select_with_notes(
        history,
        budget.kept_budget(item_tokens, context_tokens),
        run.notes_budget(budget),
        count,
        run.read_notes,
    )
    items = assemble(kept, compaction, context, notes_items(carried))
    return PathResult(
        strategy="remote",
        items=items,
        usage=usage,
        kept=len(kept),
        kept_truncated=truncated,
        remote_form="trigger",
        carried=carried if run.config().carry_notes else None,
    )


async def _standalone(
    run: PathRun,
    history: list[Item],
    budget: CompactionBudget,
    context: list[Item],
) -> PathResult:
    config = run.config()
    output, usage = await compact_remotely(
        run.provider(),
        model=config.model,
        instructions=config.instructions,
        history=history,
        tools=run.tool_specs(),
        prompt_cache_key=run.session_id,
        reasoning_effort=config.reasoning_effort,
        context_window=budget.window,
        max_retries=config.max_retries,
        base_delay=config.retry_base_delay,
        on_retry=_retry_notice(run),
        extra_headers=run.headers(),
    )
    items = insert_before_last_user(filter_remote_output(output), context)
    # The user messages the server's history no longer holds left the view: their notes
    # go just before the compaction item.
    carried = run.carry(history, budget, still=set(real_user_messages(items)))
    items = insert_before_compaction(items, notes_items(carried))
    shrunk = None
    room = budget.history_room
    if room is not None:
        item_counts = [run.counts.count_item(item) for item in items]
        fitted = fit_items(
            items,
            item_counts,
            room,
            protect=lambda item: (
                is_compaction_item(item) or is_notes_message(item) or item in context
            ),
            count=run.counts.count,
            count_item=run.counts.count_item,
        )
        if fitted.dropped or fitted.truncated:
            shrunk = {
                "dropped_messages": fitted.dropped,
                "truncated_messages": fitted.truncated,
            }
        items = fitted.items
    return PathResult(
        strategy="remote",
        items=items,
        usage=usage,
        # The user's own messages the server kept: not the context blocks, not the notes.
        kept=len(real_user_messages([item for item in items if item not in context])),
        shrunk=shrunk,
        remote_form="standalone",
        carried=carried,
    )


def _retry_notice(run: PathRun) -> RetryNotice:
    def notice(attempt: int, max_attempts: int, error: ProviderError) -> None:
        run.progress("retrying", f"Retrying remote compaction ({attempt}/{max_attempts})…")

    return fail_fast(notice)


def insert_before_compaction(items: list[Item], carried: list[Item]) -> list[Item]:
    """``carried`` just before the (last) compaction item, or last when there is none."""
    if not carried:
        return items
    result = list(items)
    for index in range(len(result) - 1, -1, -1):
        if is_compaction_item(result[index]):
            result[index:index] = carried
            return result
    return result + carried


def insert_before_last_user(items: list[Item], context: list[Item]) -> list[Item]:
    """``context`` just before the last user message of ``items`` (first when there is none)."""
    if not context:
        return items
    result = list(items)
    for index in range(len(result) - 1, -1, -1):
        if is_message(result[index], "user"):
            result[index:index] = context
            return result
    return context + result
