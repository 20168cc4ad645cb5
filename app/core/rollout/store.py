"""The rollout: an append-only JSONL file per session, one record a line.

Each line is ``{"timestamp": "<ISO-8601 UTC, ms, Z>", "type": <str>, "payload": <dict>, "id":
<str>}``. The ``id`` is random and unique per record, so a line saved twice (a sync tool, a
copy) is recognised and read once; older rollouts without ids read as before. The store never
interprets payloads; replaying them (resume, transcript) is the session's job. Lines are only
ever appended: a failed append is rolled back rather than leaving half a line, and a crash can
at worst leave one incomplete last line, which :func:`repair_tail` fixes once.

This module owns where a rollout lives and opening one to continue it (lock, read, tail repair,
writer); writing is :mod:`.rollout_writer`'s, reading :mod:`.rollout_reader`'s, and their names
are importable from here as before.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..system.fastjson import dumps_line
from .lock import SessionInUse, SessionLock
from .open_progress import OPEN_PROGRESS, OpenProgress, progress_reporter
from .reader import DAMAGED_LINE_RECORD, RolloutRecord, parse_record, read_rollout
from .writer import (
    RolloutWriteError,
    RolloutWriter,
    new_record_id,
    utc_timestamp,
    write_cause,
)

__all__ = [
    "DAMAGED_LINE_RECORD",
    "OPEN_PROGRESS",
    "OpenProgress",
    "RecordTally",
    "ResumedRollout",
    "RolloutRecord",
    "RolloutWriteError",
    "RolloutWriter",
    "new_record_id",
    "parse_record",
    "progress_reporter",
    "read_rollout",
    "repair_tail",
    "resume_rollout",
    "rollout_path",
    "utc_timestamp",
    "write_cause",
]

# Session ids become file names: no separators, no leading dot, so no id escapes the directory.
_UNSAFE_ID = re.compile(r"[/\\\x00]|^\.|^$")


def rollout_path(sessions_dir: Path, session_id: str) -> Path:
    """Where the rollout of ``session_id`` lives. Rejects ids that are not plain file names."""
    if _UNSAFE_ID.search(session_id):
        raise ValueError(f"Not a valid session id: {session_id!r}")
    return sessions_dir / f"{session_id}.jsonl"


def repair_tail(path: Path) -> None:
    """Fix an unterminated last line once, so later opens neither warn nor misread it.

    A last line that is a complete record only lacks its newline: one is added. An incomplete
    one (the app stopped mid-write) is replaced by a :data:`DAMAGED_LINE_RECORD` record that
    keeps its bytes (base64), which readers skip silently. Nothing else is touched; a missing
    or empty file is left alone. Raises :class:`RolloutWriteError` when the file cannot be
    written (the session can then still be read).
    """
    try:
        fd = os.open(path, os.O_RDWR | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        return
    except OSError as exc:
        raise RolloutWriteError(path, exc) from exc
    try:
        size = os.lseek(fd, 0, os.SEEK_END)
        if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
            return
        start = _last_line_start(fd, size)
        torn = os.pread(fd, size - start, start)
        if parse_record(torn, 0) is not None:
            replacement, keep = b"\n", size  # a whole record: only the newline is missing
        else:
            payload = {"base64": base64.b64encode(torn).decode("ascii"), "bytes": len(torn)}
            replacement = dumps_line(
                {
                    "timestamp": utc_timestamp(),
                    "type": DAMAGED_LINE_RECORD,
                    "payload": payload,
                    "id": new_record_id(),
                }
            )
            keep = start
        os.pwrite(fd, replacement, keep)
        os.ftruncate(fd, keep + len(replacement))
        os.fsync(fd)
    except OSError as exc:
        raise RolloutWriteError(path, exc) from exc
    finally:
        os.close(fd)


def _last_line_start(fd: int, size: int) -> int:
    """The offset where the file's last line starts (after the last newline before it)."""
    end = size
    step = 64 * 1024
    while end > 0:
        begin = max(0, end - step)
        chunk = os.pread(fd, end - begin, begin)
        newline = chunk.rfind(b"\n")
        if newline >= 0:
            return begin + newline + 1
        end = begin
    return 0


@dataclass
class ResumedRollout:
    """A rollout opened to continue a session: its records, warnings in words, and the
    writer, or why there is none (``read_only``: the conversation can only be viewed)."""

    records: list[RolloutRecord]
    warnings: list[str]
    writer: RolloutWriter | None
    read_only: str | None = None


class RecordTally:
    """Counts the records a ``consume`` callback goes through (the list it replaces would have
    said how many there were)."""

    def __init__(self) -> None:
        self.count = 0

    def each(self, records: Iterable[RolloutRecord]) -> Iterator[RolloutRecord]:
        for record in records:
            self.count += 1
            yield record


def resume_rollout(
    path: Path,
    consume: Callable[[Iterable[RolloutRecord]], None] | None = None,
    *,
    lines: Callable[[int], None] | None = None,
) -> ResumedRollout:
    """Open an existing rollout to continue it: lock the session, read it, repair its tail
    once, and open its writer (which holds the lock until closed).

    When another process writes the session, or its file or folder cannot be written, the
    records are still returned, with ``writer=None`` and ``read_only`` saying why in words;
    nothing is written then. Raises ``FileNotFoundError`` when there is no such rollout.
    ``consume`` and ``lines``: as for :func:`read_rollout` (the records returned are then
    none).
    """
    if not path.exists():
        raise FileNotFoundError(path)
    try:
        lock = SessionLock.acquire(path)
    except SessionInUse as exc:
        records, warnings = read_rollout(path, consume, lines=lines)
        return ResumedRollout(records, warnings, None, str(exc))
    except OSError as exc:
        cause = RolloutWriteError(path, exc)
        records, warnings = read_rollout(path, consume, lines=lines)
        return ResumedRollout(records, warnings, None, _read_only_message(cause))
    try:
        records, warnings = read_rollout(path, consume, lines=lines)
        try:
            repair_tail(path)
            writer = RolloutWriter(path, lock=lock)
        except RolloutWriteError as exc:
            lock.release()
            return ResumedRollout(records, warnings, None, _read_only_message(exc))
    except BaseException:
        lock.release()
        raise
    return ResumedRollout(records, warnings, writer)


def _read_only_message(error: RolloutWriteError) -> str:
    return (
        f"This conversation is shown read-only: its file in {error.folder} cannot be written "
        f"({error.cause}). Nothing new can be added to it."
    )
