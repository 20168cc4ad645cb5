"""Token calibration: the ratio of a server's prompt counts to Coco's estimate, kept per
provider and model, smoothed, clamped and persisted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.tokens.calibration import (
    MAX_RATIO,
    MIN_OBSERVED_ESTIMATE,
    MIN_RATIO,
    Calibration,
    CalibrationStore,
    calibration_store,
    request_estimate,
    tools_text,
)
from app.core.tokens.counter import approx_tokens

URL = "http://127.0.0.1:8080/v1"


def test_uncalibrated_estimate_is_unchanged() -> None:
    assert Calibration().apply(1234) == 1234


def test_first_report_sets_the_ratio_and_later_ones_are_smoothed() -> None:
    calibration = Calibration().observed(1000, 450)  # Gemma on repetitive CJK: 0.45
    assert calibration.ratio == pytest.approx(0.45)
    assert calibration.apply(2000) == 900
    smoothed = calibration.observed(1000, 650)
    # One odd request moves the ratio only part of the way towards itself.
    assert 0.45 < smoothed.ratio < 0.65
    assert smoothed.samples == 2


def test_large_requests_weigh_more_than_small_ones() -> None:
    # A fixed cost (template tokens, dropped tool definitions) skews small requests most: a
    # small request after a large one moves the ratio less than the other way round.
    small_then_large = Calibration().observed(100, 80).observed(5000, 2500)
    large_then_small = Calibration().observed(5000, 2500).observed(100, 80)
    assert abs(small_then_large.ratio - 0.5) < 0.02
    assert abs(large_then_small.ratio - 0.5) < 0.02


def test_ratio_is_clamped_to_a_sane_range() -> None:
    assert Calibration().observed(1000, 1).ratio == MIN_RATIO
    assert Calibration().observed(100, 100_000).ratio == MAX_RATIO


def test_tiny_requests_teach_nothing() -> None:
    calibration = Calibration()
    assert calibration.observed(MIN_OBSERVED_ESTIMATE - 1, 500) == calibration
    assert calibration.observed(1000, 0) == calibration


def test_request_estimate_counts_tool_definitions() -> None:
    tools = [{"type": "function", "name": "read_file", "parameters": {"type": "object"}}]
    text = tools_text(tools)
    assert "read_file" in text
    assert request_estimate(approx_tokens, instructions_and_items=100, tools=tools) == (
        100 + approx_tokens(text)
    )
    assert request_estimate(approx_tokens, instructions_and_items=100, tools=[]) == 100


def test_store_keeps_providers_models_and_bases_apart(tmp_path: Path) -> None:
    store = CalibrationStore(tmp_path / "calibration.json")
    store.observe(URL, "gemma", 1000, 2000)
    assert store.apply(URL, "gemma", 100) == 200
    assert store.apply(URL + "/", "gemma", 100) == 200  # the same server
    assert store.apply(URL, "other", 100) == 100
    assert store.apply("http://127.0.0.1:11434/v1", "gemma", 100) == 100
    assert store.apply(URL, "gemma", 100, basis="bytes") == 100


def test_store_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "data" / "calibration.json"
    CalibrationStore(path).observe(URL, "gemma", 1000, 1090)
    reopened = CalibrationStore(path)
    assert reopened.get(URL, "gemma") == Calibration(ratio=1.09, samples=1, weight=1000)
    assert "sk-" not in path.read_text()


def test_damaged_file_starts_empty_and_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "calibration.json"
    path.write_text("{not json")
    store = CalibrationStore(path)
    assert store.get(URL, "gemma") == Calibration()
    store.observe(URL, "gemma", 1000, 500)
    rows = json.loads(path.read_text())["entries"]
    assert rows == [
        {
            "base_url": URL,
            "model": "gemma",
            "basis": "counter",
            "ratio": 0.5,
            "samples": 1,
            "weight": 1000,
        }
    ]


def test_nonsense_rows_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "calibration.json"
    good = {"base_url": URL, "model": "m", "basis": "bytes", "ratio": 99, "samples": 3}
    path.write_text(json.dumps({"entries": [good, {"base_url": 1}, "x", {**good, "basis": "?"}]}))
    assert CalibrationStore(path).get(URL, "m", "bytes") == Calibration(MAX_RATIO, 3, 0.0)


def test_one_store_per_data_dir(tmp_path: Path) -> None:
    assert calibration_store(tmp_path) is calibration_store(tmp_path)
    assert calibration_store(tmp_path).path == tmp_path.absolute() / "calibration.json"


# ------------------------------------------------------------------ boundaries (issue 40)


def test_the_smoothing_halves_the_weight_of_earlier_requests_at_each_new_one() -> None:
    first = Calibration().observed(1000, 450)
    assert (first.ratio, first.samples, first.weight) == (pytest.approx(0.45), 1, 1000)
    # The first request's 1 000 tokens weigh 500 now, against this one's 1 000.
    second = first.observed(1000, 650)
    assert second.ratio == pytest.approx((0.45 * 500 + 0.65 * 1000) / 1500)
    assert (second.samples, second.weight) == (2, 1500)
    third = second.observed(500, 500)
    assert third.ratio == pytest.approx((second.ratio * 750 + 1.0 * 500) / 1250)
    assert (third.samples, third.weight) == (3, 1250)


def test_a_request_of_64_estimated_tokens_is_the_smallest_that_teaches() -> None:
    assert Calibration().observed(63, 126) == Calibration()
    learnt = Calibration().observed(64, 128)
    assert (learnt.ratio, learnt.samples) == (2.0, 1)
    assert Calibration().observed(65, 130).ratio == 2.0
    assert Calibration().observed(1000, 1).samples == 1  # one reported token is a report


@pytest.mark.parametrize(
    ("reported", "ratio"),
    [(299, 0.3), (300, 0.3), (301, 0.301), (2_999, 2.999), (3_000, 3.0), (3_001, 3.0)],
)
def test_the_ratio_is_kept_between_three_tenths_and_three(reported: int, ratio: float) -> None:
    assert Calibration().observed(1000, reported).ratio == pytest.approx(ratio)


def test_applying_a_calibration_never_makes_a_text_cost_nothing() -> None:
    low = Calibration().observed(1000, 300)  # 0.3
    assert low.apply(1) == 1  # 0.3 rounds to 0: at least a token
    assert low.apply(5) == 2  # 1.5 rounds to even
    assert low.apply(10) == 3
    assert low.apply(0) == 0
    assert low.apply(-3) == 0
    assert Calibration().apply(-3) == 0  # uncalibrated: nothing below zero either
    assert Calibration().apply(0) == 0
