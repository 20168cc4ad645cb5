"""Each message is read for notes once (a digest cache in front of the extractor), and many
messages are read newest first, stopping once a budget's worth of notes is found."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from app.core.compaction.notes import cache as note_cache


def watch(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    read: list[str] = []
    real = note_cache.extract_chunk

    def watched(texts: Sequence[str]) -> list[tuple[str, int]]:
        read.extend(texts)
        return real(texts)

    monkeypatch.setattr(note_cache, "extract_chunk", watched)
    return read


def test_with_a_limit_the_newest_messages_are_read_and_the_notes_come_oldest_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read = watch(monkeypatch)
    texts = [f"Cache test: the port of node {n} is {9100 + n} here." for n in range(10)]
    found = note_cache.extract_many(texts, limit=3)
    assert read == texts[:-4:-1]  # the three newest, newest first, then it stopped
    assert [note for note, _ in found] == texts[-3:]  # oldest first


def test_a_message_read_once_is_not_read_again_but_a_huge_one_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read = watch(monkeypatch)
    small = "Cache test: the owner of svc-cache-1 is Grace."
    huge = "Cache test: the port is 7070. " + "x " * 40_000
    first = note_cache.extract_many([small, huge])
    assert note_cache.extract_many([small, huge]) == first
    assert read.count(small) == 1  # remembered by its digest
    assert read.count(huge) == 2  # too long to key: read each time


def test_the_one_message_forms_give_the_same_notes() -> None:
    text = "Cache test: we deploy at 09:30 from /srv/cache-app."
    scored = note_cache.extract_scored(text)
    assert scored and note_cache.extract_notes(text) == [note for note, _ in scored]


def test_a_message_at_the_length_bound_is_still_remembered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read = watch(monkeypatch)
    at_bound = "Cache test: the region is eu-west-3. ".ljust(note_cache._READ_MAX_CHARS, "y")
    assert len(at_bound) == note_cache._READ_MAX_CHARS
    note_cache.extract_many([at_bound])
    note_cache.extract_many([at_bound])
    assert read.count(at_bound) == 1
    over = at_bound + "y"
    note_cache.extract_many([over])
    note_cache.extract_many([over])
    assert read.count(over) == 2


def test_the_cache_keeps_its_newest_entries_by_16_byte_keys(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(note_cache, "_READ", type(note_cache._READ)())
    monkeypatch.setattr(note_cache, "_READ_KEPT", 3)
    read = watch(monkeypatch)
    texts = [f"Cache bound test {n}: the port is {7000 + n}." for n in range(4)]
    for text in texts:
        note_cache.extract_many([text])
    assert len(note_cache._READ) == 3  # one over the bound: the oldest went
    assert all(len(key) == 16 for key in note_cache._READ)  # a digest, not the text
    note_cache.extract_many([texts[1]])  # still kept: not read again
    assert read.count(texts[1]) == 1
    note_cache.extract_many([texts[0]])  # the oldest was the one that went
    assert read.count(texts[0]) == 2


def test_a_message_with_a_lone_surrogate_is_read_and_remembered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read = watch(monkeypatch)
    text = "Cache test: the key file is /srv/k\ud800.pem and the port is 6060."
    note_cache.extract_many([text])
    note_cache.extract_many([text])
    assert read.count(text) == 1
