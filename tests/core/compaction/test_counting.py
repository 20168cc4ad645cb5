"""Compaction counts only what a decision needs (issue 22): a resumed history's items are not
all tokenised to compact it, and each kept message is tokenised once."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from app.core.compaction.counting import CountMemo
from app.core.compaction.fit import fit_items
from app.core.compaction.rebuild import (
    real_user_messages_newest_first,
    select_kept_messages,
    select_kept_newest_first,
)
from app.core.conversation.history import ContextHistory
from app.core.items import assistant_message, message_text, user_message
from app.core.tokens.counter import ITEM_OVERHEAD_TOKENS, approx_tokens


class RecordingCounter:
    """A TokenCounter stand-in that records every text it tokenises."""

    exact = True

    def __init__(self) -> None:
        self.counted: list[str] = []

    def count(self, text: str) -> int:
        self.counted.append(text)
        return approx_tokens(text)

    def count_item(self, item: dict[str, Any]) -> int:
        return self.count(message_text(item)) + ITEM_OVERHEAD_TOKENS


def _conversation(turns: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for i in range(turns):
        items.append(user_message(f"question {i} " + "q" * 200))
        items.append(assistant_message(f"answer {i} " + "a" * 400))
    return items


def test_fit_with_a_known_total_counts_only_what_leaves_and_matches_the_exact_fit() -> None:
    items = _conversation(50)
    exact = RecordingCounter()
    exact_counts = [exact.count_item(item) for item in items]
    room = sum(exact_counts) - 1_000  # a few of the oldest must go
    expected = fit_items(
        items, exact_counts, room, protect=lambda _: False, count_item=exact.count_item
    )

    lazy = RecordingCounter()
    fitted = fit_items(
        items,
        [-1] * len(items),  # nothing counted yet, as after a resume
        room,
        protect=lambda _: False,
        count_item=lazy.count_item,
        total=sum(exact_counts),
    )
    assert fitted.items == expected.items and fitted.dropped == expected.dropped > 0
    # Only the dropped items were tokenised, not the whole history.
    assert len(lazy.counted) == fitted.dropped < len(items) // 4


def test_fit_with_a_total_that_already_fits_counts_nothing() -> None:
    items = _conversation(20)
    counter = RecordingCounter()
    fitted = fit_items(
        items, [-1] * len(items), 10**6, protect=lambda _: False,
        count_item=counter.count_item, total=5_000,
    )
    assert fitted.items == items and counter.counted == []


def test_kept_messages_are_read_newest_first_only_as_far_as_the_budget_goes() -> None:
    history = _conversation(200)
    read: list[str] = []

    def watched() -> Iterator[str]:
        for text in real_user_messages_newest_first(history):
            read.append(text)
            yield text

    kept, truncated = select_kept_newest_first(watched(), budget=300)
    texts = [message_text(item) for item in history if item["role"] == "user"]
    assert (kept, truncated) == select_kept_messages(texts, budget=300)
    assert len(read) <= len(kept) + 1 < 10  # the walk stopped at the budget


def test_count_memo_tokenises_each_text_once() -> None:
    counter = RecordingCounter()
    memo = CountMemo(counter)  # type: ignore[arg-type]
    item = user_message("kept " * 50)
    first = memo.count(message_text(item))
    assert memo.count_item(item) == first + ITEM_OVERHEAD_TOKENS
    assert memo.count(message_text(item)) == first
    assert len(counter.counted) == 1


def test_history_counts_only_the_tail_it_is_asked_for_and_takes_given_counts() -> None:
    counter = RecordingCounter()
    history = ContextHistory(counter)  # type: ignore[arg-type]
    for item in _conversation(30):
        history.append(item, defer_count=True)
    new = user_message("the new message")
    history.append(new, defer_count=True)
    assert history.tokens_from(len(history) - 1) == approx_tokens("the new message") + (
        ITEM_OVERHEAD_TOKENS
    )
    assert counter.counted == ["the new message"]
    assert history.known_item_tokens()[0] == -1  # the rest still uncounted
    history.replace([new], [7])
    assert history.estimate() == 7 and counter.counted == ["the new message"]
    # Once refined, the lazy count is the exact one.
    history.replace([new], [-1])
    assert history.estimate() == approx_tokens("the new message") + ITEM_OVERHEAD_TOKENS


def test_count_memo_keeps_the_last_compactions_counts_and_no_older() -> None:
    counter = RecordingCounter()
    memo = CountMemo(counter)  # type: ignore[arg-type]
    kept, block = "a kept message " * 20, "the notes block " * 30
    memo.begin()
    first = (memo.count(kept), memo.count(block))
    memo.begin()  # the next compaction: the same texts are not tokenised again
    assert (memo.count(kept), memo.count(block)) == first == (
        approx_tokens(kept), approx_tokens(block)
    )
    assert counter.counted == [kept, block]
    memo.begin()
    memo.count(block)  # counted in the one before: still known; ``kept`` is not asked for
    memo.begin()
    memo.count(block)  # known still
    memo.count(kept)  # last counted two compactions ago: tokenised again
    assert counter.counted == [kept, block, kept]


def test_count_memo_does_not_keep_long_texts_past_their_compaction() -> None:
    from app.core.tokens.counter import BIG_TEXT_CHARS

    counter = RecordingCounter()
    memo = CountMemo(counter)  # type: ignore[arg-type]
    long_text = "x" * BIG_TEXT_CHARS  # the counter keeps these itself
    memo.count(long_text)
    memo.count(long_text)
    memo.begin()
    memo.count(long_text)
    assert counter.counted == [long_text, long_text]


def test_count_memo_forgets_estimates_once_the_tokenizer_has_loaded() -> None:
    class LoadingCounter(RecordingCounter):
        exact = False

        def count(self, text: str) -> int:
            self.counted.append(text)
            return approx_tokens(text) * (2 if self.exact else 1)

    counter = LoadingCounter()
    memo = CountMemo(counter)  # type: ignore[arg-type]
    text = "some words " * 10
    estimate = memo.count(text)
    memo.begin()
    assert memo.count(text) == estimate  # still estimating: the same answer, kept
    counter.exact = True  # loaded: the next compaction counts exactly
    memo.begin()
    assert memo.count(text) == counter.count(text) == estimate * 2
    memo.begin()
    assert memo.count(text) == estimate * 2
    assert counter.counted == [text, text, text]  # the estimate, the exact count, the check
