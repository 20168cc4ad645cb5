"""The byte rule of spec section 3: a token estimate of ``ceil(utf-8 bytes / 4)``, the
middle truncation that budgets use, and what an item costs in the context given a count."""

from __future__ import annotations

import math
from collections.abc import Callable

from ..items import Item, attachment_tokens, item_count_parts

BYTES_PER_TOKEN = 4
# Per-item framing (role, separators) the model also pays for; a small constant like Codex's.
ITEM_OVERHEAD_TOKENS = 4


def approx_tokens(text: str) -> int:
    """Token estimate of ``text``: ``ceil(utf-8 bytes / 4)`` (spec section 3)."""
    return math.ceil(_utf8_len(text) / BYTES_PER_TOKEN)


def truncate_middle(text: str, max_tokens: int) -> tuple[str, int]:
    """Keep the head and tail of ``text`` within ``max_tokens`` (estimated), Codex's rule.

    Returns ``(text, 0)`` when it fits. Otherwise the head and tail halves of ``max_tokens * 4``
    bytes, cut on character boundaries, around the marker ``…N tokens truncated…`` (no line
    breaks added), where N is the
    estimated number of tokens removed; returns ``(new_text, N)``.
    """
    data = text.encode("utf-8", "surrogatepass")
    total_tokens = math.ceil(len(data) / BYTES_PER_TOKEN)
    if total_tokens <= max_tokens:
        return text, 0
    if max_tokens <= 0:
        return _marker(total_tokens), total_tokens
    budget = max_tokens * BYTES_PER_TOKEN
    head_end = _char_start_at_or_before(data, budget // 2)
    tail_start = _char_start_at_or_after(data, len(data) - (budget - budget // 2))
    removed = math.ceil((tail_start - head_end) / BYTES_PER_TOKEN)
    head = data[:head_end].decode("utf-8", "surrogatepass")
    tail = data[tail_start:].decode("utf-8", "surrogatepass")
    # Joined with nothing between, as Codex 0.169.0 sends it.
    return f"{head}{_marker(removed)}{tail}", removed


def _marker(removed_tokens: int) -> str:
    return f"…{removed_tokens} tokens truncated…"


def _utf8_len(text: str) -> int:
    # surrogatepass: a lone surrogate (possible in model-sent JSON) must not make counting raise.
    return len(text.encode("utf-8", "surrogatepass"))


def _is_continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def _char_start_at_or_before(data: bytes, index: int) -> int:
    while 0 < index < len(data) and _is_continuation(data[index]):
        index -= 1
    return index


def _char_start_at_or_after(data: bytes, index: int) -> int:
    while 0 < index < len(data) and _is_continuation(data[index]):
        index += 1
    return index



def item_tokens(item: Item, count: Callable[[str], int]) -> int:
    """Tokens an item costs in the context: its readable text counted by ``count``, its
    encrypted content estimated from its length, plus a small per-item overhead."""
    readable, opaque = item_count_parts(item)
    images = attachment_tokens(item) if item.get("role") == "user" else 0
    return count(readable) + approx_tokens(opaque) + images + ITEM_OVERHEAD_TOKENS
