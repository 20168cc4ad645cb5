"""A closed qasync loop's timer object is deleted on the GUI thread (pending Qt timers with it),
so a garbage collection on a worker thread cannot leave Qt firing timers at freed memory."""

from __future__ import annotations

import asyncio
from typing import Any

import qasync
import shiboken6

from app.ui.runtime.loop import release_loop_timers


def test_release_deletes_the_timer_object_with_pending_timers(qapp: Any) -> None:
    loop = qasync.QEventLoop(qapp)
    fired: list[bool] = []
    loop.call_later(60, lambda: fired.append(True))  # still pending when the loop closes
    timer = loop._timer
    loop.close()
    assert shiboken6.isValid(timer)  # qasync's close() leaves it (and its Qt timer) alive
    release_loop_timers(loop)
    assert not shiboken6.isValid(timer)
    release_loop_timers(loop)  # twice is harmless
    asyncio.set_event_loop(None)
    assert fired == []
