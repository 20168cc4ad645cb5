"""Single instance: a second launch hands a "focus" message to the first and steps aside."""

from __future__ import annotations

import hashlib
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QDir

from app.ui.runtime.single_instance import (
    SingleInstance,
    focus_message,
    parse_message,
    server_name,
    sha256_hex,
)


@pytest.fixture
def name(tmp_path: Path) -> str:
    # A name of its own per test (the data dir is the tmp folder), as --data-dir profiles get.
    return server_name(tmp_path / "profile")


def test_second_instance_is_told_already_running_and_first_gets_focus(
    qtbot: Any, name: str
) -> None:
    first = SingleInstance(name)
    assert first.claim() is True
    assert first.is_primary
    second = SingleInstance(name)
    try:
        with qtbot.waitSignal(first.message_received, timeout=3000) as received:
            assert second.claim() is False  # "already running": the launcher exits 0
        assert received.args == ["focus"]
        assert not second.is_primary
    finally:
        first.release()
        second.release()


def test_second_launch_can_ask_for_a_session(qtbot: Any, name: str) -> None:
    first = SingleInstance(name)
    assert first.claim()
    try:
        with qtbot.waitSignal(first.message_received, timeout=3000) as received:
            assert SingleInstance(name).claim(focus_message("2026-01-01-abc")) is False
        assert parse_message(received.args[0]) == ("focus", "2026-01-01-abc")
    finally:
        first.release()


def test_a_first_instance_that_listens_late_still_gets_the_second_launchs_message(
    qtbot: Any, name: str
) -> None:
    # Coco holds the profile from the start but listens only once its window has painted; a
    # launch in between must wait for it rather than start a second Coco.
    first = SingleInstance(name)
    assert first.claim(listen=False) is True
    assert first.is_primary and not first.is_listening
    second = SingleInstance(name)
    outcome: list[bool] = []
    launch = threading.Thread(target=lambda: outcome.append(second.claim("focus abc")))
    try:
        with qtbot.waitSignal(first.message_received, timeout=10_000) as received:
            launch.start()
            assert first.listen()
        launch.join()
        assert outcome == [False]
        assert second.handed_over and not second.is_primary
        assert received.args == ["focus abc"]
    finally:
        first.release()


def test_the_lock_alone_keeps_a_second_instance_out(name: str) -> None:
    first = SingleInstance(name)
    assert first.claim(listen=False)
    try:
        assert first.lock_path.exists()
        assert not SingleInstance(name).is_primary
        # While the first holds the profile nobody else can take it, listening or not.
        from app.core.system.file_lock import FileLock

        assert FileLock.try_acquire(first.lock_path) is None
    finally:
        first.release()
    assert not first.lock_path.exists()


_FIRST_PAINT_IMPORTS = """
import sys
from PySide6.QtCore import QCoreApplication
app = QCoreApplication([])
from app.ui.runtime.single_instance import SingleInstance
instance = SingleInstance(sys.argv[1])
assert instance.claim(listen=False)
print("PySide6.QtNetwork" in sys.modules)
instance.listen()
print("PySide6.QtNetwork" in sys.modules, instance.is_listening)
instance.release()
"""


def test_the_first_instance_loads_no_network_module_until_it_listens(name: str) -> None:
    # Qt's network module costs start-up time; the window paints before it is needed.
    result = subprocess.run(
        [sys.executable, "-c", _FIRST_PAINT_IMPORTS, name], capture_output=True, text=True,
        check=True, cwd=Path(__file__).resolve().parents[2], timeout=120,
    )
    assert result.stdout.split() == ["False", "True", "True"], result.stderr


def test_after_release_the_next_launch_is_first_again(name: str) -> None:
    first = SingleInstance(name)
    assert first.claim()
    first.release()
    again = SingleInstance(name)
    try:
        assert again.claim() is True
    finally:
        again.release()


@pytest.mark.skipif(sys.platform == "win32", reason="Unix socket files only")
def test_stale_socket_left_by_a_crash_is_replaced(name: str) -> None:
    path = os.path.join(QDir.tempPath(), name)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(path)  # bound but never listening, then closed: what a crash leaves behind
    stale.close()
    assert os.path.exists(path)
    instance = SingleInstance(name)
    try:
        assert instance.claim() is True
        assert instance.is_primary
    finally:
        instance.release()


def test_names_differ_per_profile_and_per_user(tmp_path: Path) -> None:
    a = server_name(tmp_path / "a", user="alice")
    assert a == server_name(tmp_path / "a", user="alice")
    assert a != server_name(tmp_path / "b", user="alice")
    assert a != server_name(tmp_path / "a", user="bob")
    assert "/" not in a and len(a) < 40  # fits macOS's short socket paths


def test_the_name_is_the_one_every_coco_version_uses(tmp_path: Path) -> None:
    # Hashed without hashlib (no OpenSSL before the first paint) to the very same name, so a
    # running Coco of an earlier version is still found, and the same in every run.
    profile = tmp_path / "a"
    key = f"alice\0{profile.resolve()}".encode()
    assert server_name(profile, user="alice") == "coco-" + hashlib.sha256(key).hexdigest()[:16]
    for data in (b"", b"x" * 1000, "é\0/ä".encode()):
        assert sha256_hex(data) == hashlib.sha256(data).hexdigest()
    probe = (
        "import sys; from pathlib import Path; from app.ui.runtime.single_instance import server_name; "
        "print(server_name(Path(sys.argv[1]), user='alice')); server_name(Path(sys.argv[1])); "
        "print('hashlib' in sys.modules, '_hashlib' in sys.modules, 'getpass' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe, str(profile)], capture_output=True, text=True, check=True
    )
    assert result.stdout.split("\n")[:2] == [server_name(profile, user="alice"), "False False False"]


@pytest.mark.parametrize(
    "variables",
    [{}, {"LOGNAME": "ann", "USER": "bob"}, {"USER": "bob"}, {"USERNAME": "cy"},
     {"LNAME": "dee", "USERNAME": "cy"}, {"LOGNAME": "", "USER": "bob"}],
    ids=lambda v: ",".join(v) or "password-database",
)
def test_the_user_part_of_the_name_is_getpass_s(
    variables: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Found without importing getpass, but the same user: the same name as every version.
    import getpass

    from app.ui.runtime.single_instance import _user_name

    for name in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    assert _user_name() == getpass.getuser()


def test_unknown_messages_are_ignored() -> None:
    assert parse_message("focus") == ("focus", None)
    assert parse_message("quit now") is None
    assert parse_message("") is None


def test_bring_to_front_restores_a_minimised_window(qtbot: Any) -> None:
    from PySide6.QtWidgets import QWidget

    from app.ui.runtime.single_instance import bring_to_front

    window = QWidget()
    qtbot.addWidget(window)
    window.showMinimized()
    bring_to_front(window)
    assert window.isVisible()
    assert not window.isMinimized()
