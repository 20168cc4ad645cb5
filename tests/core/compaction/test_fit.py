"""Fitting items into a number of tokens (app/core/compaction/fit.py): how close the fitter may
come to its room, what leaves first, and what it counts, each at its boundary (issue 40)."""

from __future__ import annotations

from app.core.compaction.fit import fit_items, remove_with_partner, truncate_text
from app.core.compaction.prompts import summary_text
from app.core.items import Item, function_call, function_call_output, message_text, user_message
from app.core.tokens.counter import approx_tokens


def never(_item: Item) -> bool:
    return False


def messages(count: int) -> list[Item]:
    return [user_message(f"message {n}") for n in range(count)]


def test_items_that_fill_the_room_exactly_are_left_as_they_are() -> None:
    items = messages(3)
    fitted = fit_items(items, [10, 10, 10], 30, protect=never)
    assert (fitted.items, fitted.counts, fitted.dropped, fitted.truncated) == (
        items, [10, 10, 10], 0, 0
    )


def test_one_token_over_the_room_drops_the_oldest() -> None:
    items = messages(3)
    fitted = fit_items(items, [10, 10, 10], 29, protect=never)
    assert (fitted.items, fitted.counts, fitted.dropped, fitted.truncated) == (
        items[1:], [10, 10], 1, 0
    )
    fitted = fit_items(items, [10, 10, 10], 19, protect=never)
    assert (fitted.items, fitted.counts, fitted.dropped) == (items[2:], [10], 2)


def test_a_protected_item_leaves_last_and_the_next_oldest_goes_first() -> None:
    items = messages(3)
    fitted = fit_items(items, [10, 10, 10], 25, protect=lambda item: item is items[0])
    assert (fitted.items, fitted.dropped) == ([items[0], items[2]], 1)


def test_a_call_leaves_with_its_output() -> None:
    items = [
        function_call("read_file", "{}", "c1"),
        user_message("between"),
        function_call_output("c1", "content"),
        user_message("last"),
    ]
    fitted = fit_items(items, [10, 10, 10, 10], 39, protect=never)
    assert (fitted.items, fitted.counts, fitted.dropped) == (items[1:2] + items[3:], [10, 10], 2)


def test_a_leading_output_whose_call_is_gone_leaves_even_when_everything_fits() -> None:
    items = [function_call_output("gone", "content"), *messages(2)]
    fitted = fit_items(items, [10, 10, 10], 1_000, protect=never)
    assert (fitted.items, fitted.counts, fitted.dropped) == (items[1:], [10, 10], 1)


def test_items_not_counted_yet_are_counted_only_when_they_leave() -> None:
    items = messages(3)
    counted: list[Item] = []

    def count_item(item: Item) -> int:
        counted.append(item)
        return 8

    # The server said 25 tokens; the first item's size is learnt as it leaves.
    fitted = fit_items(items, [-1, -1, 10], 20, protect=never, count_item=count_item, total=25)
    assert (fitted.items, fitted.counts, fitted.dropped) == (items[1:], [-1, 10], 1)
    assert counted == [items[0]]
    # One token less room: the second must go too, counted then.
    fitted = fit_items(items, [-1, -1, 10], 16, protect=never, count_item=count_item, total=25)
    assert (fitted.items, fitted.dropped) == (items[2:], 2)


def test_without_a_total_every_item_not_counted_yet_is_counted_first() -> None:
    items = messages(3)
    fitted = fit_items(items, [-1, 0, 5], 1_000, protect=never, count_item=lambda _item: 8)
    assert fitted.counts == [8, 0, 5]  # a zero is a count, not a missing one
    fitted = fit_items(items, [-1, 0, 5], 1_000, protect=never)  # counted by the text
    expected = approx_tokens(message_text(items[0])) + 4
    assert fitted.counts == [expected, 0, 5]


def test_the_newest_message_is_shortened_to_the_room_not_dropped() -> None:
    items = [user_message("x" * 4_000)]  # 1 000 tokens
    fitted = fit_items(items, [1_004], 500, protect=never)
    assert fitted.dropped == 0 and fitted.truncated == 1
    (item,) = fitted.items
    assert fitted.counts == [approx_tokens(message_text(item)) + 4]
    assert 400 < fitted.counts[0] <= 500
    assert "tokens truncated" in message_text(item)


def test_a_protected_summary_is_shortened_in_its_body_and_keeps_its_prefix() -> None:
    summary = user_message(summary_text("s" * 4_000))
    items = [summary, user_message("last")]
    fitted = fit_items(items, [1_050, 5], 400, protect=lambda item: item is summary)
    assert fitted.dropped == 0 and fitted.truncated == 1
    text = message_text(fitted.items[0])
    assert text.startswith(summary_text("")) and "tokens truncated" in text
    assert sum(fitted.counts) <= 400


def test_truncate_text_stops_at_exactly_the_tokens_asked() -> None:
    def count(text: str) -> int:
        return len(text)  # a token a character: denser than the 4 bytes a token estimate

    result = truncate_text("y" * 1_000, 100, count)
    assert len(result) <= 100
    assert truncate_text("y" * 100, 100, count) == "y" * 100  # fits exactly: untouched


def test_removing_an_item_counts_what_it_held() -> None:
    items = [function_call("f", "{}", "c1"), function_call_output("c1", "out"), *messages(1)]
    counts = [3, -1, 5]
    assert remove_with_partner(items, 0, counts, lambda _item: 7) == (2, 10)
    assert counts == [5] and len(items) == 1
    items = [*messages(2)]
    counts = [-1, 5]
    assert remove_with_partner(items, 0, counts) == (1, 0)  # unknown and not counted: nothing
