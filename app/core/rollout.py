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
import time
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, NamedTuple, Self, cast

from orjson import loads as orjson_loads

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


# The file is read in steps of this many bytes, so progress can be told as it goes.
READ_STEP = 4 * 1024 * 1024


class OpenProgress:
    """How far opening a session has got, for a front end to show while it waits.

    The core reports into it (from its worker thread): ``stage`` is ``"reading"`` (the file),
    ``"counting"`` (tokens of long texts) or a stage the front end reports itself; ``done``
    and ``total`` are in bytes (reading) or characters. A front end polls it; plain attribute
    writes, so reading them from another thread is safe."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.stage = "reading"
        self.done = 0
        self.total = 0
        self.finished = False

    def report(self, stage: str, done: int, total: int) -> None:
        self.stage, self.done, self.total = stage, done, total


# The progress the current open reports to (set by the front end around ``Session.open``;
# ``asyncio.to_thread`` carries it into the worker thread).
OPEN_PROGRESS: ContextVar[OpenProgress | None] = ContextVar("open_progress", default=None)


def progress_reporter(stage: str) -> Callable[[int, int], None] | None:
    """A ``(done, total)`` callback reporting ``stage`` to the current open's progress, or
    None when nobody follows it."""
    progress = OPEN_PROGRESS.get()
    if progress is None:
        return None
    return lambda done, total: progress.report(stage, done, total)


def _read_in_steps(path: Path) -> bytes | bytearray:
    """The file's bytes, read :data:`READ_STEP` at a time when someone follows the progress.

    Grown step by step (a large buffer grows in place): allocating and zeroing the whole
    buffer first, or joining the steps at the end, are single calls of 50+ ms for 50 MB."""
    report = progress_reporter("reading")
    if report is None:
        return path.read_bytes()
    with path.open("rb") as file:
        total = os.fstat(file.fileno()).st_size
        buffer = bytearray()
        report(0, total)
        while chunk := file.read(READ_STEP):
            buffer += chunk
            report(len(buffer), max(total, len(buffer)))
    return buffer


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


class RolloutRecord(NamedTuple):
    """One parsed line of a rollout; ``line_no`` is 1-based, as shown in warnings. ``id`` is
    the record's identity (``None`` in rollouts written before records had one). A named
    tuple: a long session has tens of thousands, and a frozen dataclass took several times
    longer to build."""

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
        # Told of each record once it is written (type, timestamp, payload): the recall index.
        self.on_append: Callable[[str, str, dict[str, Any]], None] | None = None
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
        timestamp = utc_timestamp()
        line = dumps_line(
            {"timestamp": timestamp, "type": type, "payload": payload, "id": new_record_id()}
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
        if self.on_append is not None:
            self.on_append(type, timestamp, payload)

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
    except TypeError:  # a view of the line, which only orjson reads: ``json`` gets bytes
        try:
            data = loads(bytes(line))
        except ValueError:
            return None
    except ValueError:  # JSONDecodeError and UnicodeDecodeError alike
        return None
    return _record_from(data, line_no)


def _record_from(data: Any, line_no: int) -> RolloutRecord | None:
    """The record a parsed line holds, or ``None`` if it has no ``type`` and ``payload``."""
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


# A line this long has its long strings decoded in steps (see :func:`_loads_huge`).
HUGE_LINE_BYTES = 4 * 1024 * 1024
_HUGE_STRING_BYTES = 1024 * 1024
_DECODE_STEP = 1024 * 1024
_BACKSLASH = 0x5C
_MAX_QUOTES = 200_000  # quotes scanned in Python before the plain parser is used instead
_MAX_BACKOFF = 4096


def _string_end(data: bytes | bytearray, after: int, end: int) -> int:
    """The offset of the quote closing the JSON string whose content starts at ``after``,
    -1 if there is none before ``end``."""
    close = after
    while True:
        close = data.find(b'"', close, end)
        if close < 0:
            return -1
        back = close - 1
        while back >= after and data[back] == _BACKSLASH:
            back -= 1
        if (close - 1 - back) % 2 == 0:  # not escaped
            return close
        close += 1


def _long_strings(data: bytes | bytearray, start: int, end: int) -> list[tuple[int, int]] | None:
    """The (start, end) of the content of each string of ``data[start:end]`` longer than
    ``_HUGE_STRING_BYTES``; None when the line is not worth it or not well formed."""
    spans: list[tuple[int, int]] = []
    pos = start
    for _ in range(_MAX_QUOTES):
        opening = data.find(b'"', pos, end)
        if opening < 0:
            return spans
        close = _string_end(data, opening + 1, end)
        if close < 0:
            return None
        if close - opening - 1 >= _HUGE_STRING_BYTES:
            spans.append((opening + 1, close))
        pos = close + 1
    return None


def _safe_cut(data: bytes | bytearray, start: int, cut: int) -> bool:
    """True when a JSON string's content (from ``start``) can be split before ``cut``: not
    inside a UTF-8 sequence, an escape, or between the two halves of a surrogate pair."""
    if 0x80 <= data[cut] < 0xC0:
        return False
    last = data.rfind(b"\\", max(start, cut - 12), cut)
    if last < 0:
        return True
    first = last
    while first > start and data[first - 1] == _BACKSLASH:
        first -= 1
    if (last - first) % 2 == 1:
        return True  # an even run: escaped backslashes, each pair complete before ``cut``
    # ``last`` starts an escape: \uXXXX is six bytes, the others two.
    if data[last + 1 : last + 2] != b"u":
        return cut >= last + 2
    if cut < last + 6:
        return False
    high = data[last + 2 : last + 4].lower()
    return not (cut == last + 6 and high in (b"d8", b"d9", b"da", b"db"))


def _decode_in_steps(data: bytes | bytearray, start: int, end: int) -> str | None:
    """The JSON string content ``data[start:end]`` decoded :data:`_DECODE_STEP` bytes at a
    time (never inside an escape or a UTF-8 sequence); None when no such place is found."""
    parts: list[str] = []
    pos = start
    while pos < end:
        cut = min(end, pos + _DECODE_STEP)
        if cut < end:
            floor = max(pos + 1, cut - _MAX_BACKOFF)
            while cut > floor and not _safe_cut(data, pos, cut):
                cut -= 1
            if cut <= floor:
                return None
        part = loads(b'"' + bytes(data[pos:cut]) + b'"')
        if not isinstance(part, str):
            return None
        parts.append(part)
        pos = cut
    return "".join(parts)


def _put_back(value: Any, texts: dict[str, str]) -> Any:
    """``value`` with each placeholder string replaced by the text it stands for."""
    if isinstance(value, str):
        return texts.get(value, value)
    if isinstance(value, list):
        return [_put_back(entry, texts) for entry in value]
    if isinstance(value, dict):
        return {key: _put_back(entry, texts) for key, entry in value.items()}
    return value


def _loads_huge(data: bytes | bytearray, start: int, end: int) -> Any:
    """The JSON value of the line ``data[start:end]``, its long strings decoded in steps.

    One parse of a 50 MB line holds the GIL for 100+ ms, blocking the window's thread while
    a worker thread reads the session; in steps, the longest hold is the final joining of each
    long string. Falls back to one parse when the line does not lend itself to it."""
    spans = _long_strings(data, start, end)
    if not spans:
        return loads(bytes(data[start:end]))
    pieces: list[bytes] = []
    texts: dict[str, str] = {}
    pos = start
    for index, (first, last) in enumerate(spans):
        text = _decode_in_steps(data, first, last)
        if text is None:
            return loads(bytes(data[start:end]))
        placeholder = f"\x00coco-long-string-{index}\x00"
        texts[placeholder] = text
        pieces.append(bytes(data[pos:first]))
        pieces.append(b"\\u0000coco-long-string-%d\\u0000" % index)
        pos = last
    pieces.append(bytes(data[pos:end]))
    return _put_back(loads(b"".join(pieces)), texts)


def _line_spans(data: bytes | bytearray) -> list[tuple[int, int]]:
    """Where the lines of ``data`` (split at LF) start and end: splitting a 50 MB file copied
    all of it in one call, a block of 50–100 ms for whoever waits for the GIL."""
    spans: list[tuple[int, int]] = []
    start = 0
    while True:
        end = data.find(b"\n", start)
        if end < 0:
            spans.append((start, len(data)))
            return spans
        spans.append((start, end))
        start = end + 1


def _parse_line(data: bytes | bytearray, start: int, end: int, line_no: int) -> RolloutRecord | None:
    if end - start <= HUGE_LINE_BYTES:
        with memoryview(data) as view:
            return parse_record(cast(bytes, view[start:end]), line_no)
    try:
        return _record_from(_loads_huge(data, start, end), line_no)
    except ValueError:
        return None


def _blank(data: bytes | bytearray, start: int, end: int) -> bool:
    """True when ``data[start:end]`` holds only whitespace (looking at its start first)."""
    if data[start : min(end, start + 64)].strip():
        return False
    return end - start <= 64 or not data[start:end].strip()


def read_rollout(
    path: Path, consume: Callable[[Iterable[RolloutRecord]], None] | None = None
) -> tuple[list[RolloutRecord], list[str]]:
    """Read every record of a rollout, skipping bad lines and repeated records with warnings.

    Blank lines and repaired damaged lines (:data:`DAMAGED_LINE_RECORD`) are ignored silently.
    One bad line is named in its warning (an unparsable unterminated last line as incomplete:
    the app stopped mid-write); several are summarised in one warning. A record whose ``id``
    was already read (the same line saved twice) is skipped, with one warning for all of them.
    Raises ``FileNotFoundError`` if the file does not exist.

    With ``consume``, the records are handed to it as they are read (an iterable it must go
    through) and not kept: what a line held besides what ``consume`` keeps is freed before
    the next line is parsed, so its memory is reused at once instead of leaving tens of
    thousands of holes between the objects a long session keeps (megabytes the process never
    gave back). The list returned is then empty.
    """
    warnings: list[str] = []
    records = _records(path, warnings)
    if consume is None:
        return list(records), warnings
    consume(records)
    for _ in records:  # whatever ``consume`` left is read too (its warnings count)
        pass
    return [], warnings


def _records(path: Path, warnings: list[str]) -> Iterator[RolloutRecord]:
    """The records of :func:`read_rollout`, one at a time; ``warnings`` gets its warnings
    once the last has been read."""
    data = _read_in_steps(path)
    lines = _line_spans(data)
    # With a trailing newline the last line is empty; otherwise it is unterminated.
    unterminated_index = len(lines) - 1 if not _blank(data, *lines[-1]) else -1
    bad: list[int] = []
    seen_ids: set[str] = set()
    repeated = 0
    with memoryview(data) as view:
        for index, (start, end) in enumerate(lines):
            if start == end:
                continue
            record = None
            if end - start <= HUGE_LINE_BYTES:  # the usual line, parsed here without detours
                try:
                    record = _record_from(orjson_loads(view[start:end]), index + 1)
                except ValueError:  # orjson refused it: the careful path says why
                    record = _parse_line(data, start, end, index + 1)
            else:
                record = _parse_line(data, start, end, index + 1)
            if record is None:
                if not _blank(data, start, end):
                    bad.append(index + 1)
                continue
            if record.id is not None:
                if record.id in seen_ids:
                    repeated += 1
                    continue
                seen_ids.add(record.id)
            if record.type != DAMAGED_LINE_RECORD:
                yield record
            del record
    warnings.extend(_bad_lines_warning(path.name, bad, unterminated_index + 1 or None))
    if repeated:
        plural = "s" if repeated != 1 else ""
        warnings.append(
            f"Skipped {repeated} repeated record{plural} in {path.name} (the same line was "
            "saved more than once); each is shown once"
        )


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
    path: Path, consume: Callable[[Iterable[RolloutRecord]], None] | None = None
) -> ResumedRollout:
    """Open an existing rollout to continue it: lock the session, read it, repair its tail
    once, and open its writer (which holds the lock until closed).

    When another process writes the session, or its file or folder cannot be written, the
    records are still returned, with ``writer=None`` and ``read_only`` saying why in words;
    nothing is written then. Raises ``FileNotFoundError`` when there is no such rollout.
    ``consume``: as for :func:`read_rollout` (the records returned are then none).
    """
    if not path.exists():
        raise FileNotFoundError(path)
    try:
        lock = SessionLock.acquire(path)
    except SessionInUse as exc:
        records, warnings = read_rollout(path, consume)
        return ResumedRollout(records, warnings, None, str(exc))
    except OSError as exc:
        cause = RolloutWriteError(path, exc)
        records, warnings = read_rollout(path, consume)
        return ResumedRollout(records, warnings, None, _read_only_message(cause))
    try:
        records, warnings = read_rollout(path, consume)
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
