"""A huge text as a key (``app.core.tokens.text_key``) is equal exactly when the texts are, and
never makes Python hash the whole text (10-15 ms for 50 MB, holding every thread)."""

from __future__ import annotations

import ctypes
import sys

import pytest

from app.core.tokens.counter import HUGE_TEXT_CHARS, TokenCounter
from app.core.tokens.text_key import SAMPLE_CHARS, SAMPLES, TextKey


def str_hash_computed(text: str) -> bool:
    """CPython keeps a string's hash once computed (-1 until then), right after its length."""
    return ctypes.c_ssize_t.from_address(id(text) + 3 * ctypes.sizeof(ctypes.c_ssize_t)).value != -1


cpython = pytest.mark.skipif(sys.implementation.name != "cpython", reason="CPython's strings")


def test_keys_are_equal_exactly_when_the_texts_are() -> None:
    text = "line of a log\n" * 100_000
    same = "".join(["line of a log\n"] * 100_000)  # equal, another object
    assert same is not text
    assert TextKey(text) == TextKey(same) and hash(TextKey(text)) == hash(TextKey(same))
    # Differing only between the places the hash looks at: equal hashes, unequal keys.
    changed = text[:1000] + "X" + text[1001:]
    assert TextKey(changed) != TextKey(text)
    counts = {TextKey(text): 1}
    assert counts[TextKey(same)] == 1 and TextKey(changed) not in counts
    assert TextKey("") == TextKey("") and TextKey("a") != TextKey("b")


@cpython
def test_counting_a_huge_text_never_hashes_all_of_it() -> None:
    counter = TokenCounter("gpt-4.1", allow_download=False)
    huge = "".join(f"entry {n}: served in 12 ms\n" for n in range(HUGE_TEXT_CHARS // 20))
    assert len(huge) >= HUGE_TEXT_CHARS and not str_hash_computed(huge)
    key = TextKey(huge)
    assert not str_hash_computed(huge)
    first = counter.count(huge)
    assert counter.count(huge) == first  # the kept estimate (or count) is found again
    assert key in {TextKey(huge)}
    assert not str_hash_computed(huge)


class Slicing(str):
    """A text that notes the length of each slice taken of it."""

    taken: list[int]

    def __getitem__(self, key: object) -> str:  # type: ignore[override]
        part = str.__getitem__(self, key)  # type: ignore[index]
        self.taken.append(len(part))
        return part


def test_the_hash_reads_a_few_short_samples_whatever_the_length() -> None:
    for length in (10, 100, 5_000, 1_000_000):
        text = Slicing("abcdefghij" * (length // 10))
        text.taken = []
        TextKey(text)
        assert len(text.taken) <= SAMPLES + 2  # the samples and the tail, never every place
        assert sum(text.taken) <= (SAMPLES + 2) * SAMPLE_CHARS
        if length >= SAMPLE_CHARS:
            assert max(text.taken) == SAMPLE_CHARS  # each sample as long as it may be


def test_texts_of_one_length_differing_at_a_sample_hash_differently() -> None:
    text = "line of a log\n" * 100_000
    stride = len(text) // SAMPLES
    for at in (0, 1, stride * SAMPLES // 2, len(text) - 1):  # first, a middle sample, last
        changed = text[:at] + "X" + text[at + 1:]
        assert hash(TextKey(changed)) != hash(TextKey(text)), at
    assert hash(TextKey("a" * 10)) != hash(TextKey("b" * 10))  # a short text all sampled
