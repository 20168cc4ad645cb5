"""Writing a rollout: one compact line per record with its time and identity, told to a
listener once written, and failures named in words."""

from __future__ import annotations

import asyncio
import concurrent.futures
import errno
import json
import os
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from app.core.rollout.writer import (
    RolloutWriteError,
    RolloutWriter,
    new_record_id,
    utc_timestamp,
    write_cause,
)


def test_a_record_is_one_line_with_time_type_payload_and_id(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "s.jsonl"  # the folder is made
    with RolloutWriter(path) as writer:
        writer.append("event", {"kind": "note", "text": "é"})
        writer.append("event", {"kind": "note", "text": "second"})
    lines = path.read_bytes().splitlines()
    assert len(lines) == 2
    first, second = (json.loads(raw) for raw in lines)
    assert set(first) == {"timestamp", "type", "payload", "id"}
    assert first["payload"] == {"kind": "note", "text": "é"}
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", first["timestamp"])
    assert re.fullmatch(r"[0-9a-f]{16}", first["id"]) and first["id"] != second["id"]


def test_the_listener_hears_each_record_once_written(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    heard: list[tuple[str, str, dict[str, Any], int]] = []
    with RolloutWriter(path) as writer:
        writer.on_append = lambda kind, stamp, payload: heard.append(
            (kind, stamp, payload, len(path.read_bytes().splitlines()))
        )
        writer.append("event", {"n": 1})
        with pytest.raises(TypeError):
            writer.append("event", {"n": object()})  # not serialisable: nothing written
    assert [(kind, payload, lines) for kind, _, payload, lines in heard] == [
        ("event", {"n": 1}, 1)
    ]
    assert heard[0][1] == json.loads(path.read_bytes())["timestamp"]


def test_a_write_error_names_the_folder_and_the_cause(tmp_path: Path) -> None:
    error = RolloutWriteError(tmp_path / "s.jsonl", OSError(errno.ENOSPC, "No space left"))
    assert isinstance(error, OSError) and error.errno == errno.ENOSPC
    assert str(error) == f"Could not save the conversation in {tmp_path}: the disk is full."
    assert write_cause(OSError(errno.EROFS, "Read-only")) == "the folder is read-only"
    assert write_cause(OSError(errno.ENOTSUP, "Operation Not Supported")) == (
        "operation not supported"
    )


def test_a_write_error_keeps_what_it_was_made_from(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    error = RolloutWriteError(path, OSError(errno.EIO, "Input/output error"))
    assert error.path == path and error.folder == tmp_path
    assert error.args == (str(error),) and error.strerror == "Input/output error"
    assert write_cause(OSError()) == "oserror"  # no errno, no words: the error's kind


def test_a_new_rollout_is_the_owners_alone_and_an_old_one_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    umask = os.umask(0o277)  # a umask that would leave even the owner unable to write
    try:
        RolloutWriter(path).close()
    finally:
        os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o600
    path.chmod(0o640)  # the person's choice for a file that exists
    RolloutWriter(path).close()
    assert path.stat().st_mode & 0o777 == 0o640


def test_a_writer_closes_its_file_once_and_names_it(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    writer = RolloutWriter(path)
    assert repr(writer) == f"RolloutWriter({str(path)!r})"
    writer.close()
    writer.close()  # a second close does nothing
    assert writer.closed
    with pytest.raises(ValueError, match="is closed"):
        writer.fileno()


def test_a_session_lock_that_cannot_be_made_is_a_write_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    path = tmp_path / "file" / "s.jsonl"
    with pytest.raises(RolloutWriteError) as raised:
        RolloutWriter.exclusive(path)
    assert raised.value.path == path and raised.value.errno is not None
    assert str(raised.value) == (
        f"Could not save the conversation in {path.parent}: {raised.value.cause}."
    )
    assert raised.value.cause == write_cause(raised.value.__cause__)  # type: ignore[arg-type]


def test_timestamps_and_ids_have_the_rollout_format() -> None:
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", utc_timestamp())
    ids = {new_record_id() for _ in range(100)}
    assert len(ids) == 100 and all(re.fullmatch(r"[0-9a-f]{16}", i) for i in ids)


def test_copied_lines_go_in_byte_for_byte_and_whole_or_not_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "fork.jsonl"
    copies = b"".join(
        b'{"type": "event", "payload": {"n": %d}, "timestamp": "2026-01-01T00:00:00.000Z"}\n' % n
        for n in range(3)
    )
    with RolloutWriter(path) as writer:
        writer.append("session_meta", {"id": "f"})
        size = path.stat().st_size
        writer.append_lines(copies)
        assert path.read_bytes()[size:] == copies  # key order, spaces, no id: as they were
        with pytest.raises(ValueError, match="^append_lines takes whole lines, each ending in a"):
            writer.append_lines(copies[:-1])  # a line without its newline is not a line
        size = path.stat().st_size
        real_write = os.write
        calls = []

        def half_then_full(fd: int, data: bytes) -> int:
            calls.append(len(data))
            if len(calls) == 1:
                return real_write(fd, data[: len(data) // 2])
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr("app.core.rollout.writer.os.write", half_then_full)
        with pytest.raises(RolloutWriteError):
            writer.append_lines(copies)
        monkeypatch.undo()
        assert path.stat().st_size == size  # the half that was written is taken back
        writer.append_lines(b"")  # nothing to copy: nothing written
        assert path.stat().st_size == size


class _GatedExecutor(concurrent.futures.ThreadPoolExecutor):
    """A worker pool whose jobs wait until the test opens the gate."""

    def __init__(self) -> None:
        super().__init__(max_workers=1)
        self.gate = threading.Event()
        self.threads: list[int] = []

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        def gated() -> Any:
            self.gate.wait()
            self.threads.append(threading.get_ident())
            return fn(*args, **kwargs)

        return super().submit(gated)


async def _gated() -> _GatedExecutor:
    executor = _GatedExecutor()
    asyncio.get_running_loop().set_default_executor(executor)
    return executor


async def test_a_record_written_in_a_worker_keeps_its_place(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    executor = await _gated()
    heard: list[tuple[str, int]] = []
    with RolloutWriter(path) as writer:
        writer.on_append = lambda kind, _stamp, payload: heard.append(
            (payload["n"], threading.get_ident())
        )
        told: list[int] = []
        big = asyncio.ensure_future(writer.append_in_worker(
            "tool_output", {"n": 1, "text": "x" * 100_000},
            then=lambda: told.append(len(path.read_bytes().splitlines())),
        ))
        await asyncio.sleep(0)  # its first step: the place taken, the job handed over
        assert not big.done() and path.read_bytes() == b""  # the worker has not run yet
        # Its place is taken: no other append can go first.
        taken = not writer._lock.acquire(blocking=False)
        if not taken:
            writer._lock.release()
        assert taken
        later = threading.Thread(target=writer.append, args=("event", {"n": 2}))
        later.start()
        executor.gate.set()
        await big
        later.join()
    records = [json.loads(line) for line in path.read_bytes().splitlines()]
    assert [(r["type"], r["payload"]["n"]) for r in records] == [("tool_output", 1), ("event", 2)]
    assert told == [1]  # ``then`` ran once the line was written, before the next record
    assert heard[0] == (1, executor.threads[0]) != threading.get_ident()  # in the worker


async def test_a_cancelled_caller_still_gets_its_record_written(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    executor = await _gated()
    with RolloutWriter(path) as writer:
        big = asyncio.ensure_future(writer.append_in_worker("tool_output", {"n": 1}))
        await asyncio.sleep(0)
        big.cancel()
        await asyncio.sleep(0)
        assert not big.done()  # it waits for its write
        executor.gate.set()
        with pytest.raises(asyncio.CancelledError):
            await big
        writer.append("event", {"n": 2})  # the lock was given back
    assert [json.loads(line)["payload"]["n"] for line in path.read_bytes().splitlines()] == [
        1, 2
    ]


async def test_a_record_that_fails_in_the_worker_raises_and_writes_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    told: list[int] = []
    with RolloutWriter(path) as writer:
        with pytest.raises(TypeError):
            await writer.append_in_worker("event", {"n": object()}, then=lambda: told.append(1))
        os.close(writer.fileno())  # the descriptor gone: the write itself fails
        try:
            with pytest.raises(RolloutWriteError):
                await writer.append_in_worker("event", {"n": 1}, then=lambda: told.append(1))
        finally:
            writer._fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        writer.append("event", {"n": 2})  # the lock was given back each time
    assert told == []
    assert [json.loads(line)["payload"]["n"] for line in path.read_bytes().splitlines()] == [2]
