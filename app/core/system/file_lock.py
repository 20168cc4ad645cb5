"""An exclusive lock on a file, held by one open file of one process: the operating system's
(``flock`` on POSIX, ``msvcrt.locking`` on Windows), so it dies with its process and a crash
never leaves a lock behind. Used for one writer per session and one Coco per profile."""

from __future__ import annotations

import contextlib
import os
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


def _hostname() -> str:
    # os.uname is what socket.gethostname reads on POSIX, without importing socket (and
    # selectors) before the window's first paint, where the instance lock is taken.
    if hasattr(os, "uname"):
        return os.uname().nodename
    import socket  # pragma: no cover - Windows

    return socket.gethostname()


class FileLock:
    """An exclusive lock on the file at ``path``, held until :meth:`release` (or the process
    ends). The file holds the owner's PID and host, to name them in messages."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def try_acquire(cls, path: Path) -> Self | None:
        """Lock ``path`` (created if missing), or None when another open file holds it (another
        process, or another holder in this one). ``OSError`` from creating the file is left to
        the caller."""
        path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o600)
            if not _try_lock(fd):
                os.close(fd)
                return None
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
        record = f"{os.getpid()} {_hostname()}\n".encode()
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
        return f"{type(self).__name__}({str(self.path)!r}, held={self.held})"


def owner_text(path: Path) -> str:
    """Who holds the lock file at ``path``, in words ("process 1234", "process 1234 on host"),
    or "" when the file names no one or names this process."""
    try:
        raw = path.read_text(encoding="utf-8", errors="replace").split()
    except OSError:
        return ""
    if len(raw) >= 2 and raw[0].isdigit():
        host = raw[1]
        here = _hostname()
        if host == here and int(raw[0]) == os.getpid():
            return ""  # this process itself: another holder object, not another window
        return f"process {raw[0]}" + ("" if host == here else f" on {host}")
    return ""
