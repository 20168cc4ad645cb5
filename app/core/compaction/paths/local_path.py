"""The local path (spec section 3): the model summarises a copy of the history, then the new
history is rebuilt around the summary; a cut-short summary keeps the earlier one beside it, a
junk one is not installed (the earlier one stays, if any)."""

from __future__ import annotations

import asyncio
from functools import partial

from ... import protocol as p
from ...items import Item, message_text
from ..budget import CompactionBudget
from ..failure import fail_fast
from ..junk_summary import check_summary
from ..prompts import build_prompt, is_summary_message, summary_prefix, summary_text
from ..rebuild import build_compacted_history
from .local import ItemCounts, LocalCompaction
from .path import PathResult, PathRun


async def run_local(
    run: PathRun,
    history: list[Item],
    counts: ItemCounts,
    budget: CompactionBudget,
    context: list[Item],
    focus: str | None,
    model: str | None,
) -> PathResult:
    """Summarise ``history`` locally and rebuild the new history within ``budget``."""
    config = run.config()
    turn_id = run.turn_id
    run.progress("local", "Summarising locally…")
    local = await LocalCompaction(
        provider=run.provider(),
        model=model or config.compaction_model or config.model,
        instructions=config.instructions,
        history=history,
        item_tokens=counts,
        prompt=build_prompt(
            config.compact_prompt, config.summary_style, focus, words=prompt_words(budget.summary)
        ),
        prompt_cache_key=run.session_id,
        budget=budget,
        counter=run.counts,  # the dropped items of a run again are not tokenised again
        reasoning=config.is_reasoning_model,
        max_retries=config.max_retries,
        base_delay=config.retry_base_delay,
        on_retry=fail_fast(run.retry_notice(turn_id)),
        extra_headers=run.headers(),
        on_trim=lambda n: run.emit(
            p.CompactionProgress(
                turn_id=turn_id,
                stage="trimming",
                message=f"Making room for the summary (left out {n} older item"
                f"{'s' if n != 1 else ''})…",
                trimmed=n,
            )
        ),
    ).summarise()
    summary = local.summary
    kept_previous = False
    if local.junk is not None:
        # Junk is never installed: the earlier summary stays if it is usable, else there is
        # none and the kept messages, pins and carried notes carry the conversation.
        previous = previous_summary(history)
        usable = previous is not None and check_summary(previous).junk is None
        kept_previous = usable
        summary = previous if previous is not None and usable else ""
    elif local.cut_short:
        previous = previous_summary(history)
        if previous is not None:
            # Never replace a usable summary with a fragment: keep the earlier one.
            kept_previous = True
            summary = previous if not summary else f"{previous}\n\n{summary}"
    count, context_tokens = run.kept_counting(budget, context)
    summary_tokens = count(summary_text(summary))
    # In a worker thread: for a long history (notes read from thousands of messages, kept
    # messages counted) it is 50-100 ms of work, which held the window's thread in one block.
    rebuilt = await asyncio.to_thread(
        partial(
            build_compacted_history,
            history,
            summary,
            initial_context=context,
            budget=budget.kept_budget(summary_tokens, context_tokens),
            room=budget.history_room,
            count=count,
            notes_budget=run.notes_budget(budget),
            read_notes=run.read_notes,
        )
    )
    shrunk = rebuilt.shrunk
    return PathResult(
        strategy="local",
        items=rebuilt.items,
        summary=summary,
        usage=local.usage,
        kept=rebuilt.kept_user_messages,
        kept_truncated=rebuilt.kept_truncated,
        trimmed=local.trimmed + local.truncated,
        cut_short=local.cut_short,
        kept_previous_summary=kept_previous,
        summary_unusable=local.junk,
        carried=rebuilt.carried if run.config().carry_notes else None,
        shrunk=(
            {
                "dropped_messages": shrunk.dropped_messages,
                "truncated_messages": shrunk.truncated_messages,
                "summary_truncated": shrunk.summary_truncated,
            }
            if shrunk.any
            else None
        ),
    )


def prompt_words(tokens: int | None) -> int | None:
    """A token budget in words, for the prompt (about 0.75 words a token in English)."""
    return None if tokens is None else max(40, int(tokens * 0.7))


def previous_summary(history: list[Item]) -> str | None:
    """The body of the newest summary message in ``history``."""
    prefix = summary_prefix() + "\n"
    for item in reversed(history):
        if is_summary_message(item):
            return message_text(item)[len(prefix) :]
    return None
