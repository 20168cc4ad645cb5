"""The local path: the model writes the summary (spec section 3, steps 2-5), with room for it.

Codex sends the history plus the prompt and, on a context-window error, drops the oldest item
and tries again until the *prompt* fits: on a small window the answer then has no room and the
summary comes back cut at a few tokens. Coco fits the request first so that the prompt **plus
the summary's budget** fits the window, passes that budget as the output limit, and does not
accept a fragment as a summary: one retry with more room, then the caller keeps what the last
summary said. A junk summary (mostly repetition, or Coco's wrapper, the instructions or the
prompt given back: ``junk_summary``) is treated alike: Coco's wrapper stripped, one retry told
what was wrong, then the caller installs no summary (or keeps the earlier one).

Nothing here touches the session: it works on a copy of the history and reports through
callbacks, so a cancelled or failed compaction leaves nothing behind.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Protocol

from ...attachments.wire import stand_in_items
from ...items import Item, last_assistant_text, user_message
from ...providers.base import ModelProvider, ModelRequest, ProviderError, Usage
from ...providers.sampling import RetryNotice, sample
from ..budget import CompactionBudget, is_fragment, request_room
from ..fit import Fitted, fit_items, remove_with_partner
from ..junk_summary import Junk, check_summary, retry_note
from ..prompts import is_summary_message

# Sent to the offline demo model only (CoreConfig.demo_hints): it tells a compaction request
# from a turn without guessing. A real provider has no use for it.
COMPACTION_HEADERS = {"x-coco-request-kind": "compaction"}
# A request that still overflowed after fitting is refitted into this share of its room: the
# server's tokenizer counted more than Coco's.
OVERFLOW_REFIT_SHARE = 0.75
MAX_REFITS = 4


class ContextTooLarge(Exception):
    """Nothing is left to trim: not even the prompt fits the model's window."""


class Counter(Protocol):
    def count(self, text: str) -> int: ...

    def count_item(self, item: Item) -> int: ...


@dataclass(frozen=True)
class LocalSummary:
    summary: str
    usage: Usage | None
    trimmed: int  # items left out of the request so it fits (with their paired outputs)
    truncated: int  # items shortened in the request copy so it fits
    cut_short: bool  # still a fragment after the retry with more room
    output_limit: int | None  # the limit the accepted attempt ran with
    junk: Junk | None = None  # still junk after the retry: why (the summary is not usable)


def drop_oldest(items: list[Item]) -> int:
    """Remove the oldest item (with the output paired to a call); returns how many went."""
    return remove_with_partner(items, 0)[0]


@dataclass(frozen=True)
class ItemCounts:
    """The token counts of the history being compacted, counted only as far as a step needs:
    ``total`` is what it is already known to hold (the usage the compaction started from);
    ``known`` gives each item's count, -1 where it has not been counted yet (a resumed
    history counts lazily); ``every`` counts them all."""

    total: int
    known: list[int]
    every: Callable[[], list[int]]


@dataclass(frozen=True)
class LocalCompaction:
    """One local compaction request to make: the history with its per-item counts, the
    prompt, the budget, and how to reach and report (``summarise`` runs it)."""

    provider: ModelProvider
    model: str
    instructions: str
    history: list[Item]
    item_tokens: ItemCounts
    prompt: str
    prompt_cache_key: str
    budget: CompactionBudget
    counter: Counter
    reasoning: bool
    max_retries: int
    base_delay: float
    on_retry: RetryNotice
    on_trim: Callable[[int], None]
    on_delta: Callable[[str, str], None] | None = None
    extra_headers: dict[str, str] | None = None

    @property
    def prompt_cost(self) -> int:
        return self.counter.count(self.prompt) + self.counter.count(self.instructions) + 8

    async def summarise(self) -> LocalSummary:
        """The summary within the budget; a fragment is retried once with more room, a junk
        summary once with a word on what was wrong, and the better of the two is returned: a
        usable one before junk, then the longer (``cut_short`` and ``junk`` say what it is)."""
        output_limit = self.budget.summary
        asked = self
        best: LocalSummary | None = None
        for attempt in range(2):
            result = await asked._once(output_limit)
            if not result.cut_short and result.junk is None:
                return result
            if best is None or self._rank(result) > self._rank(best):
                best = result
            if result.junk is not None:
                # The same request, told what was wrong (its cost counted in the fit).
                asked = replace(self, prompt=self.prompt + retry_note(result.junk))
            elif attempt == 0 and output_limit is not None:
                output_limit = self._more_room(output_limit)
        assert best is not None
        return best

    def _rank(self, result: LocalSummary) -> tuple[bool, int]:
        return result.junk is None, self.counter.count(result.summary)

    def _more_room(self, output_limit: int) -> int:
        """The retry's output limit: twice the first, as far as the window allows."""
        room = request_room(self.budget, 0)
        if room is None:
            return output_limit * 2
        return max(output_limit, min(output_limit * 2, room - self.prompt_cost))

    def _fit(
        self, items: list[Item], counts: list[int], room: int, total: int | None = None
    ) -> Fitted:
        return fit_items(
            items,
            counts,
            max(0, room - self.prompt_cost),
            protect=_protected,
            count=self.counter.count,
            count_item=self.counter.count_item,
            total=total,
        )

    async def _once(self, output_limit: int | None) -> LocalSummary:
        # Reasoning models spend part of the output limit thinking: give them that much again.
        wire_limit = (
            output_limit * 2 if (output_limit is not None and self.reasoning) else output_limit
        )
        room = request_room(self.budget, wire_limit)
        items = list(self.history)
        trimmed = truncated = refits = 0
        if room is not None:
            fitted = self._fit(items, self.item_tokens.known, room, self.item_tokens.total)
            items, trimmed, truncated = fitted.items, fitted.dropped, fitted.truncated
            if trimmed or truncated:
                self.on_trim(trimmed + truncated)
        while True:
            request = ModelRequest(
                model=self.model,
                instructions=self.instructions,
                # Attachments named by their stand-ins: the summary says they existed.
                input=[*stand_in_items(items), user_message(self.prompt)],
                tools=[],
                prompt_cache_key=self.prompt_cache_key,
                max_output_tokens=wire_limit,
                send_empty_tools=True,  # as Codex 0.169.0: "tools": [], "tool_choice": "auto"
            )
            try:
                attempt = await sample(
                    self.provider,
                    request,
                    max_retries=self.max_retries,
                    base_delay=self.base_delay,
                    on_retry=self.on_retry,
                    on_delta=self.on_delta,
                    extra_headers=self.extra_headers,
                )
            except ProviderError as error:
                if error.category != "context_overflow":
                    raise
                if room is None:
                    # Unknown window: Codex's rule, drop the oldest item and try again.
                    if len(items) <= 1:
                        raise ContextTooLarge(error.message) from error
                    trimmed += drop_oldest(items)
                    self.on_trim(trimmed)
                    continue
                refits += 1
                if refits > MAX_REFITS or not items:
                    raise ContextTooLarge(error.message) from error
                room = int(room * OVERFLOW_REFIT_SHARE)
                fitted = self._fit(items, [self.counter.count_item(i) for i in items], room)
                items = fitted.items
                trimmed += fitted.dropped
                truncated += fitted.truncated
                if not (fitted.dropped or fitted.truncated):
                    # Coco's count says it fits, the server says not: the oldest item goes.
                    if len(items) <= 1:
                        raise ContextTooLarge(error.message) from error
                    trimmed += drop_oldest(items)
                self.on_trim(trimmed + truncated)
                continue
            checked = check_summary(
                last_assistant_text(attempt.items) or "",
                sources=(self.instructions, self.prompt),
            )
            summary = checked.text
            tokens = self.counter.count(summary) if summary else 0
            return LocalSummary(
                summary=summary,
                usage=attempt.usage,
                trimmed=trimmed,
                truncated=truncated,
                cut_short=checked.junk is None
                and is_fragment(tokens, output_limit, attempt.stop_reason == "length"),
                output_limit=output_limit,
                junk=checked.junk,
            )


def _protected(item: Item) -> bool:
    """The earlier summary carries everything before it: the last thing to leave the request."""
    return is_summary_message(item)
