"""The rollout store: append-only JSONL, flushed per record, tolerant of damaged lines."""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from app.core.rollout import RolloutWriter, read_rollout, repair_tail, rollout_path

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def test_append_then_read_round_trip(tmp_path: Path) -> None:
    path = rollout_path(tmp_path / "sessions", "s1")
    payloads: list[tuple[str, dict[str, Any]]] = [
        ("session_meta", {"id": "s1", "cwd": "/tmp"}),
        ("response_item", {"type": "message", "role": "user", "content": "héllo ✓"}),
        ("compacted", {"message": "", "replacement_history": [{"type": "compaction"}]}),
    ]
    with RolloutWriter(path) as writer:
        for kind, payload in payloads:
            writer.append(kind, payload)

    records, warnings = read_rollout(path)

    assert warnings == []
    assert [(r.type, r.payload) for r in records] == payloads
    assert [r.line_no for r in records] == [1, 2, 3]
    assert all(TIMESTAMP.match(r.timestamp) for r in records)


def test_lines_are_compact_utf8_json(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with RolloutWriter(path) as writer:
        writer.append("event", {"text": "ünïcode"})
    raw = path.read_bytes()
    assert raw.endswith(b"\n") and raw.count(b"\n") == 1
    assert "ünïcode".encode() in raw  # ensure_ascii=False
    assert b'"type":"event"' in raw  # compact separators


def test_lone_surrogate_is_kept_not_lost(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with RolloutWriter(path) as writer:
        writer.append("response_item", {"text": "bad \ud800 char"})
    records, warnings = read_rollout(path)
    assert warnings == []
    assert records[0].payload == {"text": "bad \ud800 char"}


def test_unserialisable_payload_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with RolloutWriter(path) as writer:
        with pytest.raises(TypeError):
            writer.append("event", {"obj": object()})
        writer.append("event", {"ok": True})
    records, warnings = read_rollout(path)
    assert warnings == []
    assert [r.payload for r in records] == [{"ok": True}]


def test_append_is_visible_to_another_reader_before_close(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    writer = RolloutWriter(path)
    try:
        writer.append("event", {"n": 1})
        records, _ = read_rollout(path)  # a separate open of the file
        assert [r.payload for r in records] == [{"n": 1}]
        writer.append("event", {"n": 2})
        with open(path, encoding="utf-8") as other:
            assert len(other.read().splitlines()) == 2
    finally:
        writer.close()


def test_sync_calls_fsync_on_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.jsonl"
    synced: list[int] = []
    real_fsync = os.fsync

    def spy(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    with RolloutWriter(path) as writer:
        writer.append("event", {"n": 1})
        monkeypatch.setattr(os, "fsync", spy)
        writer.sync()
        assert len(synced) == 1
        assert os.fstat(synced[0]).st_ino == path.stat().st_ino


def test_append_after_close_raises(tmp_path: Path) -> None:
    writer = RolloutWriter(tmp_path / "s.jsonl")
    writer.close()
    with pytest.raises(ValueError, match="closed"):
        writer.append("event", {})


def test_writer_appends_to_an_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with RolloutWriter(path) as writer:
        writer.append("event", {"n": 1})
    with RolloutWriter(path) as writer:
        writer.append("event", {"n": 2})
    records, _ = read_rollout(path)
    assert [r.payload["n"] for r in records] == [1, 2]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_new_file_is_private(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "dir" / "s.jsonl"
    old_umask = os.umask(0o022)
    try:
        RolloutWriter(path).close()
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_corrupt_middle_line_is_skipped_with_its_warning(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    good = json.dumps({"timestamp": "t", "type": "event", "payload": {"n": 1}})
    lines = [
        good,
        "{not json",
        json.dumps({"type": "event"}),  # no payload
        json.dumps([1, 2]),  # not an object
        "",  # blank: silent
        json.dumps({"timestamp": "t", "type": "event", "payload": {"n": 2}}),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    records, warnings = read_rollout(path)

    assert [r.payload["n"] for r in records] == [1, 2]
    assert [r.line_no for r in records] == [1, 6]
    assert warnings == [
        "Skipped line 2 of s.jsonl: not a valid record",
        "Skipped line 3 of s.jsonl: not a valid record",
        "Skipped line 4 of s.jsonl: not a valid record",
    ]


def test_invalid_utf8_line_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    good = json.dumps({"timestamp": "t", "type": "event", "payload": {}}).encode()
    path.write_bytes(b'{"type": "\xff\xfe"}\n' + good + b"\n")
    records, warnings = read_rollout(path)
    assert len(records) == 1
    assert warnings == ["Skipped line 1 of s.jsonl: not a valid record"]


def test_truncated_last_line_warns_then_repair_and_append_work(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with RolloutWriter(path) as writer:
        writer.append("event", {"n": 1})
    with open(path, "ab") as file:  # the app died mid-write
        file.write(b'{"timestamp":"2024-01-01T00:00:00.000Z","type":"ev')

    records, warnings = read_rollout(path)
    assert [r.payload for r in records] == [{"n": 1}]
    assert warnings == [
        "Skipped line 2 of s.jsonl: incomplete last line (the app may have stopped while writing)"
    ]

    before = path.read_bytes()
    repair_tail(path)
    assert path.read_bytes() == before + b"\n"  # existing bytes untouched
    with RolloutWriter(path) as writer:
        writer.append("event", {"n": 2})

    records, warnings = read_rollout(path)
    # The new record is on its own line and loads; the damaged line stays (nothing is
    # deleted) and is now an ordinary skipped line, no longer reported as incomplete.
    assert [r.payload for r in records] == [{"n": 1}, {"n": 2}]
    assert warnings == ["Skipped line 2 of s.jsonl: not a valid record"]


def test_repair_tail_leaves_a_clean_file_alone(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with RolloutWriter(path) as writer:
        writer.append("event", {"n": 1})
    before = path.read_bytes()
    repair_tail(path)
    assert path.read_bytes() == before
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    repair_tail(empty)
    assert empty.read_bytes() == b""
    repair_tail(tmp_path / "missing.jsonl")  # nothing to repair, no error
    assert not (tmp_path / "missing.jsonl").exists()


def test_complete_last_record_without_newline_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps({"timestamp": "t", "type": "event", "payload": {"n": 1}}))
    records, warnings = read_rollout(path)
    assert [r.payload for r in records] == [{"n": 1}]
    assert warnings == []


def test_missing_file_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_rollout(tmp_path / "nope.jsonl")


def test_rollout_path_and_unsafe_ids(tmp_path: Path) -> None:
    assert rollout_path(tmp_path, "abc-123") == tmp_path / "abc-123.jsonl"
    for bad in ("../evil", "a/b", "", ".hidden"):
        with pytest.raises(ValueError):
            rollout_path(tmp_path, bad)


def test_reading_a_large_rollout_is_linear(tmp_path: Path) -> None:
    """5000 turns of ~5 KB each load in one pass (timing itself is a benchmark matter)."""
    path = tmp_path / "big.jsonl"
    text = "x" * 5000
    with RolloutWriter(path) as writer:
        for n in range(5000):
            writer.append("response_item", {"type": "message", "role": "user", "content": text})
    records, warnings = read_rollout(path)
    assert len(records) == 5000 and warnings == []
    assert path.stat().st_size > 25_000_000
