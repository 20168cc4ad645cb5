"""Pausing Python's cyclic garbage collector while a session is read in bulk.

Reading a long rollout creates hundreds of thousands of containers (each line's dicts and
lists, the records, the transcript's entries) that all stay alive. Every few hundred new
containers the collector runs, and every so often it walks all of them again: on a 5 000-turn
session about a third of the time the open took, for nothing (the parsed records hold no
cycles, and whatever they hold is freed by reference counting). :func:`collector_paused`
switches automatic collection off for the duration of such a read, from any thread; pauses
may overlap (two sessions opened at once) and collection resumes when the last one ends, if
it was on when the first began.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """``with collector_paused():`` no automatic collection runs inside (explicit
    ``gc.collect()`` calls still work); the collector is as it was once every pause ended."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
