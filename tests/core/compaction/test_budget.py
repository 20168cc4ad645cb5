"""How much room a compaction leaves and how it is shared (app/core/compaction/budget.py), each
figure at its boundary: just below, at and just above it (issue 40). The expected figures are
worked out by hand from the rules in the module's docstring."""

from __future__ import annotations

import pytest

from app.core.compaction.budget import (
    CompactionBudget,
    compaction_budget,
    is_fragment,
    request_room,
)


def test_a_ten_thousand_token_window_shared_out() -> None:
    # Limit 9 000: target half of it, 4 500; the history's room 4 000 after 500 of overhead; a
    # third of it for the summary, the rest for the kept messages.
    assert compaction_budget(10_000, 9_000, overhead=500) == CompactionBudget(
        window=10_000, limit=9_000, target=4_500, overhead=500, summary=1_333, kept_ceiling=2_667
    )
    assert compaction_budget(10_000, 9_000, overhead=500, incoming=1_000) == CompactionBudget(
        window=10_000, limit=9_000, target=3_500, overhead=500, summary=1_000, kept_ceiling=2_000
    )


def test_the_target_is_half_the_limit_or_else_half_the_window() -> None:
    assert compaction_budget(None, 9_000, overhead=500).target == 4_500
    assert compaction_budget(10_000, None, overhead=500).target == 5_000


def test_unknown_window_and_limit_keep_the_overhead_and_codexs_ceiling() -> None:
    assert compaction_budget(None, None, overhead=500) == CompactionBudget(
        None, None, None, 500, None, 20_000
    )


@pytest.mark.parametrize(
    ("limit", "incoming", "target"),
    [
        (1_318, 0, 660),  # half the limit (659) under the floor: the floor
        (1_320, 0, 660),  # at it
        (1_322, 0, 661),  # above it
        (9_000, 3_841, 660),  # the incoming message takes all but 659
        (9_000, 3_839, 661),
    ],
)
def test_the_target_never_falls_under_the_overhead_a_minimal_summary_and_the_last_words(
    limit: int, incoming: int, target: int
) -> None:
    # 500 of overhead + 96 for the smallest summary + 64 for the user's last words = 660.
    assert compaction_budget(None, limit, overhead=500, incoming=incoming).target == target


@pytest.mark.parametrize(
    ("limit", "summary", "kept"),
    [
        (576, 96, 192),  # room 288: a third is 96, the floor
        (570, 96, 189),  # room 285: a third (95) under the floor
        (582, 97, 194),  # room 291
        (23_994, 3_999, 7_998),  # room 11 997
        (24_000, 4_000, 8_000),  # room 12 000: a third is the ceiling
        (24_006, 4_000, 8_003),  # room 12 003: over the ceiling
        (47_998, 4_000, 19_999),  # room 23 999
        (48_000, 4_000, 20_000),  # room 24 000: the kept messages reach Codex's 20 000
        (48_002, 4_000, 20_000),  # over it
    ],
)
def test_the_summary_takes_a_third_within_96_and_4000_the_kept_messages_the_rest_up_to_20000(
    limit: int, summary: int, kept: int
) -> None:
    budget = compaction_budget(None, limit, overhead=0)
    assert (budget.summary, budget.kept_ceiling) == (summary, kept)


def test_the_kept_messages_budget_once_the_summary_is_written() -> None:
    budget = compaction_budget(10_000, 9_000, overhead=500)  # room 4 000, ceiling 2 667
    assert budget.kept_budget(2_000) == 2_000
    assert budget.kept_budget(1_000, 500) == 2_500
    assert budget.kept_budget(1_000, 334) == 2_666
    assert budget.kept_budget(1_000, 333) == 2_667  # the ceiling
    assert budget.kept_budget(1_000, 332) == 2_667
    # Never under 64: the user's last words always reach the model.
    assert budget.kept_budget(3_935) == 65
    assert budget.kept_budget(3_936) == 64
    assert budget.kept_budget(3_937) == 64
    assert budget.kept_budget(5_000) == 64
    assert compaction_budget(None, None, overhead=500).kept_budget(5_000) == 20_000


def _with_room(room: int) -> CompactionBudget:
    return CompactionBudget(None, None, target=room + 100, overhead=100, summary=None, kept_ceiling=0)


@pytest.mark.parametrize(
    ("room", "notes"),
    [
        (310, 96),  # 30 % is 93: the floor
        (320, 96),
        (330, 99),
        (4_000, 1_200),
        (13_330, 3_999),
        (13_334, 4_000),  # 30 % is 4 000.2: the ceiling
        (20_000, 4_000),
    ],
)
def test_the_notes_take_thirty_percent_of_the_room_within_96_and_4000(room: int, notes: int) -> None:
    assert _with_room(room).notes_budget() == notes


def test_the_notes_budget_without_a_window_is_the_ceiling() -> None:
    assert compaction_budget(None, None, overhead=500).notes_budget() == 4_000


@pytest.mark.parametrize(
    ("window", "margin"), [(100, 48), (799, 48), (800, 48), (801, 49), (10_000, 600)]
)
def test_the_fit_margin_is_six_percent_of_the_window_rounded_up_at_least_48(
    window: int, margin: int
) -> None:
    assert compaction_budget(window, None, overhead=0).fit_margin() == margin


def test_no_fit_margin_without_a_window() -> None:
    assert compaction_budget(None, 9_000, overhead=0).fit_margin() == 0


def test_a_compaction_requests_room_is_the_window_less_the_margin_and_the_answer() -> None:
    budget = compaction_budget(10_000, 9_000, overhead=500)  # margin 600
    assert request_room(budget, 1_000) == 8_400
    assert request_room(budget, None) == 9_400
    small = compaction_budget(1_000, 900, overhead=0)  # margin 60
    assert request_room(small, 939) == 1
    assert request_room(small, 940) == 0
    assert request_room(small, 941) == 0
    assert request_room(compaction_budget(None, 9_000, overhead=0), 100) is None


@pytest.mark.parametrize(
    ("tokens", "limit", "cut", "fragment"),
    [
        (1, 400, False, False),  # one token the model ended by itself: its answer
        (15, None, True, True),  # no limit known: under 16 tokens is a fragment
        (16, None, True, False),
        (15, 40, True, True),  # a quarter of 40 is 10: 16 is the floor
        (16, 40, True, False),
        (99, 400, True, True),  # a quarter of 400 is 100
        (100, 400, True, False),
        (101, 400, True, False),
        (100, 401, True, False),  # a quarter rounded down
        (100, 404, True, True),
    ],
)
def test_a_summary_cut_under_a_quarter_of_its_budget_is_a_fragment(
    tokens: int, limit: int | None, cut: bool, fragment: bool
) -> None:
    assert is_fragment(tokens, limit, cut) is fragment
