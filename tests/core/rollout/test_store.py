"""The rollout store: append-only JSONL, flushed per record, tolerant of damaged lines."""

from __future__ import annotations

import base64
import errno
import json
import os
import random
import re
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from app.core.rollout.store import (
    RolloutWriteError,
    RolloutWriter,
    read_rollout,
    repair_tail,
    resume_rollout,
    rollout_path,
)

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

    torn = path.read_bytes().split(b"\n")[-1]
    repair_tail(path)
    with RolloutWriter(path) as writer:
        writer.append("event", {"n": 2})

    records, warnings = read_rollout(path)
    # Repaired once: the new record is on its own line and no later open warns again. The
    # damaged bytes are kept, in a record readers skip.
    assert [r.payload for r in records] == [{"n": 1}, {"n": 2}]
    assert warnings == []
    damaged = [json.loads(line) for line in path.read_text().splitlines()][1]
    assert damaged["type"] == "damaged_line"
    assert base64.b64decode(damaged["payload"]["base64"]) == torn


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


# --- records have an identity: a repeated line is read once ------------------------------------


def test_each_record_carries_a_unique_id(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with RolloutWriter(path) as writer:
        for n in range(50):
            writer.append("event", {"n": n})
    records, _ = read_rollout(path)
    ids = [r.id for r in records]
    assert all(isinstance(i, str) and i for i in ids)
    assert len(set(ids)) == 50


def test_every_line_duplicated_is_read_once_with_one_warning(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with RolloutWriter(path) as writer:
        for n in range(4):
            writer.append("response_item", {"n": n})
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(line + line for line in lines))  # a sync tool's double

    records, warnings = read_rollout(path)

    assert [r.payload["n"] for r in records] == [0, 1, 2, 3]
    assert warnings == [
        (
            "Skipped 4 repeated records in s.jsonl (the same line was saved more than once); "
            "each is shown once"
        )
    ]


def test_old_records_without_ids_are_read_as_before(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    old = json.dumps({"timestamp": "t", "type": "event", "payload": {"n": 1}})
    path.write_text(f"{old}\n{old}\n")  # identical old lines may be two real events
    records, warnings = read_rollout(path)
    assert [r.payload for r in records] == [{"n": 1}, {"n": 1}]
    assert [r.id for r in records] == [None, None]
    assert warnings == []


def test_a_file_of_random_bytes_gives_one_summarising_warning(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    noise = random.Random(13).randbytes(20_000)
    path.write_bytes(noise)
    bad_lines = sum(1 for line in noise.split(b"\n") if line.strip())
    assert bad_lines > 40

    records, warnings = read_rollout(path)

    assert records == []
    assert len(warnings) == 1
    assert warnings[0].startswith(f"Skipped {bad_lines} damaged lines of s.jsonl (lines ")
    assert "partly unreadable" in warnings[0]


# --- resume: lock, repair once, read-only when the file cannot be written -----------------------


def _torn_rollout(path: Path) -> bytes:
    with RolloutWriter(path) as writer:
        writer.append("event", {"n": 1})
    torn = b'{"timestamp":"2024-01-01T00:00:00.000Z","type":"respo'
    with open(path, "ab") as file:
        file.write(torn)
    return torn


def test_a_torn_line_warns_on_the_open_that_repairs_it_only(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    _torn_rollout(path)

    first = resume_rollout(path)
    assert first.writer is not None and first.read_only is None
    assert first.warnings == [
        "Skipped line 2 of s.jsonl: incomplete last line (the app may have stopped while writing)"
    ]
    first.writer.append("event", {"n": 2})
    first.writer.close()

    second = resume_rollout(path)
    assert second.warnings == []
    assert [r.payload for r in second.records] == [{"n": 1}, {"n": 2}]
    assert second.writer is not None
    second.writer.close()


def test_a_session_written_elsewhere_opens_read_only(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with RolloutWriter(path) as writer:
        writer.append("event", {"n": 1})
    other = RolloutWriter.exclusive(path)  # another window holds the session
    try:
        resumed = resume_rollout(path)
        assert resumed.writer is None
        assert resumed.read_only is not None and "open in another Coco window" in resumed.read_only
        assert [r.payload for r in resumed.records] == [{"n": 1}]
    finally:
        other.close()
    again = resume_rollout(path)
    assert again.writer is not None and again.read_only is None
    again.writer.close()


def test_a_read_only_session_file_can_still_be_viewed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.jsonl"
    torn = _torn_rollout(path)
    before = path.read_bytes()
    real_open = os.open

    def refuse_writing(file: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        # Root ignores permission bits, so refuse as a read-only file would.
        if Path(file) == path and flags & (os.O_WRONLY | os.O_RDWR):
            raise PermissionError(errno.EACCES, "Permission denied", str(file))
        return real_open(file, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse_writing)
    resumed = resume_rollout(path)

    assert resumed.writer is None
    assert resumed.read_only == (
        f"This conversation is shown read-only: its file in {tmp_path} cannot be written "
        "(permission denied). Nothing new can be added to it."
    )
    assert [r.payload for r in resumed.records] == [{"n": 1}]
    assert path.read_bytes() == before and before.endswith(torn)
    monkeypatch.undo()
    writable = resume_rollout(path)  # the lock was released: writable again once allowed
    assert writable.writer is not None
    writable.writer.close()


# --- write failures: one clear exception, no torn line ------------------------------------------


@pytest.mark.parametrize(
    ("code", "cause"),
    [
        (errno.ENOSPC, "the disk is full"),
        (errno.EROFS, "the folder is read-only"),
        (errno.EACCES, "permission denied"),
        (errno.EDQUOT, "the disk quota is full"),
    ],
)
def test_a_failed_append_names_the_folder_and_the_cause_and_leaves_no_torn_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, cause: str
) -> None:
    path = tmp_path / "s.jsonl"
    writer = RolloutWriter(path)
    writer.append("event", {"n": 1})
    real_write = os.write

    def write_half_then_fail(fd: int, data: bytes) -> int:
        if fd != writer.fileno():
            return real_write(fd, data)
        if len(data) > 10:
            return real_write(fd, data[: len(data) // 2])  # a short write, as a full disk does
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "write", write_half_then_fail)
    with pytest.raises(RolloutWriteError) as caught:
        writer.append("response_item", {"text": "a streamed reply " * 20})
    monkeypatch.undo()

    assert caught.value.folder == tmp_path
    assert caught.value.cause == cause
    assert str(caught.value) == f"Could not save the conversation in {tmp_path}: {cause}."
    assert isinstance(caught.value, OSError) and caught.value.errno == code
    records, warnings = read_rollout(path)
    assert warnings == []  # the half-written line was cut off again
    assert [r.payload for r in records] == [{"n": 1}]
    writer.append("event", {"n": 2})  # writing works again: nothing left in the way
    writer.close()
    records, warnings = read_rollout(path)
    assert [r.payload for r in records] == [{"n": 1}, {"n": 2}] and warnings == []


def test_when_the_torn_part_cannot_be_cut_the_next_record_starts_a_new_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.jsonl"
    writer = RolloutWriter(path)
    real_write = os.write
    calls = 0

    def short_then_fail(fd: int, data: bytes) -> int:
        nonlocal calls
        calls += 1
        if calls == 1:
            return real_write(fd, data[:7])
        raise OSError(errno.EIO, "Input/output error")

    def no_truncate(fd: int, length: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "write", short_then_fail)
    monkeypatch.setattr(os, "ftruncate", no_truncate)
    with pytest.raises(RolloutWriteError, match="input/output error"):
        writer.append("event", {"n": 1})
    monkeypatch.undo()
    writer.append("event", {"n": 2})
    writer.close()

    records, warnings = read_rollout(path)
    assert [r.payload for r in records] == [{"n": 2}]
    assert warnings == ["Skipped line 1 of s.jsonl: not a valid record"]


def test_a_folder_that_cannot_be_written_fails_to_open_in_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def read_only_fs(*args: Any, **kwargs: Any) -> int:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(os, "open", read_only_fs)
    with pytest.raises(RolloutWriteError) as caught:
        RolloutWriter(tmp_path / "s.jsonl")
    assert str(caught.value) == (
        f"Could not save the conversation in {tmp_path}: the folder is read-only."
    )


def test_a_failed_sync_is_a_write_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    with RolloutWriter(tmp_path / "s.jsonl") as writer:
        writer.append("event", {})
        monkeypatch.setattr(os, "fsync", full)
        with pytest.raises(RolloutWriteError, match="the disk is full"):
            writer.sync()


def test_records_handed_to_a_consumer_as_read_are_those_a_read_returns(tmp_path: Path) -> None:
    """Resume replays the records as they are read (each line freed before the next is
    parsed): the consumer sees every record in order, and the warnings are the same."""
    path = tmp_path / "s.jsonl"
    with RolloutWriter(path) as writer:
        for n in range(5):
            writer.append("event", {"n": n})
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    path.write_text("\n".join([lines[0], "{not json", *lines[1:], lines[2]]) + "\n")
    records, warnings = read_rollout(path)

    seen: list[Any] = []

    def consume(stream: Any) -> None:
        seen.extend(stream)

    kept, streamed_warnings = read_rollout(path, consume)
    assert kept == []
    assert seen == records and [r.payload["n"] for r in seen] == [0, 1, 2, 3, 4]
    assert streamed_warnings == warnings and len(warnings) == 2  # the bad line, the repeat

    # A consumer that stops early still gets the warnings of the whole file.
    _kept, early = read_rollout(path, lambda stream: next(iter(stream)) and None)
    assert early == warnings
