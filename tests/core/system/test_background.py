"""Background threads give way to the window's thread (``app.core.system.background``)."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from app.core.recall import index as recall_index
from app.core.system.background import BACKGROUND_NICENESS, yield_to_window

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice")


def _priority_in_thread(work: object) -> tuple[int, int]:
    """(nice before, nice after) of a new thread that runs ``work``."""
    seen: list[int] = []

    def run() -> None:
        tid = threading.get_native_id()
        seen.append(os.getpriority(os.PRIO_PROCESS, tid))
        work()  # type: ignore[operator]
        seen.append(os.getpriority(os.PRIO_PROCESS, tid))

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(10)
    return seen[0], seen[1]


@linux_only
def test_only_the_calling_thread_is_lowered() -> None:
    main_before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    before, after = _priority_in_thread(yield_to_window)
    assert after == min(19, before + BACKGROUND_NICENESS)
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == main_before


@linux_only
def test_the_recall_index_worker_runs_lowered() -> None:
    tid: list[int] = []
    done = threading.Event()

    def job() -> None:
        tid.append(threading.get_native_id())
        done.set()

    recall_index.run_in_worker(job)
    assert done.wait(10)
    main = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    assert os.getpriority(os.PRIO_PROCESS, tid[0]) == min(19, main + BACKGROUND_NICENESS)
