"""The OS file lock under the session lock and the instance lock: one holder at a time, the
file names its holder, and releasing frees it for the next."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from app.core.system.file_lock import FileLock, owner_text


def test_a_second_holder_is_refused_until_the_first_releases(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "folder" / "x.lock"
    first = FileLock.try_acquire(path)
    assert first is not None and first.held
    assert FileLock.try_acquire(path) is None  # another open file, even in this process
    first.release()
    assert not first.held and not path.exists()
    first.release()  # idempotent
    again = FileLock.try_acquire(path)
    assert again is not None
    with again:
        assert again.held
    assert not path.exists()


def test_the_lock_file_names_its_holder_on_this_host(tmp_path: Path) -> None:
    path = tmp_path / "x.lock"
    lock = FileLock.try_acquire(path)
    assert lock is not None
    try:
        assert path.read_text().split() == [str(os.getpid()), socket.gethostname()]
        assert owner_text(path) == ""  # this process is not "another window"
    finally:
        lock.release()


def test_owner_text_names_another_process_and_another_host(tmp_path: Path) -> None:
    path = tmp_path / "x.lock"
    path.write_text(f"{os.getpid() + 1} {socket.gethostname()}\n")
    assert owner_text(path) == f"process {os.getpid() + 1}"
    path.write_text("42 elsewhere.example\n")
    assert owner_text(path) == "process 42 on elsewhere.example"
    path.write_text("garbage")
    assert owner_text(path) == ""
    assert owner_text(tmp_path / "missing.lock") == ""
