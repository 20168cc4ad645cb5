"""How far opening a session has got: the progress object a front end polls, and the
context variable through which the core's reading and counting steps report into it."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextvars import ContextVar


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
