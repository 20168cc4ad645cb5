"""One writer per session: a second process is refused, a dead owner's lock is taken over."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.rollout.lock import SessionInUse, SessionLock, lock_path

pytestmark = pytest.mark.skipif(os.name == "nt", reason="the helper process uses POSIX signals")

# Holds the lock of the rollout named in argv[1], says so, then waits for stdin to close.
_HOLDER = """
import sys
from pathlib import Path
from app.core.rollout.lock import SessionLock
lock = SessionLock.acquire(Path(sys.argv[1]))
print("locked", flush=True)
sys.stdin.read()
lock.release()
print("released", flush=True)
"""


@pytest.fixture
def rollout(tmp_path: Path) -> Path:
    return tmp_path / "sessions" / "s1.jsonl"


@pytest.fixture
def holder(rollout: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the session's lock (it has said "locked" when this returns)."""
    process = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(rollout)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "locked"
    yield process
    if process.poll() is None:
        process.kill()
    process.wait()


def test_a_second_process_is_told_the_session_is_in_use(
    rollout: Path, holder: subprocess.Popen[str]
) -> None:
    with pytest.raises(SessionInUse) as caught:
        SessionLock.acquire(rollout)
    assert caught.value.owner == f"process {holder.pid}"
    assert f"open in another Coco window by process {holder.pid}" in str(caught.value)
    assert "read-only" in str(caught.value)


def test_the_lock_is_free_again_once_the_owner_releases_it(
    rollout: Path, holder: subprocess.Popen[str]
) -> None:
    assert holder.stdin is not None and holder.stdout is not None
    holder.stdin.close()  # the holder releases and says so
    assert holder.stdout.readline().strip() == "released"
    with SessionLock.acquire(rollout) as lock:
        assert lock.held
        assert lock_path(rollout).read_text().split()[0] == str(os.getpid())
    assert not lock_path(rollout).exists()


def test_a_crashed_owner_leaves_a_lock_that_is_taken_over(
    rollout: Path, holder: subprocess.Popen[str]
) -> None:
    holder.send_signal(signal.SIGKILL)  # kill -9: no cleanup runs
    holder.wait()
    assert lock_path(rollout).read_text().split()[0] == str(holder.pid)  # left behind
    with SessionLock.acquire(rollout) as lock:
        assert lock.held
        assert lock_path(rollout).read_text().split()[0] == str(os.getpid())


def test_a_stale_lock_file_naming_a_dead_process_is_taken_over(rollout: Path) -> None:
    lock_path(rollout).parent.mkdir(parents=True)
    lock_path(rollout).write_text("999999999 elsewhere\n")
    with SessionLock.acquire(rollout) as lock:
        assert lock.held


def test_two_writers_in_one_process_exclude_each_other(rollout: Path) -> None:
    first = SessionLock.acquire(rollout)
    with pytest.raises(SessionInUse) as caught:
        SessionLock.acquire(rollout)
    assert caught.value.owner == ""  # not "another process": it is this one
    assert str(caught.value).startswith("This conversation is open in another Coco window.")
    first.release()
    first.release()  # idempotent
    SessionLock.acquire(rollout).release()
