"""The window's thread gets the interpreter back quickly while worker threads run Python.

Opening a saved session reads, counts and prepares it in worker threads (``Session.open``,
``replay_prep``), pure-Python work that holds the interpreter lock. The window's thread, woken
by a timer or an input event, waits for the lock until the worker is made to drop it: the
switch interval, 5 ms by default. So while a huge session opened, every turn of the window's
event loop came 9-10 ms after the one before, and on a loaded machine (a worker descheduled
while it holds the lock) 15-25 ms. :func:`quick_handover` makes the interval 1 ms for the
duration: the worker then drops the lock within a millisecond of being asked (a hand-over
costs microseconds; nothing is asked while the window's thread is idle).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

HANDOVER_S = 0.001  # the switch interval while the window waits on worker threads

_depth = 0
_saved = 0.0


@contextmanager
def quick_handover() -> Iterator[None]:
    """``with quick_handover():`` the switch interval is :data:`HANDOVER_S`; the one before
    is restored when the outermost such block ends."""
    global _depth, _saved
    if _depth == 0:
        _saved = sys.getswitchinterval()
        sys.setswitchinterval(min(_saved, HANDOVER_S))
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0:
            sys.setswitchinterval(_saved)


class HandoverWhile:
    """:func:`quick_handover` held while named work runs in worker threads, begun and ended
    from callbacks (files being read for their chips, a message with attachments being sent)
    rather than around one block of code."""

    def __init__(self) -> None:
        self._held: dict[str, ExitStack] = {}

    def begin(self, what: str) -> None:
        if what not in self._held:
            stack = ExitStack()
            stack.enter_context(quick_handover())
            self._held[what] = stack

    def end(self, what: str) -> None:
        stack = self._held.pop(what, None)
        if stack is not None:
            stack.close()

    def active(self, what: str) -> bool:
        return what in self._held
