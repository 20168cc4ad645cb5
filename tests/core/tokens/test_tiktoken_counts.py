"""Counting one text with a loaded encoding: in steps giving the same total as one count and
telling progress, and huge texts estimated from samples at a cost that does not grow."""

from __future__ import annotations

import pytest
import tiktoken

from app.core.tokens import tiktoken_counts
from app.core.tokens.tiktoken_counts import (
    _count_in_steps,
    _encoded_length,
    _step_end,
    sampled_estimate,
)
from tests.core.tokens.conftest import byte_encoding


def test_a_count_goes_through_the_token_buffer_and_counts_special_text_as_text() -> None:
    encoder = byte_encoding()
    assert _encoded_length(encoder, "héllo") == 6
    assert _encoded_length(encoder, "<|endoftext|>") == len("<|endoftext|>")


def test_a_step_ends_after_a_line_break_followed_by_text() -> None:
    text = "one\ntwo\n  three\nfour"
    assert _step_end(text, 0, 18) == 16  # after "three\n"
    assert _step_end(text, 0, 12) == 4  # not after "two\n": spaces follow it
    assert _step_end(text, 0, 100) == len(text)
    assert _step_end("no breaks at all", 0, 5) == 5


def test_counting_in_steps_gives_one_counts_total_and_tells_progress(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(tiktoken_counts, "COUNT_STEP_CHARS", 50)
    encoder = byte_encoding()
    text = "".join(f"line {n}: some text é\n" for n in range(40))
    steps: list[int] = []
    total = _count_in_steps(encoder, text, steps.append)
    assert total == _encoded_length(encoder, text) == len(text.encode())
    assert len(steps) > 5 and steps == sorted(steps) and steps[-1] == len(text)
    assert _count_in_steps(encoder, text, None) == total  # nobody follows: one count


def test_a_huge_text_is_estimated_from_samples() -> None:
    text = "abcd" * 250_000  # one million characters
    assert sampled_estimate(None, text) == 250_000  # the byte rule, scaled up exactly
    assert sampled_estimate(byte_encoding(), text) == 1_000_000
    mixed = ("plain words and more " * 1000 + "日本語のテキスト" * 500) * 20
    estimate = sampled_estimate(byte_encoding(), mixed)
    assert abs(estimate - len(mixed.encode())) <= len(mixed.encode()) // 4


class _BufferOnly:
    """An encoding whose ordinary path (a list built holding the interpreter) must not run."""

    def __init__(self, real: tiktoken.Encoding) -> None:
        self._core_bpe = real._core_bpe

    def encode_ordinary(self, text: str) -> list[int]:
        raise AssertionError("counted through the list, not the token buffer")


def test_where_tiktoken_has_a_token_buffer_the_count_goes_through_it() -> None:
    encoder = byte_encoding()
    count = _encoded_length(_BufferOnly(encoder), "héllo wörld")  # type: ignore[arg-type]
    assert count == len(encoder.encode_ordinary("héllo wörld")) and type(count) is int


def test_a_text_of_exactly_one_step_is_counted_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tiktoken_counts, "COUNT_STEP_CHARS", 10)
    steps: list[int] = []
    assert _count_in_steps(byte_encoding(), "x" * 10, steps.append) == 10 and steps == []
    assert _count_in_steps(byte_encoding(), "x" * 11, steps.append) == 11 and steps == [10, 11]


class _OrdinaryOnly:
    """An older or stricter tiktoken: no token buffer (or no core at all); records what it
    is asked to count, a token a character."""

    def __init__(self, core: object | None = None) -> None:
        if core is not None:
            self._core_bpe = core
        self.asked: list[str] = []

    def encode_ordinary(self, text: str) -> list[int]:
        self.asked.append(text)
        return list(range(len(text)))


def test_without_a_token_buffer_the_ordinary_count_is_used() -> None:
    assert _encoded_length(_OrdinaryOnly(), "hello") == 5  # type: ignore[arg-type]
    assert _encoded_length(_OrdinaryOnly(core=object()), "hello") == 5  # type: ignore[arg-type]


def test_a_step_ends_where_its_line_break_is_followed_by_text() -> None:
    assert _step_end("ab\ncd", 0, 5) == 5  # the step reaches the end: the whole text
    assert _step_end("\nabcdefgh", 0, 5) == 5  # a break at the step's start is no end
    assert _step_end("abcd\nx  efgh", 0, 8) == 5  # text right after the break
    # Breaks followed by spaces are passed over, back to the nearest one followed by text.
    assert _step_end("ab\ncd\ne\n  fghij", 0, 10) == 6


def test_progress_is_told_from_where_the_part_began() -> None:
    told: list[tuple[int, int]] = []
    tiktoken_counts._report_from(lambda done, whole: told.append((done, whole)), 10, 100, 5)
    assert told == [(15, 100)]


def test_the_samples_begin_at_the_start_end_at_the_end_and_are_spread_evenly() -> None:
    text = "".join(chr(ord("a") + n % 26) for n in range(tiktoken_counts._SAMPLES * 50))
    spy = _OrdinaryOnly()
    assert sampled_estimate(spy, text) == len(text)  # type: ignore[arg-type]
    size = len(text) // tiktoken_counts._SAMPLES
    assert len(spy.asked) == tiktoken_counts._SAMPLES
    assert all(len(piece) == size for piece in spy.asked)
    assert spy.asked[0] == text[:size] and spy.asked[-1] == text[-size:]
    # A text four samples long is sampled whole, each quarter once, in order.
    assert "".join(spy.asked) == text


def test_a_short_text_is_estimated_by_the_byte_rule_down_to_one_token() -> None:
    assert sampled_estimate(None, "abcd" * 32) == 32
    assert sampled_estimate(None, "a") == 1
