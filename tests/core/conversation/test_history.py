"""ContextHistory: usage accounting (spec section 5) and lazy counting on resume."""

from __future__ import annotations

from typing import Any

from app.core.conversation.history import ContextHistory
from app.core.items import assistant_message, user_message
from app.core.tokens.counter import approx_tokens


class CountingCounter:
    """A TokenCounter stand-in that records what it was asked to count."""

    exact = True

    def __init__(self) -> None:
        self.counted: list[str] = []

    def count(self, text: str) -> int:
        return approx_tokens(text)

    def count_item(self, item: dict[str, Any]) -> int:
        text = item["content"][0]["text"]
        self.counted.append(text)
        return approx_tokens(text) + 4


def history(counter: CountingCounter) -> ContextHistory:
    return ContextHistory(counter)  # type: ignore[arg-type]


def test_usage_is_last_api_total_plus_items_added_since() -> None:
    h = history(CountingCounter())
    h.append(user_message("a" * 40))
    h.record_api_usage(500)
    assert h.usage() == 500 and not h.usage_is_estimate
    h.append(user_message("b" * 40))  # 10 + 4 tokens
    assert h.usage() == 514 and h.usage_is_estimate


def test_replace_resets_usage_to_the_local_estimate() -> None:
    h = history(CountingCounter())
    h.append(user_message("a" * 400))
    h.record_api_usage(9999)
    h.replace([user_message("b" * 40)])
    assert h.usage() == h.estimate() == 14


def test_replace_reuses_the_counts_of_user_messages_it_keeps() -> None:
    counter = CountingCounter()
    h = history(counter)
    for text in ["first question " * 10, "second question " * 10]:
        h.append(user_message(text))
        h.append(assistant_message("a long answer " * 50))
    before = h.item_tokens()
    counter.counted.clear()
    # A remote compaction sends the kept user messages back as new objects, plus its summary.
    kept = [user_message("first question " * 10), user_message("second question " * 10)]
    h.replace([*kept, user_message("the summary")])

    assert counter.counted == ["the summary"]  # only what is new was tokenised
    assert h.item_tokens() == [before[0], before[2], approx_tokens("the summary") + 4]
    assert h.estimate() == sum(h.item_tokens())


def test_replace_counts_deferred_user_messages_it_keeps() -> None:
    counter = CountingCounter()
    h = history(counter)
    h.append(user_message("resumed question"), defer_count=True)
    h.replace([user_message("resumed question")])
    assert counter.counted == ["resumed question"]
    assert h.item_tokens() == [approx_tokens("resumed question") + 4]


def test_deferred_items_count_the_same_as_counted_ones() -> None:
    eager, lazy = history(CountingCounter()), history(CountingCounter())
    for n in range(5):
        eager.append(user_message("x" * (n * 13)))
        lazy.append(user_message("x" * (n * 13)), defer_count=True)
    assert lazy.estimate() == eager.estimate()
    lazy.set_usage(700, 3)
    eager.set_usage(700, 3)
    assert lazy.usage() == eager.usage()


def test_items_replaced_before_they_are_needed_are_never_counted() -> None:
    counter = CountingCounter()
    h = history(counter)
    for n in range(100):
        h.append(user_message(f"old {n}"), defer_count=True)
    h.replace([user_message("summary")])
    h.append(user_message("new"), defer_count=True)
    h.set_usage(50, 1)
    assert h.usage() == 50 + approx_tokens("new") + 4
    assert counter.counted == ["summary", "new"]


def test_only_items_after_the_mark_are_counted_for_usage() -> None:
    counter = CountingCounter()
    h = history(counter)
    for n in range(10):
        h.append(user_message(f"m{n}"), defer_count=True)
    h.set_usage(1000, 8)
    assert h.usage() == 1000 + 2 * (approx_tokens("m8") + 4)
    assert counter.counted == ["m8", "m9"]


def test_snapshot_and_restore_keep_deferred_items() -> None:
    h = history(CountingCounter())
    h.append(user_message("a" * 8), defer_count=True)
    snap = h.snapshot()
    h.replace([user_message("z")])
    h.restore(snap)
    assert h.estimate() == approx_tokens("a" * 8) + 4
    assert [i["content"][0]["text"] for i in h.items()] == ["a" * 8]


class ThreadNotingCounter(CountingCounter):
    """Notes the thread each item is counted in."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: set[int] = set()

    def count_item(self, item: dict[str, Any]) -> int:
        import threading

        self.threads.add(threading.get_ident())
        return super().count_item(item)


async def test_deferred_items_are_counted_in_a_worker_thread_to_the_same_figures() -> None:
    import threading

    eager, counter = history(CountingCounter()), ThreadNotingCounter()
    lazy = history(counter)
    for n in range(40):
        eager.append(user_message(f"message {n} " * n))
        lazy.append(user_message(f"message {n} " * n), defer_count=True)
    lazy.set_usage(300, 10)
    eager.set_usage(300, 10)

    await lazy.count_deferred()

    assert counter.threads and threading.get_ident() not in counter.threads
    assert lazy.known_item_tokens() == eager.known_item_tokens()
    counted = len(counter.counted)
    assert lazy.estimate() == eager.estimate() and lazy.usage() == eager.usage()
    assert len(counter.counted) == counted  # nothing was left to count on the loop


async def test_an_item_replaced_while_counting_keeps_its_own_count() -> None:
    import asyncio

    counter = CountingCounter()
    h = history(counter)
    for n in range(5):
        h.append(user_message(f"old {n}"), defer_count=True)
    counting = asyncio.ensure_future(h.count_deferred())
    await asyncio.sleep(0)  # the count is under way in its thread
    h.replace([])  # the history changes meanwhile: another item where the first was
    newer = "a much longer message that came after the count began " * 20
    h.append(user_message(newer), defer_count=True)
    await counting
    assert h.known_item_tokens() == [-1]  # not given the replaced item's count
    assert h.estimate() == approx_tokens(newer) + 4
