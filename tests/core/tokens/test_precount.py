"""Counting ahead, off the event loop (``TokenCounter.precount``): which texts are counted
(long ones; short ones and estimates need nothing), that their counts are found at once after,
how progress is told, the huge ones estimated or counted, the counts kept (the newest 64), and
items counted by their readable text."""

from __future__ import annotations

from typing import Any

import pytest

from app.core.items import assistant_message
from app.core.tokens import counter as tokens
from app.core.tokens.counter import BIG_TEXT_CHARS, HUGE_TEXT_CHARS, TokenCounter
from tests.conftest import TIKTOKEN_CACHE, needs_tiktoken

pytestmark = needs_tiktoken


@pytest.fixture
def counter() -> TokenCounter:
    made = TokenCounter("gpt-4o", cache_dir=TIKTOKEN_CACHE, allow_download=False)
    assert made.wait_ready(30)
    return made


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The length of each text the counter tokenises in steps (what ``precount`` does in its
    worker thread, and ``count`` does when it has no count kept)."""
    lengths: list[int] = []
    real = tokens._count_in_steps

    def spy(encoder: Any, text: str, step: Any) -> int:
        lengths.append(len(text))
        return real(encoder, text, step)

    monkeypatch.setattr(tokens, "_count_in_steps", spy)
    return lengths


def _text(chars: int, word: str = "tokens ") -> str:
    return (word * (chars // len(word) + 1))[:chars]


async def test_long_texts_are_counted_ahead_and_found_at_once_after(
    counter: TokenCounter, counted: list[int]
) -> None:
    short, edge, long = _text(BIG_TEXT_CHARS - 1), _text(BIG_TEXT_CHARS), _text(50_000, "ab ")
    await counter.precount([short, edge, long])
    assert counted == [BIG_TEXT_CHARS, 50_000]  # the short one needs nothing
    exact = len(counter._current_encoder().encode_ordinary(long))  # type: ignore[union-attr]
    assert counter.count(long) == exact and counter.count(edge) > 0
    assert counted == [BIG_TEXT_CHARS, 50_000]  # both found, not counted again
    await counter.precount([long])
    assert counted == [BIG_TEXT_CHARS, 50_000]  # nor counted ahead twice


async def test_progress_is_told_over_all_the_characters_to_count(counter: TokenCounter) -> None:
    heard: list[tuple[int, int]] = []
    first, second = _text(30_000), _text(25_000, "xy ")
    await counter.precount(
        [first, _text(10), second], lambda done, whole: heard.append((done, whole))
    )
    assert heard[-1] == (55_000, 55_000)
    assert (30_000, 55_000) in heard  # the first text's end
    assert all(total == 55_000 and 0 <= done <= total for done, total in heard)
    assert [done for done, _ in heard] == sorted(done for done, _ in heard)


async def test_a_huge_text_is_counted_exactly_ahead_unless_an_estimate_is_asked(
    counter: TokenCounter, counted: list[int]
) -> None:
    huge = _text(HUGE_TEXT_CHARS, "huge text ")
    await counter.precount([huge], estimate_huge=True)
    assert counted == []  # an estimate from samples: nothing counted whole
    estimate = counter.count(huge)
    assert counted == [] and estimate > 0
    await counter.precount([huge])
    assert counted == [HUGE_TEXT_CHARS]
    exact = counter.count(huge)
    assert exact == len(counter._current_encoder().encode_ordinary(huge))  # type: ignore[union-attr]
    await counter.precount([huge])
    assert counted == [HUGE_TEXT_CHARS]  # its exact count is kept


async def test_an_estimate_is_made_once_for_a_huge_text(
    counter: TokenCounter, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[int] = []
    real = tokens.sampled_estimate

    def spy(encoder: Any, text: str) -> int:
        made.append(len(text))
        return real(encoder, text)

    monkeypatch.setattr(tokens, "sampled_estimate", spy)
    huge = _text(HUGE_TEXT_CHARS + 5, "estimate me ")
    await counter.precount([huge, _text(BIG_TEXT_CHARS)], estimate_huge=True)
    await counter.precount([huge], estimate_huge=True)
    assert made == [HUGE_TEXT_CHARS + 5]
    assert counter.count(huge) > 0 and made == [HUGE_TEXT_CHARS + 5]


async def test_with_no_tokenizer_nothing_is_counted_ahead(
    counted: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    blind = TokenCounter("gpt-4o", cache_dir=TIKTOKEN_CACHE, allow_download=False)
    monkeypatch.setattr(blind, "_current_encoder", lambda: None)
    await blind.precount([_text(BIG_TEXT_CHARS), _text(HUGE_TEXT_CHARS)])
    assert counted == []


async def test_the_newest_64_long_counts_are_kept(
    counter: TokenCounter, counted: list[int]
) -> None:
    texts = [_text(BIG_TEXT_CHARS + n) for n in range(65)]
    await counter.precount(texts)
    assert len(counted) == 65
    counter.count(texts[-1])  # kept
    counter.count(texts[1])  # kept (the second oldest)
    assert len(counted) == 65
    counter.count(texts[0])  # the oldest went when the 65th came
    assert counted[-1] == BIG_TEXT_CHARS


async def test_items_are_counted_ahead_by_their_readable_text(
    counter: TokenCounter, counted: list[int]
) -> None:
    reply = _text(40_000)
    await counter.precount_items([assistant_message(reply)])
    assert counted == [40_000]
    counter.count(reply)
    assert counted == [40_000]


async def test_items_counted_ahead_tell_progress_and_count_huge_ones_exactly(
    counter: TokenCounter, counted: list[int]
) -> None:
    heard: list[tuple[int, int]] = []
    huge = _text(HUGE_TEXT_CHARS, "item text ")
    await counter.precount_items(
        [assistant_message(_text(30_000)), assistant_message(huge)],
        lambda done, whole: heard.append((done, whole)),
    )
    assert sorted(counted) == [30_000, HUGE_TEXT_CHARS]  # the huge one counted exactly
    assert heard[-1] == (30_000, 30_000)


async def test_a_huge_text_counted_exactly_needs_no_estimate_first(
    counter: TokenCounter, counted: list[int]
) -> None:
    huge = _text(HUGE_TEXT_CHARS, "never estimated ")
    await counter.precount([huge])
    assert counted == [HUGE_TEXT_CHARS]
    assert counter.count(huge) == len(counter._current_encoder().encode_ordinary(huge))  # type: ignore[union-attr]


async def test_each_huge_text_not_estimated_yet_is_estimated(
    counter: TokenCounter, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[int] = []
    real = tokens.sampled_estimate
    monkeypatch.setattr(
        tokens, "sampled_estimate", lambda e, t: made.append(len(t)) or real(e, t)
    )
    first, second = _text(HUGE_TEXT_CHARS, "one "), _text(HUGE_TEXT_CHARS + 1, "two ")
    await counter.precount([first], estimate_huge=True)
    await counter.precount([first, second], estimate_huge=True)
    assert made == [HUGE_TEXT_CHARS, HUGE_TEXT_CHARS + 1]


async def test_a_huge_text_is_estimated_by_bytes_while_loading_and_not_after_a_failed_load(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[int] = []
    real = tokens.sampled_estimate
    monkeypatch.setattr(
        tokens, "sampled_estimate", lambda e, t: made.append(len(t)) or real(e, t)
    )
    blind = TokenCounter("gpt-4o", cache_dir=TIKTOKEN_CACHE, allow_download=False)
    monkeypatch.setattr(blind, "_current_encoder", lambda: None)
    huge = _text(HUGE_TEXT_CHARS, "bytes ")
    monkeypatch.setattr(TokenCounter, "state", property(lambda _self: "loading"))
    await blind.precount([huge], estimate_huge=True)
    assert made == [HUGE_TEXT_CHARS]
    other = _text(HUGE_TEXT_CHARS, "gone ")
    monkeypatch.setattr(TokenCounter, "state", property(lambda _self: "unavailable"))
    await blind.precount([other], estimate_huge=True)
    assert made == [HUGE_TEXT_CHARS]  # estimates are all there will ever be: made when asked
    assert blind.count(other) == tokens.approx_tokens(other)


async def test_a_long_text_counted_when_asked_is_kept_too(
    counter: TokenCounter, counted: list[int]
) -> None:
    long = _text(BIG_TEXT_CHARS + 10)
    first = counter.count(long)
    assert counter.count(long) == first and counted == [BIG_TEXT_CHARS + 10]
