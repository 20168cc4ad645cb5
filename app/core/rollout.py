"""The rollout: an append-only JSONL file per session, one record a line.

Each line is ``{"timestamp": "<ISO-8601 UTC, ms, Z>", "type": <str>, "payload": <dict>}``. The
store never interprets payloads; replaying them (resume, transcript) is the session's job. Lines
are only ever appended, never rewritten, so a crash can at worst leave one incomplete last line.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from .fastjson import dumps_line, loads

# Session ids become file names: no separators, no leading dot, so no id escapes the directory.
_UNSAFE_ID = re.compile(r"[/\\\x00]|^\.|^$")


@dataclass(frozen=True)
class RolloutRecord:
    """One parsed line of a rollout; ``line_no`` is 1-based, as shown in warnings."""

    line_no: int
    timestamp: str
    type: str
    payload: dict[str, Any]


def utc_timestamp() -> str:
    """Now as ISO-8601 UTC with milliseconds and a ``Z`` suffix (the rollout's time format)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def rollout_path(sessions_dir: Path, session_id: str) -> Path:
    """Where the rollout of ``session_id`` lives. Rejects ids that are not plain file names."""
    if _UNSAFE_ID.search(session_id):
        raise ValueError(f"Not a valid session id: {session_id!r}")
    return sessions_dir / f"{session_id}.jsonl"


class RolloutWriter:
    """Appends records to one rollout file; each record is written and flushed at once."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0)
        existed = path.exists()
        fd = os.open(path, flags, 0o600)
        if not existed and hasattr(os, "fchmod"):
            # The umask can only narrow 0o600, but make the intent explicit.
            os.fchmod(fd, 0o600)
        self._file = os.fdopen(fd, "ab")
        self._lock = threading.Lock()

    @property
    def closed(self) -> bool:
        """True once :meth:`close` has run."""
        return self._file.closed

    def append(self, type: str, payload: dict[str, Any]) -> None:
        """Write one record line and flush it, so another reader sees it immediately."""
        # Encode first: a payload that cannot be serialised raises before anything is written.
        line = dumps_line({"timestamp": utc_timestamp(), "type": type, "payload": payload})
        with self._lock:
            if self._file.closed:
                raise ValueError(f"Rollout {self.path.name} is closed")
            self._file.write(line)
            self._file.flush()

    def sync(self) -> None:
        """Flush and fsync, so the records survive a power loss (called at turn end)."""
        with self._lock:
            if self._file.closed:
                return
            self._file.flush()
            os.fsync(self._file.fileno())

    def close(self) -> None:
        """Flush and close the file; further appends raise ``ValueError``."""
        with self._lock:
            if not self._file.closed:
                self._file.close()

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
    return RolloutRecord(
        line_no, timestamp if isinstance(timestamp, str) else str(timestamp), kind, payload
    )


def read_rollout(path: Path) -> tuple[list[RolloutRecord], list[str]]:
    """Read every record of a rollout, skipping bad lines with a warning naming each.

    Blank lines are ignored silently. An unparsable last line without a trailing newline is
    reported as incomplete (the app stopped mid-write). Raises ``FileNotFoundError`` if the file
    does not exist.
    """
    data = path.read_bytes()
    lines = data.split(b"\n")
    # With a trailing newline the split ends in b""; otherwise the last element is unterminated.
    unterminated_index = len(lines) - 1 if lines[-1].strip() else -1
    records: list[RolloutRecord] = []
    warnings: list[str] = []
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        line_no = index + 1
        record = parse_record(line, line_no)
        if record is not None:
            records.append(record)
        elif index == unterminated_index:
            warnings.append(
                f"Skipped line {line_no} of {path.name}: incomplete last line "
                "(the app may have stopped while writing)"
            )
        else:
            warnings.append(f"Skipped line {line_no} of {path.name}: not a valid record")
    return records, warnings


def repair_tail(path: Path) -> None:
    """End an unterminated last line with a newline so the next record starts on its own line.

    Existing bytes are never changed or removed; a missing or empty file is left alone.
    """
    try:
        with open(path, "rb+") as file:
            size = file.seek(0, os.SEEK_END)
            if size == 0:
                return
            file.seek(size - 1)
            if file.read(1) != b"\n":
                file.seek(0, os.SEEK_END)
                file.write(b"\n")
                file.flush()
                os.fsync(file.fileno())
    except FileNotFoundError:
        return
