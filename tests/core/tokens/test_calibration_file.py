"""The calibration file and its edges: what is written (its shape, the figures' rounding, a
folder made for it), what is read back (every kind of bad row skipped, a row of no samples
ignored), what is logged when it cannot be read or written, observations adding up, the key
of a server, the tools' text and a one-token estimate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.tokens.calibration import (
    Calibration,
    CalibrationStore,
    request_estimate,
    tools_text,
)

URL = "http://127.0.0.1:8080/v1"


def test_the_tools_text_is_their_compact_json_with_unicode_kept() -> None:
    tools = [{"name": "météo", "parameters": {"a": [1, 2]}}]
    assert tools_text(tools) == '[{"name":"météo","parameters":{"a":[1,2]}}]'
    assert tools_text([]) == ""


def test_no_tools_add_nothing_to_a_requests_estimate() -> None:
    assert request_estimate(lambda _text: 7, instructions_and_items=100, tools=[]) == 100
    assert request_estimate(lambda _text: 7, instructions_and_items=100, tools=[{"a": 1}]) == 107


def test_a_one_token_estimate_is_calibrated_too() -> None:
    assert Calibration(ratio=3.0, samples=1).apply(1) == 3
    assert Calibration(ratio=3.0, samples=1).apply(0) == 0


def test_observations_through_the_store_add_up(tmp_path: Path) -> None:
    store = CalibrationStore(tmp_path / "calibration.json")
    store.observe(URL, "m", 1000, 1500)
    second = store.observe(URL, "m", 1000, 1500)
    assert second.samples == 2 and store.get(URL, "m") == second


def test_a_servers_key_strips_spaces_and_trailing_slashes_only() -> None:
    store = CalibrationStore(None)
    store.observe(" http://box/apiX/ ", "m ", 1000, 2000)
    assert store.get("http://box/apiX", "m").samples == 1
    assert store.get("http://box/api", "m").samples == 0  # an X is part of the address


def test_the_file_is_indented_versioned_and_rounded(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "calibration.json"  # its folders are made
    store = CalibrationStore(path)
    made = store.observe(URL, "m", 777, 1234)
    text = path.read_text(encoding="utf-8")
    assert text.startswith('{\n "version": 1,\n "entries": [\n  {\n   "base_url": ')
    assert text.endswith("}\n")
    (row,) = json.loads(text)["entries"]
    assert row == {
        "base_url": URL, "model": "m", "basis": "counter",
        "ratio": round(made.ratio, 6), "samples": 1, "weight": round(made.weight, 1),
    }
    assert row["ratio"] == 1.588160 and made.ratio != row["ratio"]
    store.observe(URL, "m", 333, 500)
    assert json.loads(path.read_text(encoding="utf-8"))["entries"][0]["weight"] == 721.5
    store.observe(URL, "m", 101, 150)  # 721.5 / 2 + 101 = 461.75, kept to one place
    assert json.loads(path.read_text(encoding="utf-8"))["entries"][0]["weight"] == 461.8


def _store_with(tmp_path: Path, content: object) -> CalibrationStore:
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps(content), encoding="utf-8")
    return CalibrationStore(path)


GOOD = {"base_url": URL, "model": "m", "basis": "counter", "ratio": 2.0, "samples": 3,
        "weight": 10.0}


@pytest.mark.parametrize(
    "content",
    [[1, 2], {"entries": 5}, {"entries": None}, "text"],
)
def test_a_file_of_another_shape_reads_as_empty(tmp_path: Path, content: object) -> None:
    assert _store_with(tmp_path, content).get(URL, "m") == Calibration()


def test_every_kind_of_bad_row_is_skipped_and_the_good_ones_after_it_kept(
    tmp_path: Path,
) -> None:
    bad = [
        1,
        {**GOOD, "base_url": None, "model": "a"},
        {**GOOD, "model": 5},
        {**GOOD, "model": "b", "basis": "other"},
        {**GOOD, "model": "c", "ratio": "x"},
        {**GOOD, "model": "d", "samples": 0},
        {**GOOD, "model": "e", "samples": "3"},
        {**GOOD, "model": "f", "weight": "heavy"},
    ]
    store = _store_with(tmp_path, {"version": 1, "entries": [*bad, GOOD]})
    assert store.get(URL, "m") == Calibration(2.0, 3, 10.0)
    for model in "abcdef":
        assert store.get(URL, model) == Calibration()
    # Written again, the file holds the good row and the new one only.
    store.observe(URL, "n", 1000, 1000)
    rows = json.loads((tmp_path / "calibration.json").read_text(encoding="utf-8"))["entries"]
    assert [(row["model"], row["basis"]) for row in rows] == [("m", "counter"), ("n", "counter")]


def test_an_unreadable_file_is_logged_with_its_path_and_why(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "calibration.json"
    path.write_text("{not json", encoding="utf-8")
    assert CalibrationStore(path).get(URL, "m") == Calibration()
    (record,) = [r for r in caplog.records if "calibration" in r.getMessage()]
    assert record.getMessage().startswith(
        f"ignoring unreadable token calibration file {path}: Expecting property name"
    )


def test_a_file_that_cannot_be_written_is_logged_and_nothing_is_left_behind(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the folder should be", encoding="utf-8")
    path = blocker / "calibration.json"
    store = CalibrationStore(path)
    made = store.observe(URL, "m", 1000, 2000)  # kept for this run all the same
    assert made.samples == 1 and store.get(URL, "m") == made
    (record,) = [r for r in caplog.records if "could not save" in r.getMessage()]
    assert record.getMessage().startswith(f"could not save token calibration to {path}: [Errno")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["not-a-folder"]
