"""Writing a rollout: records appended one line at a time, unbuffered, never half a line,
and a failed write raised as a :class:`RolloutWriteError` that names its cause in words."""

from __future__ import annotations

import asyncio
import errno
import os
import secrets
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from ..system.fastjson import dumps_line
from .lock import SessionLock

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


def utc_timestamp() -> str:
    """Now as ISO-8601 UTC with milliseconds and a ``Z`` suffix (the rollout's time format)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_record_id() -> str:
    """A random record identity (64 bits: collisions within one file are not a concern)."""
    return secrets.token_hex(8)


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
        with self._lock:
            self._append_held(type, payload)

    async def append_in_worker(
        self, type: str, payload: dict[str, Any], then: Callable[[], None] | None = None
    ) -> None:
        """:meth:`append`, the line encoded and written in a worker thread: a cut tool
        output's whole (10 MB) held the event loop 16 ms. Its place among the records is
        taken now: an :meth:`append` made meanwhile waits for it and comes after it. ``then``
        runs in the worker once the line is written, still in that place (before any other
        append). The write finishes even when the caller is cancelled meanwhile (it raises
        then, once written)."""
        self._lock.acquire()
        try:  # handed to the worker at once: the job runs (and releases the lock) whatever
            work = asyncio.get_running_loop().run_in_executor(
                None, self._append_then_release, type, payload, then
            )
        except BaseException:
            self._lock.release()
            raise
        try:
            await asyncio.shield(work)  # a cancelled caller never cancels the job
        except asyncio.CancelledError:
            await work
            raise

    def _append_then_release(
        self, type: str, payload: dict[str, Any], then: Callable[[], None] | None
    ) -> None:
        try:
            self._append_held(type, payload)
            if then is not None:
                then()
        finally:
            self._lock.release()

    def _append_held(self, type: str, payload: dict[str, Any]) -> None:
        """:meth:`append` with the lock held; the listener is told in the same order."""
        # Encode first: a payload that cannot be serialised raises before anything is written.
        timestamp = utc_timestamp()
        line = dumps_line(
            {"timestamp": timestamp, "type": type, "payload": payload, "id": new_record_id()}
        )
        self._write_held(line)
        if self.on_append is not None:
            self.on_append(type, timestamp, payload)

    def append_lines(self, lines: bytes) -> None:
        """Write whole lines read from another rollout (each ending in a newline), byte for
        byte as they were, in one write: all of them or, on a failure, none. A fork copies
        thousands this way, without encoding their records again."""
        if lines and not lines.endswith(b"\n"):
            raise ValueError("append_lines takes whole lines, each ending in a newline")
        with self._lock:
            self._write_held(lines)

    def _write_held(self, data: bytes) -> None:
        """Append ``data`` (whole lines) entirely, or take back what a failed write left; the
        lock is held."""
        fd = self.fileno()
        if self._torn:
            data = b"\n" + data
        written = 0
        try:
            while written < len(data):
                written += os.write(fd, data[written:])
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
