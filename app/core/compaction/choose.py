"""Choosing the path and running it (spec sections 3, 4 and 9): pruning old tool outputs when
that alone makes room, else remote when it is offered and no focus is asked (falling back to
local on failure when the setting allows), else the local summary."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from .. import protocol as p
from ..items import Item
from ..providers.base import ProviderError
from ..tokens.counter import TokenCounter
from .budget import CompactionBudget
from .failure import server_unreachable
from .paths.local import ItemCounts
from .paths.local_path import run_local
from .paths.path import PathResult, PathRun
from .paths.prune import prune_tool_outputs
from .paths.remote_path import run_remote


async def run_path(
    run: PathRun,
    trigger: p.Trigger,
    history: list[Item],
    counts: ItemCounts,
    budget: CompactionBudget,
    *,
    focus: str | None,
    model: str | None,
    remote: Callable[[], bool],
    pinned_calls: Callable[[], frozenset[str]],
) -> PathResult:
    """Run the path this compaction takes; ``remote``: whether remote compaction is available.
    A remote failure with no fallback raises ``ProviderError`` with code ``remote_only``."""
    config = run.config()
    context = run.initial_context()
    if trigger != "manual" and config.prune_tool_outputs:
        # Off the window's thread: a long history's outputs are looked through and the
        # stubs counted (8-10 ms of a 5 000-turn session's, in one block).
        pruned = await asyncio.to_thread(
            prune_to_room, history, counts, budget, run.counter, pinned_calls
        )
        if pruned is not None:
            run.progress("prune", "Removing old tool outputs…")
            return pruned
    remote_failure: ProviderError | None = None
    if remote():
        if focus and focus.strip():
            run.say(
                run.turn_id,
                (
                    "A focus cannot be given to remote compaction: compacting locally "
                    "so the summary follows it."
                ),
            )
        else:
            try:
                return await run_remote(run, history, budget, context)
            except ProviderError as error:
                # The local summary would ask the same server: no fallback when it is down.
                if not config.remote_fallback_to_local or server_unreachable(error):
                    raise ProviderError(
                        error.category, error.message, code="remote_only"
                    ) from error
                remote_failure = error
                run.say(
                    run.turn_id,
                    (
                        f"Remote compaction failed ({error.message}); "
                        "compacting locally instead."
                    ),
                )
    result = await run_local(run, history, counts, budget, context, focus, model)
    if remote_failure is not None:
        result.strategy = "remote_then_local"
        result.remote_form = run.remote_form
    return result


def prune_to_room(
    history: list[Item],
    counts: ItemCounts,
    budget: CompactionBudget,
    counter: TokenCounter,
    pinned_calls: Callable[[], frozenset[str]],
) -> PathResult | None:
    """The history with old tool outputs pruned, when that alone fits the history's room;
    None when it does not (the model summarises instead) or there is nothing to prune."""
    if budget.history_room is None:
        return None
    found = prune_tool_outputs(
        history, counts.every(), count_item=counter.count_item, keep=pinned_calls(),
    )
    if found is None:
        return None
    pruned, new_counts = found
    if sum(new_counts) > budget.history_room:
        return None  # not enough on its own: the model summarises instead
    return PathResult(strategy="prune", items=pruned.items, pruned_outputs=pruned.outputs)
