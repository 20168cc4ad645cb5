"""The sessions open in this process, by their rollout's absolute path: a session registers
when it opens and leaves when it shuts down (weak, so a session dropped unclosed leaves too)."""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import Protocol


class OpenSession(Protocol):
    """What the registry needs of a session (a :class:`~app.core.session.coordinator.Session`): the
    registry sits below the session and never imports it."""

    @property
    def rollout_path(self) -> Path: ...


_OPEN: weakref.WeakValueDictionary[Path, OpenSession] = weakref.WeakValueDictionary()


def _key(path: Path) -> Path:
    return Path(path).absolute()


def track_open(session: OpenSession) -> None:
    """Called by a session once it is open: renames and deletions go through it. The first
    opener is the one that writes; a later one in this process only shows it read-only."""
    _OPEN.setdefault(_key(session.rollout_path), session)


def forget_open(session: OpenSession) -> None:
    """Called by a session when it shuts down."""
    key = _key(session.rollout_path)
    if _OPEN.get(key) is session:
        del _OPEN[key]


def open_at(path: Path) -> OpenSession | None:
    """The session open in this process whose rollout is ``path``, if there is one."""
    return _OPEN.get(_key(path))
