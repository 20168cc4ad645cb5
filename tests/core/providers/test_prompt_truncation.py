"""Catching a prompt the server cut silently, with an estimate calibrated to its tokenizer."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.providers.base import ProviderError
from app.core.providers.prompt_truncation import (
    TRUNCATION_MIN_ESTIMATE,
    TruncationCheck,
    estimate_tokens,
)
from app.core.tokens.calibration import CalibrationStore

URL = "http://127.0.0.1:11434/v1"
MODEL = "gemma3"


def test_the_estimate_is_a_quarter_of_the_utf8_bytes_rounded_up() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcde") == 2
    assert estimate_tokens("éé") == 1  # four bytes


def test_a_count_under_half_the_estimate_is_an_overflow() -> None:
    check = TruncationCheck(URL, None)
    with pytest.raises(ProviderError) as caught:
        check.check(MODEL, 10_000, 4_000)
    assert caught.value.category == "context_overflow"
    assert "reported 4000 tokens for about 10000" in caught.value.message
    check.check(MODEL, 10_000, 5_000)  # half: plausible


def test_small_prompts_and_missing_counts_are_never_called_truncated() -> None:
    check = TruncationCheck(URL, None)
    check.check(MODEL, TRUNCATION_MIN_ESTIMATE, 1)
    check.check(MODEL, 1_000_000, None)


def test_a_plausible_count_teaches_the_calibration_which_then_sets_the_bar(
    tmp_path: Path,
) -> None:
    store = CalibrationStore(tmp_path / "calibration.json")
    check = TruncationCheck(URL, store)
    check.check(MODEL, 10_000, 6_000)  # this tokenizer counts 0.6 of the estimate
    assert check.calibration(MODEL).samples == 1
    assert check.calibration(MODEL).ratio == pytest.approx(0.6)
    assert check.expected(MODEL, 20_000) == 12_000
    # 6 500 is under half of the raw 20 000 but not of the calibrated 12 000.
    check.check(MODEL, 20_000, 6_500)
    # The calibration is kept per server: another URL starts raw.
    assert TruncationCheck("http://other:1/v1", store).expected(MODEL, 20_000) == 20_000


def test_a_count_stuck_while_the_estimate_grew_is_not_learnt(tmp_path: Path) -> None:
    store = CalibrationStore(tmp_path / "calibration.json")
    check = TruncationCheck(URL, store)
    check.check(MODEL, 8_000, 8_000)
    check.check(MODEL, 12_000, 8_100)  # +50 % estimate, count stayed at the window
    assert check.calibration(MODEL).samples == 1
    assert check.calibration(MODEL).ratio == pytest.approx(1.0)
