"""One writer per session: an OS file lock next to the rollout.

Two processes appending to one rollout interleave two conversations. The writer of a session
holds an exclusive, non-blocking lock on ``<id>.lock`` for as long as it writes; a second opener
is refused with :class:`SessionInUse` (it can still read and show the conversation). The lock is
the operating system's (``flock`` on POSIX, ``msvcrt.locking`` on Windows), so it dies with its
process: a crash never leaves a lock behind that blocks the session, and a lock file left by a
dead process is simply taken over. The file holds the owner's PID and host only to name them in
the message.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
from pathlib import Path
from types import TracebackType
from typing import Self

if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        with contextlib.suppress(OSError):
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)


class SessionInUse(Exception):
    """The session is being written by another window or process; open it read-only."""

    def __init__(self, path: Path, owner: str) -> None:
        self.path = path
        self.owner = owner  # "process 1234 on host", or "" when the file names no one
        by = f" by {owner}" if owner else ""
        super().__init__(
            f"This conversation is open in another Coco window{by}. It is shown read-only "
            "here; close it there to continue it."
        )


def lock_path(rollout: Path) -> Path:
    """The lock file of the rollout at ``rollout`` (``<id>.lock`` beside ``<id>.jsonl``)."""
    return rollout.with_suffix(".lock")


def _owner_text(path: Path) -> str:
    try:
        raw = path.read_text(encoding="utf-8", errors="replace").split()
    except OSError:
        return ""
    if len(raw) >= 2 and raw[0].isdigit():
        host = raw[1]
        here = socket.gethostname()
        if host == here and int(raw[0]) == os.getpid():
            return ""  # this process itself: another session object, not another window
        return f"process {raw[0]}" + ("" if host == here else f" on {host}")
    return ""


class SessionLock:
    """An exclusive lock on one session, held until :meth:`release` (or the process ends)."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, rollout: Path) -> SessionLock:
        """Lock the session whose rollout is ``rollout``; raises :class:`SessionInUse` when
        another open file holds it (another process, or another writer in this one).

        ``OSError`` from creating the lock file (a read-only folder) is left to the caller.
        """
        path = lock_path(rollout)
        path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o600)
            if not _try_lock(fd):
                os.close(fd)
                raise SessionInUse(path, _owner_text(path))
            # The holder may have released and deleted the file between our open and our lock:
            # then we hold a lock on a file no one else can see. Start again on the current one.
            try:
                current = os.stat(path)
            except FileNotFoundError:
                current = None
            mine = os.fstat(fd)
            if current is not None and (current.st_ino, current.st_dev) == (
                mine.st_ino,
                mine.st_dev,
            ):
                break
            _unlock(fd)
            os.close(fd)
        record = f"{os.getpid()} {socket.gethostname()}\n".encode()
        with contextlib.suppress(OSError):  # the PID is informative only
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, record)
        return cls(path, fd)

    @property
    def held(self) -> bool:
        """True until :meth:`release`."""
        return self._fd is not None

    def release(self) -> None:
        """Delete the lock file and release the lock (idempotent)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        # Unlink while still holding it: a waiting opener then fails its inode check and
        # retries on a fresh file instead of sharing the deleted one.
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        _unlock(fd)
        os.close(fd)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"SessionLock({str(self.path)!r}, held={self.held})"
