"""Checking what a compaction freed (spec section 9): the share freed, and the warnings said
when it freed little, made the context larger, or came back cut short."""

from __future__ import annotations

from app.core.compaction.paths.path import PathResult
from app.core.compaction.room_check import (
    LITTLE_FREED_SHARE,
    LOCAL_COMPACTION_WARNING,
    check_room,
)
from app.core.protocol import Strategy


def result(strategy: Strategy = "remote", **fields: bool) -> PathResult:
    return PathResult(strategy=strategy, items=[], **fields)  # type: ignore[arg-type]


def test_a_compaction_that_frees_most_of_the_context_says_nothing() -> None:
    check = check_room(result(), 10_000, 2_000, warned=False)
    assert check.freed_share == 0.8 and not check.freed_little
    assert check.warnings == () and not check.warned_local


def test_freeing_little_and_growing_are_said_with_the_figures() -> None:
    little = check_room(result(), 10_000, 9_000, warned=False)
    assert little.freed_little and 0.1 < LITTLE_FREED_SHARE
    (text,) = little.warnings
    assert "freed little room (10,000 → 9,000 tokens, 10 %)" in text
    larger = check_room(result(), 1_000, 1_400, warned=False)
    assert larger.freed_share < 0 and larger.freed_little
    (text,) = larger.warnings
    assert "made the context larger (1,000 → 1,400 tokens)" in text


def test_a_cut_short_summary_is_said_and_whether_the_earlier_one_was_kept() -> None:
    kept = check_room(
        result(cut_short=True, kept_previous_summary=True), 10_000, 1_000, warned=True
    )
    assert kept.warnings[0].startswith("The model's summary came back cut short, so the earlier")
    lost = check_room(result(cut_short=True), 10_000, 1_000, warned=True)
    assert "your recent messages were kept verbatim" in lost.warnings[0]


def test_the_long_conversation_warning_is_said_once_and_only_for_a_local_summary() -> None:
    first = check_room(result("local"), 10_000, 1_000, warned=False)
    assert first.warned_local and first.warnings == (LOCAL_COMPACTION_WARNING,)
    again = check_room(result("local"), 10_000, 1_000, warned=True)
    assert not again.warned_local and again.warnings == ()
    fallback = check_room(result("remote_then_local"), 10_000, 1_000, warned=False)
    assert fallback.warned_local
    for strategy in ("remote", "prune"):
        assert not check_room(result(strategy), 10_000, 1_000, warned=False).warned_local


def test_an_empty_context_before_frees_nothing_and_warns_of_nothing_freed() -> None:
    check = check_room(result(), 0, 500, warned=True)
    assert check.freed_share == 0.0 and not check.freed_little and check.warnings == ()


# ------------------------------------------------------------------ boundaries (issue 40)


def test_freeing_little_is_under_a_fifth_of_the_context() -> None:
    just_under = check_room(result(), 10_000, 8_001, warned=True)
    assert just_under.freed_little
    assert just_under.warnings == (
        ("This compaction freed little room (10,000 → 8,001 tokens, 20 %). Most of what is left "
        "is recent; start a new conversation if the model struggles."),
    )
    at = check_room(result(), 10_000, 8_000, warned=True)
    assert at.freed_share == 0.2 and not at.freed_little and at.warnings == ()
    above = check_room(result(), 10_000, 7_999, warned=True)
    assert not above.freed_little and above.warnings == ()


def test_the_share_freed_is_said_in_whole_percent_rounded() -> None:
    check = check_room(result(), 10_000, 8_560, warned=True)  # 14.4 %
    assert "(10,000 → 8,560 tokens, 14 %)" in check.warnings[0]
    check = check_room(result(), 10_000, 8_550, warned=True)  # 14.5 %: rounded to even
    assert "(10,000 → 8,550 tokens, 14 %)" in check.warnings[0]
    check = check_room(result(), 10_000, 8_540, warned=True)  # 14.6 %
    assert "(10,000 → 8,540 tokens, 15 %)" in check.warnings[0]


def test_made_larger_is_said_only_when_the_context_grew() -> None:
    same = check_room(result(), 1_000, 1_000, warned=True)
    assert same.freed_share == 0.0 and same.freed_little
    assert same.warnings == (
        ("This compaction freed little room (1,000 → 1,000 tokens, 0 %). Most of what is left "
        "is recent; start a new conversation if the model struggles."),
    )
    grown = check_room(result(), 1_000, 1_001, warned=True)
    assert grown.freed_little
    assert grown.warnings == (
        ("This compaction made the context larger (1,000 → 1,001 tokens): the conversation is "
        "still short, so the summary outweighs what it replaced. Undo puts it back; compacting "
        "pays off once the conversation is longer."),
    )


def test_a_context_of_one_token_is_still_a_context() -> None:
    emptied = check_room(result(), 1, 0, warned=True)
    assert emptied.freed_share == 1.0 and not emptied.freed_little and emptied.warnings == ()
    kept = check_room(result(), 1, 1, warned=True)
    assert kept.freed_little and "freed little room (1 → 1 tokens, 0 %)" in kept.warnings[0]
    grown = check_room(result(), 1, 2, warned=True)
    assert "made the context larger (1 → 2 tokens)" in grown.warnings[0]


def test_the_cut_short_warnings_in_full_and_only_when_cut_short() -> None:
    kept = check_room(result(cut_short=True, kept_previous_summary=True), 10, 1, warned=True)
    assert kept.warnings == (
        ("The model's summary came back cut short, so the earlier summary was kept beside it. "
        "Nothing it held was lost."),
    )
    lost = check_room(result(cut_short=True), 10, 1, warned=True)
    assert lost.warnings == (
        ("The model's summary came back cut short; your recent messages were kept verbatim. "
        "Try /compact again, or a compaction model with a larger window."),
    )
    whole = check_room(result(kept_previous_summary=True), 10, 1, warned=True)
    assert whole.warnings == ()


def test_an_unusable_summary_is_said_in_full_and_whether_the_earlier_one_was_kept() -> None:
    kept = check_room(
        PathResult(strategy="local", items=[], summary_unusable="repetition",
                   kept_previous_summary=True),
        10_000, 2_000, warned=True,
    )
    assert kept.warnings == (
        (
            "The model's summary was unusable (it mostly repeated itself), so the earlier "
            "summary was kept. Nothing it held was lost."
        ),
    )
    none = check_room(
        PathResult(strategy="local", items=[], summary_unusable="echo"),
        10_000, 2_000, warned=True,
    )
    assert none.warnings == (
        (
            "The model's summary was unusable (it mostly repeated the instructions), so none "
            "was installed: your recent messages, pins and carried notes carry the "
            "conversation. Try /compact again, or a stronger compaction model."
        ),
    )
