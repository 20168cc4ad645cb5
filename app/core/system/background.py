"""Background threads give way to the window's thread when both want a processor.

The recall index's worker adds every new record to a full-text index, a reply of a megabyte
taking it 0.2 s of processor time, and it does so while the reply is still being shown. On a
machine with two cores the window's thread then waited for a core as well as working: its
longest blocks while a long reply streamed were 20-25 ms long for 10-15 ms of its own work.
:func:`yield_to_window` raises the calling thread's nice value, a per-thread attribute on
Linux: the scheduler then prefers every thread at the normal value (the window's, the
server's) and gives the background thread what they leave, which on an idle machine is
everything. Elsewhere (no per-thread priority through ``os.setpriority``) nothing changes.
A thread cannot take a raised nice value back without privileges: only threads that do
background work and nothing else call it.
"""

from __future__ import annotations

import logging
import os
import sys
import threading

log = logging.getLogger(__name__)

BACKGROUND_NICENESS = 10  # added to the thread's nice value (0 normally; 19 is the lowest)


def yield_to_window(niceness: int = BACKGROUND_NICENESS) -> bool:
    """Lower the calling thread's priority by ``niceness``; True when that took effect."""
    if not sys.platform.startswith("linux"):
        return False
    thread = threading.get_native_id()
    try:
        current = os.getpriority(os.PRIO_PROCESS, thread)
        os.setpriority(os.PRIO_PROCESS, thread, min(19, current + niceness))
    except OSError as exc:  # a sandbox that refuses it: the thread keeps its priority
        log.debug("Could not lower the priority of %s: %s", threading.current_thread().name, exc)
        return False
    return True
