"""When automatic compaction fires (app/core/compaction/policy.py), each rule at its boundary:
the value just below, at and just above it (issue 40: the mutants these tests kill)."""

from __future__ import annotations

import pytest

from app.core.compaction import policy
from app.core.config import CoreConfig

# ------------------------------------------------------------------ the window and the limit


def test_the_window_of_the_model_asked_about_not_of_the_configured_one() -> None:
    config = CoreConfig(model="gpt-4o")
    assert policy.context_window(config) == 128_000
    assert policy.context_window(config, "gpt-4") == 8_192
    assert policy.context_window(config, "GPT-4-Turbo-2024") == 128_000  # any case
    assert policy.context_window(config, "my-local-model") is None
    assert policy.context_window(CoreConfig(model="gpt-4o", context_window=5_000), "gpt-4") == 5_000


def test_the_limit_is_ninety_percent_of_the_window_rounded_down() -> None:
    assert policy.auto_compact_limit(CoreConfig(context_window=10_000)) == 9_000
    assert policy.auto_compact_limit(CoreConfig(context_window=10_001)) == 9_000
    assert policy.auto_compact_limit(CoreConfig(context_window=10_012)) == 9_010
    # The model's own window when the settings name another model.
    assert policy.auto_compact_limit(CoreConfig(model="gpt-4o"), "gpt-4") == int(8_192 * 0.9)


def test_a_configured_limit_is_clamped_to_ninety_percent_of_the_window() -> None:
    def limit(configured: int) -> int | None:
        return policy.auto_compact_limit(
            CoreConfig(context_window=10_000, auto_compact_token_limit=configured)
        )

    assert limit(8_999) == 8_999
    assert limit(9_000) == 9_000
    assert limit(9_001) == 9_000


def test_without_a_window_the_configured_limit_or_none() -> None:
    assert policy.auto_compact_limit(CoreConfig(model="local", auto_compact_token_limit=700)) == 700
    assert policy.auto_compact_limit(CoreConfig(model="local")) is None


# ------------------------------------------------------------------ the loop guard


def test_after_a_compaction_under_the_limit_it_fires_again_at_the_limit() -> None:
    assert not policy.grown_back(899, 900, post_compaction=400)
    assert policy.grown_back(900, 900, post_compaction=400)
    assert policy.grown_back(901, 900, post_compaction=400)
    # Just under the limit after the compaction: still the limit, not half a limit more.
    assert policy.grown_back(900, 900, post_compaction=899)
    assert not policy.grown_back(899, 900, post_compaction=None)
    assert policy.grown_back(900, 900, post_compaction=None)


def test_after_a_compaction_that_could_not_make_room_it_needs_half_a_limit_of_growth() -> None:
    # Left exactly at the limit: a compaction that did not get under it.
    assert not policy.grown_back(1_349, 900, post_compaction=900)
    assert policy.grown_back(1_350, 900, post_compaction=900)
    assert not policy.grown_back(900, 900, post_compaction=900)
    # Left above: half a limit (rounded down) above where it was left.
    assert not policy.grown_back(1_399, 901, post_compaction=950)
    assert policy.grown_back(1_400, 901, post_compaction=950)  # 950 + 901 // 2


def test_before_a_turn_the_loop_guard_applies_to_the_history_and_the_message() -> None:
    args = {
        "auto": True,
        "history_len": 1,
        "limit": 900,
        "unchanged_since_compaction": False,
        "post_compaction": 950,
    }
    assert not policy.should_compact_before_turn(usage=1_300, incoming=99, **args)
    assert policy.should_compact_before_turn(usage=1_300, incoming=100, **args)
    assert policy.should_compact_before_turn(usage=1, incoming=899, **{**args, "post_compaction": 5})


def test_mid_turn_the_loop_guard_applies_too() -> None:
    args = {"auto": True, "limit": 900, "unchanged_since_compaction": False}
    assert not policy.should_compact_mid_turn(usage=1_000, post_compaction=950, **args)
    assert policy.should_compact_mid_turn(usage=1_400, post_compaction=950, **args)
    assert not policy.should_compact_mid_turn(usage=899, post_compaction=None, **args)
    assert policy.should_compact_mid_turn(usage=900, post_compaction=None, **args)


@pytest.mark.parametrize(
    ("auto", "limit", "unchanged"), [(False, 900, False), (True, None, False), (True, 900, True)]
)
def test_mid_turn_never_without_auto_a_limit_or_growth(
    auto: bool, limit: int | None, unchanged: bool
) -> None:
    assert not policy.should_compact_mid_turn(
        auto=auto, usage=5_000, limit=limit, unchanged_since_compaction=unchanged,
        post_compaction=None,
    )


# ------------------------------------------------------------------ a model switch


def test_only_a_strictly_smaller_window_compacts_with_the_previous_model() -> None:
    assert policy.compaction_model_for_switch("big", "small", 8_001, 8_000) == "big"
    assert policy.compaction_model_for_switch("big", "small", 8_000, 8_000) is None
    assert policy.compaction_model_for_switch("big", "small", 7_999, 8_000) is None


def test_no_switch_without_a_different_model_or_both_windows() -> None:
    assert policy.compaction_model_for_switch("big", "big", 128_000, 8_000) is None
    assert policy.compaction_model_for_switch("", "small", 128_000, 8_000) is None
    assert policy.compaction_model_for_switch("big", "small", None, 8_000) is None
    assert policy.compaction_model_for_switch("big", "small", 128_000, None) is None


# ------------------------------------------------------------------ the largest message


def test_message_room_is_the_limit_less_the_overhead_never_below_nothing() -> None:
    assert policy.message_room(501, 500) == 1
    assert policy.message_room(500, 500) == 0
    assert policy.message_room(499, 500) == 0


def test_after_a_turn_it_compacts_at_the_limit_with_the_loop_guard() -> None:
    args = {"auto": True, "limit": 900, "unchanged_since_compaction": False}
    assert not policy.should_compact_after_turn(usage=899, post_compaction=None, **args)
    assert policy.should_compact_after_turn(usage=900, post_compaction=None, **args)
    assert not policy.should_compact_after_turn(usage=1_000, post_compaction=950, **args)
    assert policy.should_compact_after_turn(usage=1_400, post_compaction=950, **args)
    assert not policy.should_compact_after_turn(
        usage=990, post_compaction=None, **{**args, "auto": False}
    )
    assert not policy.should_compact_after_turn(
        usage=990, post_compaction=None, **{**args, "unchanged_since_compaction": True}
    )
    assert not policy.should_compact_after_turn(
        usage=990, post_compaction=None, **{**args, "limit": None}
    )
