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
