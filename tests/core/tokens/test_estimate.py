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


def test_a_cut_inside_a_character_moves_back_for_the_head_and_forward_for_the_tail() -> None:
    # "a", a hundred two-byte characters, "b": the head's 10 bytes end inside the fifth "é"
    # (it stops before it), the tail's 10 bytes begin inside one (it starts after it).
    text = "a" + "é" * 100 + "b"
    assert truncate_middle(text, 5) == ("aéééé…46 tokens truncated…ééééb", 46)


def test_one_token_keeps_two_bytes_each_side() -> None:
    assert truncate_middle("abcdefghij", 1) == ("ab…2 tokens truncated…ij", 2)
    assert truncate_middle("abcdefghij", 0) == ("…3 tokens truncated…", 3)


def test_lone_surrogates_are_cut_and_kept_as_they_came() -> None:
    # Possible in JSON a model sends: counting and cutting must not raise.
    text = "\ud800" + "a" * 100 + "\udfff"
    assert truncate_middle(text, 5) == (
        "\ud800" + "a" * 7 + "…22 tokens truncated…" + "a" * 7 + "\udfff",
        22,
    )


def test_a_users_image_is_counted_by_its_tokens_and_only_a_users() -> None:
    image = {"type": items.ATTACHMENT, "kind": "image", "name": "a.png", "tokens": 765}
    user = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "Look."}, image],
    }
    assistant = {**user, "role": "assistant"}
    assert item_tokens(user, len) - item_tokens(assistant, len) == 765
    assert item_tokens(user, len) > 765
