"""Keep Python's full garbage collections out of a streaming reply.

A full (oldest-generation) collection walks every container object the process holds: after
start-up and a first request that is well over 100 000 objects (modules, pydantic schemas, Qt
wrappers), and the walk took 40–90 ms on the main thread, a visible stall in the middle of a
streaming reply. Nearly all of those objects live as long as the process or the session, so
the window moves what exists out of the collector's reach (``gc.freeze()``) when a session has
opened and again just before a turn starts; collections during the turn then walk only what
the turn itself created. Frozen objects are still freed by reference counting as usual; only
cycles among them wait, so when a session closes everything is handed back to the collector
and collected before the next session opens (a moment the user is waiting anyway).
"""

from __future__ import annotations

import gc

_started = False


def freeze() -> None:
    """Move every object the process holds now out of later collections (no walk of them).

    The youngest generations are collected first (a few milliseconds at most) so that little
    fresh garbage is frozen with the rest. Call it when a session has opened and before a
    turn starts.
    """
    global _started
    if _started:
        gc.collect(1)
    # The first time is the end of start-up, measured to the first paint: no collection.
    _started = True
    gc.freeze()


def release() -> None:
    """The window closed: hand every frozen object back to the collector."""
    gc.unfreeze()


def release_and_collect() -> None:
    """A session closed: give every frozen object back to the collector and collect, so the
    closed session's cycles do not outlive it."""
    gc.unfreeze()
    gc.collect()
