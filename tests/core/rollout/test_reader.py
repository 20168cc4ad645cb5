"""Reading a rollout: lines parsed into records, damaged and bad lines skipped with warnings
in words, records handed to a consumer as they are read."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from app.core.rollout.reader import (
    DAMAGED_LINE_RECORD,
    RolloutRecord,
    parse_record,
    read_rollout,
)


def line(kind: str, payload: dict[str, object], record_id: str | None = None) -> bytes:
    data: dict[str, object] = {"timestamp": "2026-11-25T10:00:00.000Z", "type": kind,
                               "payload": payload}
    if record_id is not None:
        data["id"] = record_id
    return json.dumps(data).encode() + b"\n"


def test_a_line_parses_into_its_record() -> None:
    record = parse_record(line("event", {"kind": "x"}, "abc").rstrip(), 4)
    assert record == RolloutRecord(4, "2026-11-25T10:00:00.000Z", "event", {"kind": "x"}, "abc")


def test_a_line_without_type_or_payload_or_json_is_no_record() -> None:
    assert parse_record(b'{"type": "event"}', 1) is None
    assert parse_record(b'{"type": 3, "payload": {}}', 1) is None
    assert parse_record(b'[1, 2]', 1) is None
    assert parse_record(b"{not json", 1) is None
    assert parse_record(b'{"type": "e", "payload": {}, "id": 5}', 1) == RolloutRecord(
        1, "", "e", {}, None
    )


def test_a_repaired_damaged_line_is_skipped_without_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(
        line("event", {"n": 1}) + line(DAMAGED_LINE_RECORD, {"base64": "", "bytes": 0})
        + b"\n" + line("event", {"n": 2})
    )
    records, warnings = read_rollout(path)
    assert [r.payload for r in records] == [{"n": 1}, {"n": 2}]
    assert [r.line_no for r in records] == [1, 4]
    assert warnings == []


def test_an_incomplete_last_line_is_named_as_such(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(line("event", {"n": 1}) + b'{"type": "event", "pay')
    records, warnings = read_rollout(path)
    assert [r.payload for r in records] == [{"n": 1}]
    assert warnings == [
        "Skipped line 2 of s.jsonl: incomplete last line (the app may have stopped while writing)"
    ]


def test_many_bad_lines_are_summarised_in_one_warning(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(line("event", {"n": 1}) + b"garbage\n" * 7 + line("event", {"n": 2}))
    records, warnings = read_rollout(path)
    assert len(records) == 2
    assert warnings == [
        (
            "Skipped 7 damaged lines of s.jsonl (lines 2, 3, 4, 5, 6 and 2 more): the file "
            "is partly unreadable, and what could be read is shown"
        )
    ]


def test_a_consumer_gets_every_record_and_the_warnings_still_count(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(line("event", {"n": 1}, "a") + line("event", {"n": 1}, "a") + b"bad\n")
    seen: list[RolloutRecord] = []

    def first_only(records: Iterable[RolloutRecord]) -> None:
        for record in records:
            seen.append(record)
            break  # the reader goes through the rest itself

    records, warnings = read_rollout(path, consume=first_only)
    assert records == []
    assert [r.payload for r in seen] == [{"n": 1}]
    assert warnings == [
        "Skipped line 3 of s.jsonl: not a valid record",
        (
            "Skipped 1 repeated record in s.jsonl (the same line was saved more than once); "
            "each is shown once"
        ),
    ]


# ------------------------------------------------------------------ boundaries (issue 40)


def _bad_lines(tmp_path: Path, count: int) -> list[str]:
    path = tmp_path / "s.jsonl"
    path.write_bytes(line("event", {"n": 1}) + b"garbage\n" * count + line("event", {"n": 2}))
    records, warnings = read_rollout(path)
    assert len(records) == 2
    return warnings


def test_up_to_three_bad_lines_are_each_named(tmp_path: Path) -> None:
    assert _bad_lines(tmp_path, 3) == [
        f"Skipped line {n} of s.jsonl: not a valid record" for n in (2, 3, 4)
    ]


def test_four_bad_lines_are_summarised(tmp_path: Path) -> None:
    assert _bad_lines(tmp_path, 4) == [
        ("Skipped 4 damaged lines of s.jsonl (lines 2, 3, 4, 5): the file is partly unreadable, "
        "and what could be read is shown")
    ]


def test_five_bad_lines_are_all_listed_and_six_are_not(tmp_path: Path) -> None:
    assert _bad_lines(tmp_path, 5) == [
        ("Skipped 5 damaged lines of s.jsonl (lines 2, 3, 4, 5, 6): the file is partly "
        "unreadable, and what could be read is shown")
    ]
    assert _bad_lines(tmp_path, 6) == [
        ("Skipped 6 damaged lines of s.jsonl (lines 2, 3, 4, 5, 6 and 1 more): the file is "
        "partly unreadable, and what could be read is shown")
    ]


def test_the_lines_of_a_file_are_told_bad_blank_and_repeated_ones_too(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    kept = [line("event", {"n": 1}, "a"), line("event", {"n": 2}, "b"), line("event", {"n": 3})]
    damaged = line(DAMAGED_LINE_RECORD, {}, "d")
    path.write_bytes(
        kept[0] + b"\n{not json\n" + kept[1] + kept[1] + damaged + kept[2].rstrip(b"\n")
    )
    told: list[int] = []
    records, _warnings = read_rollout(path, lines=told.append)
    assert [record.line_no for record in records] == [1, 4, 7]
    assert told == [7]  # the last line, unterminated, is one
    path.write_bytes(path.read_bytes() + b"\n")
    read_rollout(path, consume=lambda records: None, lines=told.append)
    assert told == [7, 7]  # the newline after it ends it: no line more
    path.write_bytes(path.read_bytes() + b"\n")
    read_rollout(path, lines=told.append)
    assert told == [7, 7, 8]  # a blank line is one
