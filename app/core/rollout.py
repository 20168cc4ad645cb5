"""The rollout: an append-only JSONL file per session, one record a line.

Each line is ``{"timestamp": "<ISO-8601 UTC, ms, Z>", "type": <str>, "payload": <dict>, "id":
<str>}``. The ``id`` is random and unique per record, so a line saved twice (a sync tool, a
copy) is recognised and read once; older rollouts without ids read as before. The store never
interprets payloads; replaying them (resume, transcript) is the session's job. Lines are only
ever appended: a failed append is rolled back rather than leaving half a line, and a crash can
at worst leave one incomplete last line, which :func:`repair_tail` fixes once.
"""

from __future__ import annotations

import base64
import errno
import os
import re
import secrets
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from .fastjson import dumps_line, loads
from .session_lock import SessionInUse, SessionLock

# Session ids become file names: no separators, no leading dot, so no id escapes the directory.
_UNSAFE_ID = re.compile(r"[/\\\x00]|^\.|^$")

# What an incomplete last line becomes once repaired: a record keeping its bytes, which
# readers skip silently (the damage was reported once, on the open that repaired it).
DAMAGED_LINE_RECORD = "damaged_line"
# Up to this many bad lines are each named in a warning; more are summarised in one.
_MAX_NAMED_BAD_LINES = 3

# errno → the cause of a failed write, in words.
_WRITE_CAUSES: dict[int, str] = {
    errno.ENOSPC: "the disk is full",
    errno.EROFS: "the folder is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EIO: "the disk reported an input/output error",
    errno.ENOENT: "the folder no longer exists",
}
if hasattr(errno, "EDQUOT"):
    _WRITE_CAUSES[errno.EDQUOT] = "the disk quota is full"


class RolloutWriteError(OSError):
    """A conversation could not be saved. ``str()`` names the folder and the cause in words
    ("the disk is full", "the folder is read-only", "permission denied"); ``errno`` is the
    original error's. An ``OSError``, so handlers written for file errors still catch it."""

    def __init__(self, path: Path, error: OSError) -> None:
        self.path = path
        self.folder = path.parent
        self.cause = write_cause(error)
        self.message = f"Could not save the conversation in {self.folder}: {self.cause}."
        super().__init__(self.message)
        self.errno = error.errno
        self.strerror = error.strerror

    def __str__(self) -> str:
        return self.message


def write_cause(error: OSError) -> str:
    """Why a write failed, in words a user understands."""
    if error.errno in _WRITE_CAUSES:
        return _WRITE_CAUSES[error.errno]
    return (error.strerror or type(error).__name__).lower()


@dataclass(frozen=True)
class RolloutRecord:
    """One parsed line of a rollout; ``line_no`` is 1-based, as shown in warnings. ``id`` is
    the record's identity (``None`` in rollouts written before records had one)."""

    line_no: int
    timestamp: str
    type: str
    payload: dict[str, Any]
    id: str | None = None


def utc_timestamp() -> str:
    """Now as ISO-8601 UTC with milliseconds and a ``Z`` suffix (the rollout's time format)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_record_id() -> str:
    """A random record identity (64 bits: collisions within one file are not a concern)."""
    return secrets.token_hex(8)


def rollout_path(sessions_dir: Path, session_id: str) -> Path:
    """Where the rollout of ``session_id`` lives. Rejects ids that are not plain file names."""
    if _UNSAFE_ID.search(session_id):
        raise ValueError(f"Not a valid session id: {session_id!r}")
    return sessions_dir / f"{session_id}.jsonl"


class RolloutWriter:
    """Appends records to one rollout file; each record is written at once, unbuffered.

    Every ``OSError`` (opening, appending, syncing) is raised as :class:`RolloutWriteError`.
    A failed append leaves no partial line: what it wrote is cut off again, or, if even that
    fails, the next append starts on a fresh line. ``lock``, when given, is the session's
    lock; the writer owns it and releases it on :meth:`close`.
    """

    def __init__(self, path: Path, *, lock: SessionLock | None = None) -> None:
        self.path = path
        self._lock_file = lock
        self._lock = threading.Lock()
        self._torn = False  # a failed append left bytes that could not be cut off
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0)
            existed = path.exists()
            fd = os.open(path, flags, 0o600)
        except OSError as exc:
            if lock is not None:
                lock.release()
            raise RolloutWriteError(path, exc) from exc
        if not existed and hasattr(os, "fchmod"):
            # The umask can only narrow 0o600, but make the intent explicit.
            os.fchmod(fd, 0o600)
        self._fd: int | None = fd

    @classmethod
    def exclusive(cls, path: Path) -> RolloutWriter:
        """A writer holding the session's lock; raises :class:`SessionInUse` when another
        writer has it, :class:`RolloutWriteError` when the file cannot be opened."""
        try:
            lock = SessionLock.acquire(path)
        except OSError as exc:
            raise RolloutWriteError(path, exc) from exc
        return cls(path, lock=lock)

    @property
    def closed(self) -> bool:
        """True once :meth:`close` has run."""
        return self._fd is None

    def fileno(self) -> int:
        """The file descriptor written to (raises ``ValueError`` once closed)."""
        if self._fd is None:
            raise ValueError(f"Rollout {self.path.name} is closed")
        return self._fd

    def append(self, type: str, payload: dict[str, Any]) -> None:
        """Write one record line, so another reader sees it immediately.

        Raises ``ValueError`` when closed, ``TypeError`` for a payload that cannot be
        serialised (nothing is written) and :class:`RolloutWriteError` when the write fails.
        """
        # Encode first: a payload that cannot be serialised raises before anything is written.
        line = dumps_line(
            {"timestamp": utc_timestamp(), "type": type, "payload": payload, "id": new_record_id()}
        )
        with self._lock:
            fd = self.fileno()
            if self._torn:
                line = b"\n" + line
            written = 0
            try:
                while written < len(line):
                    written += os.write(fd, line[written:])
            except OSError as exc:
                self._undo_partial_write(fd, written)
                raise RolloutWriteError(self.path, exc) from exc
            self._torn = False

    def _undo_partial_write(self, fd: int, written: int) -> None:
        """Cut off the ``written`` bytes of a failed append, so no half line stays behind."""
        if written == 0:
            return
        try:
            os.ftruncate(fd, os.fstat(fd).st_size - written)
        except OSError:
            self._torn = True

    def sync(self) -> None:
        """fsync, so the records survive a power loss (called at turn end)."""
        with self._lock:
            if self._fd is None:
                return
            try:
                os.fsync(self._fd)
            except OSError as exc:
                raise RolloutWriteError(self.path, exc) from exc

    def close(self) -> None:
        """Close the file and release the session's lock; further appends raise
        ``ValueError``."""
        with self._lock:
            fd, self._fd = self._fd, None
            if fd is not None:
                os.close(fd)
            if self._lock_file is not None:
                self._lock_file.release()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RolloutWriter({str(self.path)!r})"


def parse_record(line: bytes, line_no: int) -> RolloutRecord | None:
    """One line as a record, or ``None`` if it is not valid JSON with ``type`` and ``payload``."""
    try:
        data = loads(line)
    except ValueError:  # JSONDecodeError and UnicodeDecodeError alike
        return None
    if not isinstance(data, dict):
        return None
    kind = data.get("type")
    payload = data.get("payload")
    if not isinstance(kind, str) or not isinstance(payload, dict):
        return None
    timestamp = data.get("timestamp", "")
    record_id = data.get("id")
    return RolloutRecord(
        line_no,
        timestamp if isinstance(timestamp, str) else str(timestamp),
        kind,
        payload,
        record_id if isinstance(record_id, str) else None,
    )


def _bad_lines_warning(name: str, bad: list[int], incomplete_last: int | None) -> list[str]:
    """The warnings for skipped lines: each named when there are a few, else one summary."""
    if len(bad) <= _MAX_NAMED_BAD_LINES:
        return [
            f"Skipped line {line_no} of {name}: incomplete last line "
            "(the app may have stopped while writing)"
            if line_no == incomplete_last
            else f"Skipped line {line_no} of {name}: not a valid record"
            for line_no in bad
        ]
    shown = ", ".join(str(n) for n in bad[:5])
    more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
    summary = (
        f"Skipped {len(bad)} damaged lines of {name} (lines {shown}{more}): the file is "
        "partly unreadable, and what could be read is shown"
    )
    return [summary]


def read_rollout(path: Path) -> tuple[list[RolloutRecord], list[str]]:
    """Read every record of a rollout, skipping bad lines and repeated records with warnings.

    Blank lines and repaired damaged lines (:data:`DAMAGED_LINE_RECORD`) are ignored silently.
    One bad line is named in its warning (an unparsable unterminated last line as incomplete:
    the app stopped mid-write); several are summarised in one warning. A record whose ``id``
    was already read (the same line saved twice) is skipped, with one warning for all of them.
    Raises ``FileNotFoundError`` if the file does not exist.
    """
    data = path.read_bytes()
    lines = data.split(b"\n")
    # With a trailing newline the split ends in b""; otherwise the last element is unterminated.
    unterminated_index = len(lines) - 1 if lines[-1].strip() else -1
    records: list[RolloutRecord] = []
    bad: list[int] = []
    seen_ids: set[str] = set()
    repeated = 0
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        line_no = index + 1
        record = parse_record(line, line_no)
        if record is None:
            bad.append(line_no)
            continue
        if record.id is not None:
            if record.id in seen_ids:
                repeated += 1
                continue
            seen_ids.add(record.id)
        if record.type != DAMAGED_LINE_RECORD:
            records.append(record)
    warnings = _bad_lines_warning(path.name, bad, unterminated_index + 1 or None)
    if repeated:
        plural = "s" if repeated != 1 else ""
        warnings.append(
            f"Skipped {repeated} repeated record{plural} in {path.name} (the same line was "
            "saved more than once); each is shown once"
        )
    return records, warnings


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


def resume_rollout(path: Path) -> ResumedRollout:
    """Open an existing rollout to continue it: lock the session, read it, repair its tail
    once, and open its writer (which holds the lock until closed).

    When another process writes the session, or its file or folder cannot be written, the
    records are still returned, with ``writer=None`` and ``read_only`` saying why in words;
    nothing is written then. Raises ``FileNotFoundError`` when there is no such rollout.
    """
    if not path.exists():
        raise FileNotFoundError(path)
    try:
        lock = SessionLock.acquire(path)
    except SessionInUse as exc:
        records, warnings = read_rollout(path)
        return ResumedRollout(records, warnings, None, str(exc))
    except OSError as exc:
        cause = RolloutWriteError(path, exc)
        records, warnings = read_rollout(path)
        return ResumedRollout(records, warnings, None, _read_only_message(cause))
    try:
        records, warnings = read_rollout(path)
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
