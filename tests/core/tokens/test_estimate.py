"""The byte rule (spec section 3): estimates, middle truncation by it, and an item's cost."""

from __future__ import annotations

from app.core import items
from app.core.tokens.estimate import (
    ITEM_OVERHEAD_TOKENS,
    approx_tokens,
    item_tokens,
    truncate_middle,
)


def test_the_estimate_is_utf8_bytes_over_four_rounded_up() -> None:
    assert approx_tokens("") == 0
    assert approx_tokens("abcd") == 1
    assert approx_tokens("abcde") == 2
    assert approx_tokens("éé") == 1  # four bytes
    assert approx_tokens("日本") == 2  # six bytes
    assert approx_tokens("\ud800") == 1  # a lone surrogate is counted, not an error


def test_a_text_that_fits_is_returned_whole() -> None:
    assert truncate_middle("x" * 40, 10) == ("x" * 40, 0)


def test_a_long_text_keeps_its_head_and_tail_around_the_marker() -> None:
    text = "H" * 100 + "m" * 800 + "T" * 100
    cut, removed = truncate_middle(text, 50)  # 200 bytes kept, 100 each side
    assert cut == "H" * 100 + "…200 tokens truncated…" + "T" * 100
    assert removed == 200


def test_the_cut_never_splits_a_character() -> None:
    text = "é" * 1000  # two bytes each
    cut, removed = truncate_middle(text, 25)  # 50 bytes each side: 25 characters
    head, tail = cut.split(f"…{removed} tokens truncated…")
    assert head == "é" * 25 and tail == "é" * 25
    assert removed == 475
    assert truncate_middle("abcdefgh", 0) == ("…2 tokens truncated…", 2)


def test_an_item_costs_its_counted_text_its_opaque_part_and_the_overhead() -> None:
    message = items.user_message("hello there")
    assert item_tokens(message, len) == len("hello there") + ITEM_OVERHEAD_TOKENS
    reasoning = {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "why"}],
        "encrypted_content": "A" * 40,
    }
    # The readable summary goes through the count; the encrypted part by the byte rule.
    assert item_tokens(reasoning, lambda text: 100 * len(text)) == 300 + 10 + ITEM_OVERHEAD_TOKENS
