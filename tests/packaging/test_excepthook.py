"""An unhandled exception: logged with its traceback, reported with the log's path, and the
session file left intact (the app keeps running)."""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.applog import install_excepthook, setup_logging
from app.core import Session, ops
from app.core.items import is_message, message_text
from app.demo import Reply
from tests.conftest import run


@pytest.fixture
def log_file(tmp_path: Path) -> Iterator[Path]:
    root = logging.getLogger()
    old_level = root.level
    path = setup_logging(tmp_path / "logs", stderr=False)
    assert path is not None
    try:
        yield path
    finally:
        for handler in [h for h in root.handlers if getattr(h, "coco_handler", False)]:
            root.removeHandler(handler)
            handler.close()
        root.setLevel(old_level)


def log_text(path: Path) -> str:
    for handler in logging.getLogger().handlers:
        handler.flush()
    return path.read_text(encoding="utf-8")


def raise_through_hook(exc: BaseException) -> None:
    """Deliver ``exc`` to ``sys.excepthook`` with a real traceback, as the interpreter does."""
    try:
        raise exc
    except BaseException:  # noqa: BLE001
        sys.excepthook(*sys.exc_info())


async def test_hook_logs_reports_the_log_path_and_keeps_the_session_file(
    server: Any, make_config: Any, log_file: Path
) -> None:
    server.enqueue(Reply(text="first answer"))
    session = await Session.open(make_config())
    await run(session, ops.UserTurn(text="first question"))
    before = session.rollout_path.read_bytes()
    shown: list[str] = []
    uninstall = install_excepthook(shown.append, log_file)
    try:
        raise_through_hook(ValueError("boom in a slot"))
    finally:
        uninstall()

    assert len(shown) == 1
    assert str(log_file) in shown[0]
    assert "ValueError: boom in a slot" in shown[0]
    assert "nothing already saved is lost" in shown[0]
    text = log_text(log_file)
    assert "CRITICAL" in text and "Unhandled exception" in text
    assert "Traceback" in text and "boom in a slot" in text
    # The hook touched nothing on disk but the log, and the session goes on.
    assert session.rollout_path.read_bytes() == before
    server.enqueue(Reply(text="second answer"))
    await run(session, ops.UserTurn(text="second question"))
    await session.close()
    resumed = await Session.open(make_config(), session_id=session.id)
    texts = [message_text(i) for i in resumed.history() if is_message(i)]
    assert texts == ["first question", "first answer", "second question", "second answer"]
    await resumed.close()


def test_secrets_in_the_exception_stay_out_of_log_and_dialog(log_file: Path) -> None:
    shown: list[str] = []
    uninstall = install_excepthook(shown.append, log_file)
    try:
        raise_through_hook(RuntimeError("401 for key sk-live-0123456789abcdef"))
    finally:
        uninstall()
    assert "sk-live-0123456789abcdef" not in shown[0]
    assert "sk-live-0123456789abcdef" not in log_text(log_file)


def test_worker_thread_exception_is_logged_without_a_dialog(log_file: Path) -> None:
    shown: list[str] = []
    uninstall = install_excepthook(shown.append, log_file)
    try:
        def fail() -> None:
            raise OSError("disk went away in a worker")

        worker = threading.Thread(target=fail, name="worker-1")
        worker.start()
        worker.join(5)
    finally:
        uninstall()
    assert shown == []  # a dialog may only be shown from the main (GUI) thread
    text = log_text(log_file)
    assert "disk went away in a worker" in text and "worker-1" in text


def test_keyboard_interrupt_goes_to_the_previous_hook(
    log_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[type[BaseException]] = []
    monkeypatch.setattr(sys, "excepthook", lambda t, e, tb: seen.append(t))
    shown: list[str] = []
    uninstall = install_excepthook(shown.append, log_file)
    try:
        raise_through_hook(KeyboardInterrupt())
    finally:
        uninstall()
    assert seen == [KeyboardInterrupt]
    assert shown == []


def test_an_exception_while_the_dialog_is_up_is_only_logged(log_file: Path) -> None:
    shown: list[str] = []

    def dialog(message: str) -> None:
        shown.append(message)
        raise_through_hook(ValueError("second failure inside the dialog"))

    uninstall = install_excepthook(dialog, log_file)
    try:
        raise_through_hook(ValueError("first failure"))
    finally:
        uninstall()
    assert len(shown) == 1 and "first failure" in shown[0]
    assert "second failure inside the dialog" in log_text(log_file)


def test_uninstall_restores_the_previous_hooks(log_file: Path) -> None:
    before = (sys.excepthook, threading.excepthook)
    uninstall = install_excepthook(lambda _m: None, log_file)
    assert sys.excepthook is not before[0]
    uninstall()
    assert (sys.excepthook, threading.excepthook) == before


@pytest.mark.qt_no_exception_capture
def test_exception_in_a_qt_slot_reaches_the_dialog(qtbot: Any, log_file: Path) -> None:
    from PySide6.QtCore import QTimer

    shown: list[str] = []
    uninstall = install_excepthook(shown.append, log_file)
    try:
        def slot() -> None:
            raise LookupError("raised inside a Qt slot")

        QTimer.singleShot(0, slot)
        qtbot.waitUntil(lambda: bool(shown), timeout=3000)
    finally:
        uninstall()
    assert "LookupError: raised inside a Qt slot" in shown[0]
    assert "raised inside a Qt slot" in log_text(log_file)
