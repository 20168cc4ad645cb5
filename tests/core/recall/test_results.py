"""What a recall search finds: hits that say where they come from and cannot be changed by
whoever formats them, and a result that tells whether every word matched."""

from __future__ import annotations

import dataclasses

import pytest

from app.core.recall.results import RecallHit, RecallResult


def test_a_hit_says_where_it_comes_from_and_is_fixed() -> None:
    hit = RecallHit(turn=3, role="tool", tool="read_file", time="2026-11-25T14:00:00Z",
                    text="port = 8443", in_view=False, seq=7)
    assert hit.call_id == ""
    with pytest.raises(dataclasses.FrozenInstanceError):
        hit.text = "changed"  # type: ignore[misc]
    assert hit == dataclasses.replace(hit)
    assert hit != dataclasses.replace(hit, in_view=True)


def test_a_result_without_a_note() -> None:
    result = RecallResult(hits=[], all_words=False)
    assert result.note == ""
    assert not result.all_words
