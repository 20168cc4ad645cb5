"""Making a list of items fit a number of tokens: drop the oldest, then shorten the largest.

Used twice: to fit a compaction request into the window beside the summary's budget, and to fit
the rebuilt history into the target. Calls leave with their outputs (a call without its output,
or an output without its call, is refused by the API), and a protected item (the earlier
summary) leaves last.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..items import Item, item_text_for_count, item_type, message_text
from ..tokens.counter import ITEM_OVERHEAD_TOKENS, approx_tokens, truncate_middle
from .prompts import is_summary_message, summary_prefix

# Shortening an item below this many tokens leaves nothing worth reading: drop it instead.
MIN_SHORTENED_TOKENS = 32


@dataclass(frozen=True)
class Fitted:
    items: list[Item]
    counts: list[int]
    dropped: int
    truncated: int


def truncate_text(text: str, max_tokens: int, count: Callable[[str], int]) -> str:
    """``text`` middle-truncated (Codex's marker) until ``count`` says it holds ``max_tokens``.

    The cut is made in bytes (4 a token, the spec's rule); text that tokenises denser than that
    (CJK, digits) is cut again, proportionally, until the real count fits."""
    limit = max_tokens
    result, _ = truncate_middle(text, limit)
    for _ in range(8):
        tokens = count(result)
        if tokens <= max_tokens or limit <= 0:
            break
        limit = max(0, int(limit * max_tokens / tokens) - 1)
        result, _ = truncate_middle(text, limit)
    return result


def shorten_item(item: Item, max_tokens: int, count: Callable[[str], int]) -> Item | None:
    """A copy of ``item`` with its text middle-truncated to about ``max_tokens``; None for items
    whose content cannot be cut (encrypted reasoning, compaction items, calls)."""
    kind = item_type(item)
    if kind == "message" and is_summary_message(item):
        # The prefix is how the next compaction recognises a summary: only the body is cut.
        head = summary_prefix() + "\n"
        body = message_text(item)[len(head) :]
        body = truncate_text(body, max(1, max_tokens - count(head)), count)
        return {**item, "content": [{"type": "input_text", "text": head + body}]}
    if kind == "message":
        text = truncate_text(message_text(item), max_tokens, count)
        part_type = "output_text" if item.get("role") == "assistant" else "input_text"
        part: dict[str, object] = {"type": part_type, "text": text}
        if part_type == "output_text":
            part["annotations"] = []
        return {**item, "content": [part]}
    if kind == "function_call_output":
        output = item.get("output", "")
        text = output if isinstance(output, str) else str(output)
        return {**item, "output": truncate_text(text, max_tokens, count)}
    return None


def fit_items(
    items: list[Item],
    counts: list[int],
    room: int,
    *,
    protect: Callable[[Item], bool],
    count: Callable[[str], int] = approx_tokens,
    count_item: Callable[[Item], int] | None = None,
    total: int | None = None,
) -> Fitted:
    """``items`` reduced to at most ``room`` tokens: oldest unprotected items first (calls with
    their outputs), then the largest remaining items middle-truncated. The newest item is
    shortened rather than dropped, so what the user said last always reaches the model.

    With ``total`` (what the items are known to hold, e.g. the server's usage), ``counts`` may
    say -1 for items not counted yet: only those that leave are counted, so fitting a long
    resumed history counts the oldest few items, not all of them."""
    items = list(items)
    counts = list(counts)

    def counted(item: Item) -> int:
        return count_item(item) if count_item else _count(item, count)

    if total is None:
        counts = [tokens if tokens >= 0 else counted(item) for item, tokens in zip(items, counts)]
        total = sum(counts)
    dropped = truncated = 0
    while total > room:
        index = next(
            (i for i in range(len(items) - 1) if not protect(items[i])),
            None,
        )
        if index is None:
            break
        removed, tokens = remove_with_partner(items, index, counts, counted)
        total -= tokens
        dropped += removed
    # Leading outputs whose calls were dropped would be refused by the API.
    while items and item_type(items[0]) == "function_call_output":
        removed, tokens = remove_with_partner(items, 0, counts, counted)
        total -= tokens
        dropped += removed
    if total > room:
        # Shortening chooses the largest items: every count is needed from here on.
        counts = [tokens if tokens >= 0 else counted(item) for item, tokens in zip(items, counts)]
    while total > room and items:
        step = _next_cut(items, counts, total - room, protect, count, count_item)
        if step is None:
            break  # nothing left that can be cut
        index, shortened, new_count = step
        if shortened is None:
            removed, tokens = remove_with_partner(items, index, counts)
            total -= tokens
            dropped += removed
            continue
        total += new_count - counts[index]
        items[index] = shortened
        counts[index] = new_count
        truncated += 1
    return Fitted(items=items, counts=counts, dropped=dropped, truncated=truncated)


def _next_cut(
    items: list[Item],
    counts: list[int],
    excess: int,
    protect: Callable[[Item], bool],
    count: Callable[[str], int],
    count_item: Callable[[Item], int] | None,
) -> tuple[int, Item | None, int] | None:
    """The next cut that frees room: ``(index, shortened item, its count)``, or ``(index,
    None, 0)`` to drop the item. Unprotected items first, largest first; an item too large to
    shorten usefully is dropped unless it is the newest; protected items are only shortened."""
    last = len(items) - 1

    def order(index: int) -> tuple[bool, int]:
        return (protect(items[index]), -counts[index])

    for index in sorted(range(len(items)), key=order):
        protected = protect(items[index])
        allowed = counts[index] - ITEM_OVERHEAD_TOKENS - excess
        if allowed < MIN_SHORTENED_TOKENS and index != last and not protected:
            return index, None, 0
        shortened = shorten_item(items[index], max(MIN_SHORTENED_TOKENS, allowed), count)
        if shortened is None:
            if index != last and not protected:
                return index, None, 0
            continue
        new_count = count_item(shortened) if count_item else _count(shortened, count)
        if new_count < counts[index]:
            return index, shortened, new_count
    return None


def _count(item: Item, count: Callable[[str], int]) -> int:
    return count(item_text_for_count(item)) + ITEM_OVERHEAD_TOKENS


def remove_with_partner(
    items: list[Item],
    index: int,
    counts: list[int] | None = None,
    count_item: Callable[[Item], int] | None = None,
) -> tuple[int, int]:
    """Remove ``items[index]`` and the call or output paired with it (and their ``counts``,
    when given, a -1 among them counted by ``count_item``); returns how many items went and
    the tokens they counted."""
    removed = tokens = 0
    for gone in sorted(_with_partner(items, index), reverse=True):
        if counts is not None:
            known = counts.pop(gone)
            if known < 0 and count_item is not None:
                known = count_item(items[gone])
            tokens += max(0, known)
        del items[gone]
        removed += 1
    return removed, tokens


def _with_partner(items: list[Item], index: int) -> list[int]:
    """``index`` and the index of the call or output paired with it, if any."""
    item = items[index]
    kind = item_type(item)
    if kind not in ("function_call", "function_call_output"):
        return [index]
    partner_kind = "function_call_output" if kind == "function_call" else "function_call"
    call_id = item.get("call_id")
    for other, candidate in enumerate(items):
        if (
            other != index
            and item_type(candidate) == partner_kind
            and candidate.get("call_id") == call_id
        ):
            return [index, other]
    return [index]
