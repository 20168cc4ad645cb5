"""Work that holds the interpreter for seconds (pure-Python parsing: a PDF's text) run in a
process of its own, so that the window's thread never waits for it.

A worker thread running Python holds the interpreter that the window's thread needs for
every step it takes. pypdf is pure Python: all of a PDF's reading holds it (0.2 s for the
benchmark's 20 MB PDF of 40 pages, and more with every page of text). In a process of its own
the job takes the other core and the window's interpreter is never held.

One process, started by the first job (``spawn``: forking a process that runs Qt and threads
is not safe) and kept for the next; it stops when Coco exits, and when Coco is killed (its
pipe closes). Where no process can be started (a sandbox, a bundle that cannot spawn), the
jobs run in the calling thread, as they did before: slower for the window, never lost. A
process that dies in the middle of a job (out of memory on a hostile file) fails that job
only: :class:`WorkerProcessDied`, and the next job gets a new process.
"""

from __future__ import annotations

import atexit
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:  # imported by the first job (multiprocessing costs start-up 30 ms)
    from concurrent.futures import ProcessPoolExecutor

log = logging.getLogger(__name__)

T = TypeVar("T")


class WorkerProcessDied(Exception):
    """The process stopped in the middle of the job (killed, out of memory)."""


class WorkerProcess:
    """The process the jobs run in (see the module's docstring). Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = None
        self._worked = False  # a job has come back from a process: processes can be started
        self.unavailable = False  # no process could be started: jobs run in the caller
        self._at_exit = False  # ``shutdown`` is registered to run at exit

    def run(self, function: Callable[..., T], *args: object) -> T:
        """``function(*args)`` in the process: a module-level function, picklable arguments
        and result; its exceptions are raised here. Blocking: call it from a worker thread,
        never from the event loop."""
        from concurrent.futures.process import BrokenProcessPool

        pool = self._get()
        if pool is None:
            return function(*args)
        try:
            future = pool.submit(function, *args)
        except (OSError, RuntimeError) as exc:  # no process can be started here
            self._give_up(pool, exc)
            return function(*args)
        try:
            result = future.result()
        except BrokenProcessPool as exc:
            self._discard(pool)
            if not self._worked:  # the process never ran a job: it could not start
                self._give_up(None, exc)
                return function(*args)
            raise WorkerProcessDied(str(exc) or "the worker process stopped") from exc
        self._worked = True
        return result

    def shutdown(self) -> None:
        """Stop the process (a job under way is waited for)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def _get(self) -> ProcessPoolExecutor | None:
        with self._lock:
            if self.unavailable:
                return None
            if self._pool is None:
                import multiprocessing
                from concurrent.futures import ProcessPoolExecutor

                self._pool = ProcessPoolExecutor(
                    max_workers=1, mp_context=multiprocessing.get_context("spawn")
                )
                if not self._at_exit:
                    # Let go of it while Python still runs: a pool collected as modules are
                    # torn down printed "Exception ignored in ... weakref_cb" at the exit.
                    atexit.register(self.shutdown)
                    self._at_exit = True
            return self._pool

    def _discard(self, pool: ProcessPoolExecutor) -> None:
        with self._lock:
            if self._pool is pool:
                self._pool = None
        pool.shutdown(wait=False, cancel_futures=True)

    def _give_up(self, pool: ProcessPoolExecutor | None, exc: BaseException) -> None:
        log.warning("No worker process could be started (%s): its jobs run in threads", exc)
        with self._lock:
            self.unavailable = True
        if pool is not None:
            self._discard(pool)


_PROCESS = WorkerProcess()


def run_in_process(function: Callable[..., T], *args: object) -> T:
    """``function(*args)`` in this Coco's worker process (see :class:`WorkerProcess`)."""
    return _PROCESS.run(function, *args)
