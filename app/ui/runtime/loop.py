"""Glue for running asyncio on Qt's event loop (qasync)."""

from __future__ import annotations

import asyncio
import sys


def install_asyncgen_hooks(loop: asyncio.AbstractEventLoop) -> None:
    """Let ``loop`` finalise abandoned async generators (HTTP streams after a cancel).

    ``asyncio``'s own ``run_forever`` installs these hooks; qasync's does not, and without them
    an interrupted stream's generator is closed by the garbage collector outside the loop,
    which fails noisily.
    """
    firstiter = getattr(loop, "_asyncgen_firstiter_hook", None)
    finalizer = getattr(loop, "_asyncgen_finalizer_hook", None)
    if firstiter is not None and finalizer is not None:
        sys.set_asyncgen_hooks(firstiter=firstiter, finalizer=finalizer)


def release_loop_timers(loop: asyncio.AbstractEventLoop) -> None:
    """Delete a closed qasync loop's timer object now, on the GUI thread.

    qasync's ``close()`` only flags its timer object, so callbacks still pending (long
    ``call_later`` delays) stay registered with Qt. If the garbage collector later freed the
    object from a worker thread, Qt could not unregister them and would fire them at freed
    memory. Call this right after the loop is closed.
    """
    import shiboken6

    timer = getattr(loop, "_timer", None)
    if timer is not None and shiboken6.isValid(timer):
        shiboken6.delete(timer)
