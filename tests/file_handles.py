"""What this process holds open, read from ``/proc/self/fd`` (Linux), and a Windows-like move
that refuses a file still open: the tests of renaming and deleting sessions use both."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

FD_DIR = Path("/proc/self/fd")
needs_proc = pytest.mark.skipif(not FD_DIR.is_dir(), reason="needs /proc/self/fd (Linux)")


def open_handles(path: Path) -> int:
    """How many file descriptors of this process are open on ``path`` (renames followed)."""
    target = os.path.realpath(path)
    count = 0
    for name in os.listdir(FD_DIR):
        try:
            if os.readlink(FD_DIR / name) == target:
                count += 1
        except OSError:  # closed meanwhile, or the listing's own descriptor
            continue
    return count


def windows_like_replace(real: Callable[..., None]) -> Callable[..., None]:
    """``os.replace`` as Windows does it: a file this process still has open cannot move."""

    def replace(src: str | os.PathLike[str], dst: str | os.PathLike[str], **kw: object) -> None:
        if open_handles(Path(src)):
            raise PermissionError(
                13,
                "The process cannot access the file because it is being used by another process",
                str(src),
            )
        real(src, dst, **kw)

    return replace


def count_writers(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """From now on, for every record appended to a rollout: how many handles this process had
    open on that file (1 while its one writer holds it)."""
    from app.core.rollout.store import RolloutWriter

    seen: list[int] = []
    real = RolloutWriter.append

    def append(self: RolloutWriter, type: str, payload: dict[str, object]) -> None:
        seen.append(open_handles(self.path))
        real(self, type, payload)

    monkeypatch.setattr(RolloutWriter, "append", append)
    return seen
