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

from pathlib import Path

from ..system.file_lock import FileLock, owner_text


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


class SessionLock(FileLock):
    """An exclusive lock on one session, held until :meth:`release` (or the process ends)."""

    @classmethod
    def acquire(cls, rollout: Path) -> SessionLock:
        """Lock the session whose rollout is ``rollout``; raises :class:`SessionInUse` when
        another open file holds it (another process, or another writer in this one).

        ``OSError`` from creating the lock file (a read-only folder) is left to the caller.
        """
        path = lock_path(rollout)
        lock = cls.try_acquire(path)
        if lock is None:
            raise SessionInUse(path, owner_text(path))
        return lock
