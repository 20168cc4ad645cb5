"""Work run in a process of its own: it runs there and comes back, its errors come back as
they were raised, a process that dies fails only its job, and where no process can be
started the job runs in the caller."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator

import pytest

from app.core.attachments.errors import AttachmentError
from app.core.system.worker_process import WorkerProcess, WorkerProcessDied


def where() -> int:
    return os.getpid()


def refuse(name: str) -> None:
    raise AttachmentError(f"{name} is refused")


def die_unless_in(pid: int) -> int:
    """Ends its process at once unless that is process ``pid``."""
    if os.getpid() != pid:
        os._exit(3)
    return pid


@pytest.fixture
def worker() -> Iterator[WorkerProcess]:
    process = WorkerProcess()
    yield process
    process.shutdown()


def test_a_job_runs_in_another_process_and_the_process_is_kept(worker: WorkerProcess) -> None:
    first = worker.run(where)
    assert first != os.getpid()
    assert worker.run(where) == first  # one process, kept for the next job
    assert not worker.unavailable


def test_an_error_raised_in_the_process_is_raised_here_as_it_was(worker: WorkerProcess) -> None:
    with pytest.raises(AttachmentError) as raised:
        worker.run(refuse, "big.pdf")
    assert raised.value.message == "big.pdf is refused"
    assert worker.run(where) != os.getpid()  # the process goes on


def test_a_process_dying_in_a_job_fails_that_job_and_the_next_gets_a_new_one(
    worker: WorkerProcess,
) -> None:
    before = worker.run(where)
    with pytest.raises(WorkerProcessDied):
        worker.run(die_unless_in, os.getpid())
    after = worker.run(where)
    assert after not in (before, os.getpid())
    assert not worker.unavailable


def test_a_process_that_never_ran_a_job_means_jobs_run_in_the_caller(
    worker: WorkerProcess,
) -> None:
    # The first process ends before it gives anything back: as a bundle that cannot start
    # one does. The job then runs here, and so do the next ones.
    assert worker.run(die_unless_in, os.getpid()) == os.getpid()
    assert worker.unavailable
    assert worker.run(where) == os.getpid()


class _NoProcesses:
    """A multiprocessing context whose processes cannot start (a sandbox)."""

    def __init__(self, real: multiprocessing.context.BaseContext) -> None:
        self._real = real

    def __getattr__(self, name: str) -> object:
        return getattr(self._real, name)

    def Process(self, *args: object, **kwargs: object) -> object:
        real = self._real.Process(*args, **kwargs)

        def refuse_start() -> None:
            raise OSError(1, "Operation not permitted")

        real.start = refuse_start  # type: ignore[method-assign]
        return real


def test_the_module_loads_no_multiprocessing_until_a_job_comes() -> None:
    import subprocess
    import sys

    code = (
        "import sys, app.core.system.worker_process; "
        "print('multiprocessing' in sys.modules, 'concurrent.futures.process' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]  # start-up does not pay for them


def test_where_no_process_can_be_started_the_job_runs_in_the_caller(
    worker: WorkerProcess, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    real = multiprocessing.get_context("spawn")
    monkeypatch.setattr(multiprocessing, "get_context", lambda _: _NoProcesses(real))
    assert worker.run(where) == os.getpid()
    assert worker.unavailable
    assert "Operation not permitted" in caplog.text and "run in threads" in caplog.text


def test_the_process_is_let_go_at_exit_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import atexit

    registered: list[object] = []
    monkeypatch.setattr(atexit, "register", registered.append)
    process = WorkerProcess()
    try:
        process.run(where)
        process.shutdown()
        process.run(where)  # a new pool: the same exit handler serves it
    finally:
        process.shutdown()
    assert registered == [process.shutdown]
