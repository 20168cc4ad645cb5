"""Fitting items into a number of tokens (app/core/compaction/fit.py): how close the fitter may
come to its room, what leaves first, and what it counts, each at its boundary (issue 40)."""

from __future__ import annotations

from app.core.compaction.fit import (
    Fitted,
    fit_items,
    remove_with_partner,
    shorten_item,
    truncate_text,
)
from app.core.compaction.prompts import is_summary_message, summary_text
from app.core.items import Item, function_call, function_call_output, message_text, user_message
from app.core.tokens.counter import approx_tokens
from app.core.tokens.estimate import truncate_middle


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


# ------------------------------------------------------------------ shortening one item


def test_an_assistant_message_is_shortened_as_output_text_with_its_annotations() -> None:
    item = {"type": "message", "role": "assistant", "id": "msg_1",
            "content": [{"type": "output_text", "text": "a" * 4_000, "annotations": []}]}
    shortened = shorten_item(item, 100, approx_tokens)
    assert shortened is not None
    assert shortened == {
        "type": "message", "role": "assistant", "id": "msg_1",
        "content": [{"type": "output_text", "text": truncate_text("a" * 4_000, 100, approx_tokens),
                     "annotations": []}],
    }


def test_a_user_message_is_shortened_as_input_text() -> None:
    shortened = shorten_item(user_message("u" * 4_000), 100, approx_tokens)
    assert shortened == {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": truncate_text("u" * 4_000, 100, approx_tokens)}
    ]}


def test_a_tool_output_is_shortened_in_its_output() -> None:
    output = function_call_output("c1", "o" * 4_000)
    assert shorten_item(output, 100, approx_tokens) == function_call_output(
        "c1", truncate_text("o" * 4_000, 100, approx_tokens)
    )
    listed = {"type": "function_call_output", "call_id": "c2", "output": ["x" * 800]}
    assert shorten_item(listed, 10, approx_tokens) == {
        "type": "function_call_output", "call_id": "c2",
        "output": truncate_text(str(["x" * 800]), 10, approx_tokens),
    }
    empty = {"type": "function_call_output", "call_id": "c3"}
    assert shorten_item(empty, 10, approx_tokens) == {**empty, "output": ""}
    assert shorten_item(function_call("f", "{}", "c4"), 10, approx_tokens) is None


def test_a_summary_keeps_its_prefix_and_at_least_a_token_of_its_body() -> None:
    body = "b" * 4_000
    summary = user_message(summary_text(body))
    head = summary_text("")
    for room in (0, approx_tokens(head) + 1):
        shortened = shorten_item(summary, room, approx_tokens)
        assert shortened is not None
        assert message_text(shortened) == head + truncate_text(body, 1, approx_tokens)


# ------------------------------------------------------------------ the proportional re-cut


TEXT = "t" * 4_000


def test_a_cut_that_fits_at_once_is_kept() -> None:
    def count(text: str) -> int:
        return 100 if "truncated" in text else 1_000

    assert truncate_text(TEXT, 100, count) == truncate_middle(TEXT, 100)[0]


def test_the_re_cut_gives_up_after_eight_tries() -> None:
    # Always one token over: 100 → 98 → 96 → … → 84 tokens (a proportion, less one).
    assert truncate_text(TEXT, 100, lambda _text: 101) == truncate_middle(TEXT, 84)[0]


def test_the_re_cut_goes_down_to_the_marker_alone() -> None:
    # 100 → 1 (10 000 / 4 000, less one) → 0: only the marker is left.
    assert truncate_text(TEXT, 100, lambda _text: 4_000) == truncate_middle(TEXT, 0)[0]


# ------------------------------------------------------------------ which item is cut


def test_the_unprotected_newest_is_cut_first_then_the_largest_protected() -> None:
    summary = user_message(summary_text("s" * 4_000))
    pinned = user_message("p" * 2_000)
    newest = user_message("n" * 400)
    items = [summary, pinned, newest]
    fitted = fit_items(items, [-1, -1, -1], 1_000, protect=lambda item: item is pinned or (
        is_summary_message(item)
    ))
    assert fitted.dropped == 0 and fitted.truncated == 2
    assert fitted.items[1] is pinned  # the smaller protected item is not touched
    assert fitted.items[0] is not summary and fitted.items[2] is not newest
    assert sum(fitted.counts) <= 1_000


def test_a_protected_item_is_shortened_never_dropped_even_under_32_tokens() -> None:
    summary = user_message(summary_text("s" * 400))
    newest = user_message("n" * 4_000)
    fitted = fit_items([summary, newest], [-1, -1], 50, protect=is_summary_message)
    assert fitted.dropped == 0 and len(fitted.items) == 2
    assert message_text(fitted.items[0]).startswith(summary_text(""))


def test_an_item_that_cannot_be_shortened_is_passed_over_for_the_next() -> None:
    compacted = {"type": "compaction", "encrypted_content": "e" * 8_000}
    summary = user_message(summary_text("s" * 4_000))
    newest = user_message("hi")
    fitted = fit_items(
        [compacted, summary, newest], [2_000, -1, -1], 1_500,
        protect=lambda item: item is compacted or is_summary_message(item),
    )
    assert fitted.items[0] is compacted and fitted.items[2] is newest
    assert fitted.items[1] is not summary and fitted.truncated == 1 and fitted.dropped == 0


def test_a_newest_item_that_cannot_be_shortened_stays() -> None:
    summary = user_message(summary_text("s" * 4_000))
    call = function_call("read_file", "{}", "c1")
    fitted = fit_items([summary, call], [-1, 600], 800, protect=is_summary_message)
    assert fitted.items[1] is call and fitted.dropped == 0 and fitted.truncated == 1
    nothing = fit_items([call], [600], 0, protect=never)
    assert (nothing.items, nothing.counts, nothing.dropped, nothing.truncated) == (
        [call], [600], 0, 0
    )


def test_shortened_items_are_counted_with_the_given_counter() -> None:
    def by_chars(item: Item) -> int:
        return len(message_text(item))

    fitted = fit_items([user_message("x" * 4_000)], [4_000], 2_000, protect=never,
                       count_item=by_chars)
    assert fitted.counts == [len(message_text(fitted.items[0]))]


def test_items_not_counted_yet_are_counted_before_shortening() -> None:
    items = [user_message("k" * 400), user_message("x" * 4_000)]
    fitted = fit_items(items, [0, -1], 200, protect=lambda item: item is items[0],
                       count_item=lambda item: approx_tokens(message_text(item)) + 4, total=1_004)
    assert fitted.counts[0] == 0  # known (zero) counts are not counted again
    assert fitted.counts[1] == approx_tokens(message_text(fitted.items[1])) + 4
    # At exactly the room nothing is counted: -1 stays unknown.
    exact = fit_items(items, [-1, -1], 1_004, protect=never, count_item=lambda _i: 1, total=1_004)
    assert exact.counts == [-1, -1]


def test_a_leading_output_not_counted_yet_frees_its_count() -> None:
    orphan = function_call_output("gone", "content")
    middle = user_message("middle")
    newest = user_message("n" * 400)

    def fit(room: int) -> Fitted:
        return fit_items([orphan, middle, newest], [-1, 10, 104], room,
                         protect=lambda item: item is orphan, count_item=lambda _i: 8, total=122)

    fitted = fit(105)  # 122 - 10 (middle) - 8 (the orphan) = 104: fits
    assert (fitted.items, fitted.dropped, fitted.truncated) == ([newest], 2, 0)
    fitted = fit(60)  # 104 does not fit: the newest is shortened
    assert fitted.dropped == 2 and fitted.truncated == 1


def test_an_output_leaves_with_its_call() -> None:
    items = [user_message("a"), function_call("f", "{}", "c1"), function_call_output("c1", "o")]
    counts = [1, 2, 3]
    assert remove_with_partner(items, 2, counts) == (2, 5)
    assert items == [user_message("a")] and counts == [1]
    counts = [0, 5]
    assert remove_with_partner(messages(2), 0, counts, lambda _i: 7) == (1, 0)


def test_a_summary_whose_prefix_fills_the_room_keeps_one_token_of_its_body() -> None:
    def count(text: str) -> int:
        return 1 if len(text) < 40 else 1_000  # the prefix alone is over any room given

    body = "b" * 4_000
    shortened = shorten_item(user_message(summary_text(body)), 500, count)
    assert shortened is not None
    assert message_text(shortened) == summary_text("") + truncate_middle(body, 1)[0]
