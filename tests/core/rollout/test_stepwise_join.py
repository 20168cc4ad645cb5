"""Joining a huge text's parts a step at a time (``app.core.rollout.stepwise_join``): the same string
as ``"".join``, made by many short copies instead of one long one."""

from __future__ import annotations

import sys

import pytest

from app.core.rollout import stepwise_join
from app.core.rollout.stepwise_join import join_in_steps

cpython = pytest.mark.skipif(sys.implementation.name != "cpython", reason="CPython's strings")


@cpython
def test_ascii_parts_are_copied_a_step_at_a_time_into_the_same_string(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stepwise_join, "STEP_CHARS", 1000)
    copies: list[int] = []
    real_memmove = stepwise_join.ctypes.memmove

    def memmove(target: int, source: int, count: int) -> int:
        copies.append(count)
        return real_memmove(target, source, count)  # type: ignore[no-any-return]

    monkeypatch.setattr(stepwise_join.ctypes, "memmove", memmove)
    parts = [f"part {n}: " + "abcdefghij" * (250 + n) for n in range(7)]
    joined = join_in_steps(parts)
    expected = "".join(parts)
    assert joined == expected and len(joined) == len(expected)
    assert max(copies) == 1000 and sum(copies) == len(expected)  # no copy longer than a step
    # A string like any other: hashed, compared, a key, sliced, ASCII.
    assert hash(joined) == hash(expected)
    assert {expected: 1}[joined] == 1
    assert joined.isascii() and joined[-5:] == expected[-5:]
    assert joined.encode() == expected.encode()


def test_text_that_is_not_all_ascii_or_short_is_joined_as_usual(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stepwise_join, "STEP_CHARS", 10)
    called: list[int] = []
    monkeypatch.setattr(stepwise_join.ctypes, "memmove", lambda *args: called.append(1))
    wide = ["déjà vu " * 10, "ascii " * 10, "日本語" * 10]
    assert join_in_steps(wide) == "".join(wide)
    assert join_in_steps(["short"]) == "short"
    assert join_in_steps([]) == ""
    assert not called
