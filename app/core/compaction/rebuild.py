"""Rebuilding the history after a local compaction (spec section 3, steps 6 and 7)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from ..items import Item, is_injected_context, is_message, message_text, user_message
from ..tokens import ITEM_OVERHEAD_TOKENS, approx_tokens
from .budget import KEPT_USER_MESSAGE_CEILING
from .fit import MIN_SHORTENED_TOKENS, truncate_text
from .prompts import is_summary_message, summary_text

# Codex's budget for user messages carried over verbatim (the ceiling on large windows).
KEPT_USER_MESSAGE_TOKENS = KEPT_USER_MESSAGE_CEILING


@dataclass(frozen=True)
class RebuiltHistory:
    items: list[Item]
    kept_user_messages: int
    kept_truncated: bool
    shrunk: Shrunk = field(default_factory=lambda: Shrunk())


def _is_real_user_message(item: Item) -> bool:
    return (
        is_message(item, "user") and not is_injected_context(item) and not is_summary_message(item)
    )


def real_user_messages(history: list[Item]) -> list[str]:
    """Texts of the user's own messages: no injected context blocks, no earlier summaries."""
    return [message_text(item) for item in history if _is_real_user_message(item)]


def real_user_messages_newest_first(history: list[Item]) -> Iterator[str]:
    """:func:`real_user_messages` from the newest back, read only as far as the caller goes:
    choosing kept messages is a pass over the kept ones, not over the whole history."""
    for index in range(len(history) - 1, -1, -1):
        item = history[index]
        if _is_real_user_message(item):
            yield message_text(item)


def select_kept_messages(
    messages: list[str],
    budget: int = KEPT_USER_MESSAGE_TOKENS,
    count: Callable[[str], int] = approx_tokens,
) -> tuple[list[str], bool]:
    """Newest first within ``budget`` tokens; the first that does not fit is middle-truncated
    to what remains and the walk stops. Returned in chronological order."""
    return select_kept_newest_first(reversed(messages), budget, count)


def select_kept_newest_first(
    newest_first: Iterable[str],
    budget: int = KEPT_USER_MESSAGE_TOKENS,
    count: Callable[[str], int] = approx_tokens,
) -> tuple[list[str], bool]:
    """:func:`select_kept_messages` for messages given newest first (read lazily)."""
    kept: list[str] = []
    remaining = budget
    truncated = False
    for text in newest_first:
        if remaining <= 0:
            break
        cost = count(text)
        if cost <= remaining:
            kept.append(text)
            remaining -= cost
            continue
        if remaining >= MIN_SHORTENED_TOKENS or not kept:
            kept.append(truncate_text(text, remaining, count))
            truncated = True
        break
    kept.reverse()
    return kept, truncated


@dataclass(frozen=True)
class Shrunk:
    """What checking the rebuilt history against the target cut (item 4 of the guarantee)."""

    dropped_messages: int = 0
    truncated_messages: int = 0
    summary_truncated: bool = False

    @property
    def any(self) -> bool:
        return bool(self.dropped_messages or self.truncated_messages or self.summary_truncated)


def assemble(kept: list[str], summary: str | Item, initial_context: list[Item]) -> list[Item]:
    """Kept user messages, the initial context just before the last of them (so the summary
    stays last, as Codex 0.169.0 sends it for every compaction), then the summary: a summary
    message's text, or a remote ``compaction`` item in its place."""
    items: list[Item] = [user_message(text) for text in kept]
    if initial_context:
        position = len(items) - 1 if items else 0
        items[position:position] = list(initial_context)
    items.append(user_message(summary) if isinstance(summary, str) else summary)
    return items


def shrink_to_room(
    kept: list[str],
    summary: str,
    context_tokens: int,
    room: int,
    count: Callable[[str], int],
) -> tuple[list[str], str, Shrunk]:
    """Fit kept messages + the summary message (+ ``context_tokens`` of context blocks) into
    ``room``: fewer kept messages (oldest first), then the last kept message middle-truncated,
    then the summary's body middle-truncated (its prefix stays: it is how a summary is
    recognised). Returns what is left and what was cut."""
    kept = list(kept)
    costs = [count(text) + ITEM_OVERHEAD_TOKENS for text in kept]
    summary_cost = count(summary_text(summary)) + ITEM_OVERHEAD_TOKENS
    total = sum(costs) + summary_cost + context_tokens
    dropped = truncated = 0
    summary_cut = False
    while total > room and len(kept) > 1:
        total -= costs.pop(0)
        kept.pop(0)
        dropped += 1
    if total > room and kept:
        allowed = costs[0] - ITEM_OVERHEAD_TOKENS - (total - room)
        total -= costs.pop(0)
        # The user's last words stay, at least as a head and tail around the marker.
        kept[0] = truncate_text(kept[0], max(MIN_SHORTENED_TOKENS, allowed), count)
        total += count(kept[0]) + ITEM_OVERHEAD_TOKENS
        truncated += 1
    if total > room:
        allowed = max(MIN_SHORTENED_TOKENS, count(summary) - (total - room))
        summary = truncate_text(summary, allowed, count)
        summary_cut = True
    return kept, summary, Shrunk(dropped, truncated, summary_cut)


def build_compacted_history(
    history: list[Item],
    summary: str,
    *,
    initial_context: list[Item] | None = None,
    budget: int = KEPT_USER_MESSAGE_TOKENS,
    room: int | None = None,
    count: Callable[[str], int] = approx_tokens,
) -> RebuiltHistory:
    """Kept user messages + the summary message (a user message, last), the initial context
    just before the last kept message. With ``room`` (tokens the whole rebuilt history may
    take), the result is checked and shrunk to fit (``RebuiltHistory.shrunk`` says what went).
    """
    kept, truncated = select_kept_newest_first(
        real_user_messages_newest_first(history), budget, count
    )
    context = list(initial_context or [])
    shrunk = Shrunk()
    if room is not None:
        context_tokens = sum(count(message_text(i)) + ITEM_OVERHEAD_TOKENS for i in context)
        kept, summary, shrunk = shrink_to_room(kept, summary, context_tokens, room, count)
    return RebuiltHistory(
        items=assemble(kept, summary_text(summary), context),
        kept_user_messages=len(kept),
        kept_truncated=truncated or shrunk.truncated_messages > 0,
        shrunk=shrunk,
    )


def filter_remote_output(output: list[Item]) -> list[Item]:
    """Keep what the remote compact endpoint returned that belongs in history: user and
    assistant messages and compaction items; drop developer messages, injected context,
    reasoning and tool traffic (spec section 4)."""
    kept: list[Item] = []
    for item in output:
        kind = item.get("type", "message" if "role" in item else "")
        if kind in ("compaction", "compaction_summary") or (
            kind == "message"
            and item.get("role") in ("user", "assistant")
            and not is_injected_context(item)
        ):
            kept.append(item)
    return kept
