"""Memory housekeeping for the window: short collector pauses, freed memory given back.

**Collector pauses.** A full (oldest-generation) garbage collection walks every container
object the process holds: after start-up and a first request well over 100 000 objects
(modules, pydantic schemas, Qt wrappers), a walk of 40–90 ms on the main thread, i.e. a visible
stall in the middle of a streaming reply. Nearly all of those objects live as long as the
process or the session, so the window moves what exists out of the collector's reach
(``gc.freeze()``) when a session has opened and again just before a turn starts; collections
during the turn then walk only what the turn created. Frozen objects are still freed by
reference counting as usual; only cycles among them wait. A closed session is freed that way
(its history, transcript and rows); what it leaves in cycles is small (about 100 KB and 800
objects a switch, measured with a 1 000-turn session), while collecting it means a full
collection of everything the process holds: 80 ms on the main thread, right when the new
session appears. So a session switch only collects the young generations and freezes again;
every :data:`FULL_COLLECTION_EVERY` switches everything is handed back and collected once,
which bounds what waits in cycles to a few megabytes, and when the window closes everything is
handed back.

**Opening a session.** Reading a long session and building its rows make hundreds of thousands
of containers that all stay alive (the records, the transcript's entries, the rows): the
collector's automatic runs walked them again and again, among them a full collection of
20–50 ms, before the session was first painted (a tenth of opening a 5 000-turn session). So
the young generations are collected when the switch begins (what the closed session left),
no automatic collection runs while the session is read and drawn (:func:`opening_session`),
and what exists then is frozen at once; the paint that follows has nothing young to collect.

**Drawing another branch.** Switching to another branch of a long conversation builds its
rows again (tens of thousands of containers that stay alive) in slices between which the
window paints; an automatic full collection in one of them walked everything the process
holds (170 ms, one slice). :func:`drawing_branch` pauses the collector until the branch is on
screen and freezes what exists then, as an open does.

**Freed memory.** Reading a long session parses its whole rollout; the parsed lines are freed
again, but the C library keeps freed heap memory for reuse rather than returning it, so the
process stayed some 60 MB larger than the session it shows. After a session is shown the heap
is trimmed (``malloc_trim``, glibc only; elsewhere nothing happens).

**Large blocks.** glibc gives a block of a megabyte or more its own mapping, returned to the
system when freed, but each time such a block is freed it raises that size limit to the block's
size (up to 32 MB). Once a session's file had been read, the buffers of the next read (several
megabytes each) came from the heap instead, and the heap could not shrink past what was
allocated after them: some 20 MB stayed in the process after opening a long session, which no
trimming returned. Before a session is opened the limit is fixed at one megabyte
(:func:`fix_mmap_threshold`, glibc only).
"""

from __future__ import annotations

import gc
import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

log = logging.getLogger(__name__)

# Session switches between two full collections (see the module docstring).
FULL_COLLECTION_EVERY = 25

_started = False
_young_collected = False  # the open being shown collected the young generations already
_collect_pending = False  # a session was replaced; its leftovers are not collected yet
_switches = 0  # session switches since the last full collection
_trim: Callable[[int], int] | None = None
_trim_looked_up = False
MMAP_THRESHOLD = 1024 * 1024  # blocks at least this large get a mapping of their own
_M_MMAP_THRESHOLD = -3  # mallopt's parameter number (malloc.h)
_threshold_fixed = False


def _freeze() -> None:
    global _started, _collect_pending, _young_collected
    if _collect_pending:
        _collect_pending = False
        gc.collect()
    elif _young_collected:
        _young_collected = False
    elif _started:
        # The young generations only (milliseconds): little fresh garbage gets frozen.
        gc.collect(1)
    # The first time is the end of start-up, measured to the first paint: no collection.
    _started = True
    gc.freeze()


def session_replaced() -> None:
    """The open session was closed for another. Every :data:`FULL_COLLECTION_EVERY`-th time,
    everything goes back to the collector, to be collected once the new session is on screen
    (:func:`session_shown`); otherwise the closed session is left to reference counting."""
    global _collect_pending, _switches
    _switches += 1
    if _switches >= FULL_COLLECTION_EVERY:
        _switches = 0
        gc.unfreeze()
        _collect_pending = True


@contextmanager
def closing_session() -> Iterator[None]:
    """``with closing_session():`` the open session is closed and its rows dropped, with no
    automatic collection inside: one could run at any moment there, before the opening's pause
    (:func:`opening_session`), which collects what the closed session left young once."""
    from app.core.system.collector import collector_paused

    with collector_paused():
        yield


@contextmanager
def opening_session() -> Iterator[None]:
    """``with opening_session():`` a session is read and its rows built (see the module
    docstring). What a replaced session left young is collected first; inside, no automatic
    collection runs; at the end what exists is frozen, unless a full collection is due (then
    :func:`session_shown` makes it)."""
    global _young_collected
    from app.core.system.collector import collector_paused

    if _started and not _collect_pending:
        gc.collect(1)
        _young_collected = True
    with collector_paused():
        yield
        if not _collect_pending:
            gc.freeze()


@contextmanager
def drawing_branch() -> Iterator[None]:
    """``with drawing_branch():`` another branch's rows are built (see the module docstring):
    no automatic collection inside; what exists at the end is frozen (the old branch's rows,
    freed by reference counting, are not in it)."""
    from app.core.system.collector import collector_paused

    with collector_paused():
        yield
        if not _collect_pending:
            gc.freeze()  # before collection resumes: its first run would walk all of it


def session_shown() -> None:
    """A session has been opened and painted: collect what a replaced session left, freeze
    what exists now and give freed memory back to the system."""
    _freeze()
    trim_heap()


def turn_starting() -> None:
    """A turn is about to start: keep what exists out of collections during the turn."""
    _freeze()


def window_closed() -> None:
    """The window closed: hand every frozen object back to the collector."""
    global _collect_pending
    _collect_pending = False
    gc.unfreeze()


def fix_mmap_threshold() -> bool:
    """Keep glibc from raising its mmap threshold (see the module docstring); True once it is
    fixed (on other C libraries nothing happens)."""
    global _threshold_fixed
    if not _threshold_fixed and sys.platform.startswith("linux"):
        import ctypes

        try:
            _threshold_fixed = bool(ctypes.CDLL(None).mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))
        except (OSError, AttributeError):  # not glibc
            log.debug("mallopt is not available", exc_info=True)
    return _threshold_fixed


def trim_heap() -> bool:
    """Return the C heap's free memory to the system (glibc); True if that was possible."""
    global _trim, _trim_looked_up
    if not _trim_looked_up:
        _trim_looked_up = True
        if sys.platform.startswith("linux"):
            import ctypes

            try:
                # The symbols already loaded into the process, libc's among them (no
                # ``find_library``: it runs ldconfig in a subprocess).
                _trim = ctypes.CDLL(None).malloc_trim
            except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
                log.debug("malloc_trim is not available", exc_info=True)
    if _trim is None:
        return False
    _trim(0)
    return True
