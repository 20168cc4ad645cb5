"""Fixtures for the window tests: offscreen Qt, a qasync loop driven by qtbot, the scripted
model server, and a real MainWindow in isolated temp folders.

qasync runs asyncio callbacks as Qt timer events, so ``qtbot.waitUntil`` (which spins the Qt
event loop) also drives asyncio: ``run(qtbot, coro)`` waits for a coroutine that way.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
import qasync
import shiboken6
from PySide6.QtCore import QEvent, QTimer
from PySide6.QtWidgets import QApplication

from app.ui.runtime.loop import install_asyncgen_hooks, release_loop_timers

T = TypeVar("T")
SCRIPTED_MODEL = "scripted-model"
TEST_KEY = "sk-test-not-a-real-key"


def run(qtbot: Any, awaitable: Awaitable[T], timeout: float = 10.0) -> T:
    """Run ``awaitable`` on the qasync loop while Qt processes events; its result."""
    future = asyncio.ensure_future(awaitable)
    qtbot.waitUntil(future.done, timeout=int(timeout * 1000))
    return future.result()


@pytest.fixture
def qloop(qapp: Any) -> Iterator[asyncio.AbstractEventLoop]:
    """A qasync loop marked running for the test, so tasks run while qtbot waits."""
    loop = qasync.QEventLoop(qapp, already_running=True)
    asyncio.set_event_loop(loop)
    old_hooks = sys.get_asyncgen_hooks()
    install_asyncgen_hooks(loop)
    try:
        yield loop
    finally:
        shutdown = asyncio.ensure_future(loop.shutdown_asyncgens())
        deadline = loop.time() + 2.0
        while not shutdown.done() and loop.time() < deadline:
            qapp.processEvents()
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in pending:
            task.cancel()
        deadline = loop.time() + 2.0
        while any(not t.done() for t in pending) and loop.time() < deadline:
            qapp.processEvents()
        # Not loop.stop(): it calls QApplication.exit(), which would leave the shared qapp
        # refusing to run the next test's timers.
        loop._QEventLoop__is_running = False  # type: ignore[attr-defined]
        asyncio.events._set_running_loop(None)
        try:
            qapp.aboutToQuit.disconnect(loop._after_run_forever)
        except (RuntimeError, TypeError):
            pass
        loop.close()
        release_loop_timers(loop)  # else a later GC on a worker thread can crash Qt
        asyncio.set_event_loop(None)
        sys.set_asyncgen_hooks(*old_hooks)


@pytest.fixture
def server() -> Iterator[Any]:
    from app.demo import ModelServer

    srv = ModelServer(mode="scripted").start()
    try:
        yield srv
    finally:
        srv.stop()


def write_settings(config_dir: Path, server_url: str, **fields: Any) -> None:
    """Settings for a custom provider pointing at the scripted server."""
    from app.core.settings import AppSettings, SettingsStore

    settings = AppSettings(
        provider="custom", base_url=server_url, model=SCRIPTED_MODEL,
        wire_api=fields.pop("wire_api", "responses"),
        context_window=fields.pop("context_window", 100_000), **fields,
    )
    SettingsStore(config_dir).save(settings)


def build_context(
    server: Any,
    base: Path,
    *,
    overrides: dict[str, Any] | None = None,
    settings: dict[str, Any] | None = None,
    configure: bool = True,
    demo_url: str | None = None,
) -> Any:
    """An AppContext in ``base`` whose settings point at the scripted server."""
    from app.core.system.secrets import SecretStore
    from app.ui.window.app_context import AppContext

    config_dir = base / "config"
    data_dir = base / "data"
    secrets = SecretStore(config_dir, use_keyring=False)
    if configure:
        write_settings(config_dir, server.url, **(settings or {}))
        secrets.set_api_key(server.url, TEST_KEY)
    return AppContext(
        config_dir=config_dir,
        data_dir=data_dir,
        secrets=secrets,
        env={},
        start_demo=(lambda: demo_url or server.url),
        config_overrides={
            "tokenizer_download": False,
            "retry_base_delay": 0.01,
            "max_retries": 1,
            **(overrides or {}),
        },
    )


@pytest.fixture
def make_window(qtbot: Any, qloop: Any, tmp_path: Path, server: Any) -> Iterator[Callable[..., Any]]:
    """Build a real MainWindow on the scripted server, with its session open."""
    from app.ui.window.main_window import MainWindow

    windows: list[Any] = []

    def factory(
        *,
        overrides: dict[str, Any] | None = None,
        settings: dict[str, Any] | None = None,
        root: Path | None = None,
        session_id: str | None = None,
        configure: bool = True,
        demo_url: str | None = None,
    ) -> Any:
        context = build_context(
            server, root or tmp_path, overrides=overrides, settings=settings,
            configure=configure, demo_url=demo_url,
        )
        window = MainWindow(context)
        windows.append(window)
        if not window.geometry_restored:
            window.resize(1000, 700)
        window.show()
        run(qtbot, window.open_session(session_id))
        return window

    yield factory
    for window in windows:
        close_window(qtbot, window)


def close_window(qtbot: Any, window: Any) -> None:
    """Close like the user does and wait for the session to shut down."""
    if not shiboken6.isValid(window):
        return
    if not window._close_done:
        window.close()
        qtbot.waitUntil(lambda: window._close_done, timeout=5000)
    window.deleteLater()
    # Delete it now, inside this test, rather than during the next test's event processing.
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


@pytest.fixture(autouse=True)
def main_thread_blocks(qapp: Any, request: Any) -> Iterator[None]:
    """With ``COCO_BLOCK_REPORT=<file>``, measure the longest time the window's thread went
    without running its event loop during each test (a 1 ms timer's longest gap) and append
    ``<ms>\t<test>`` to the file: a measurement for the closing notes, not an assertion. The
    gap includes what the test itself does on that thread (typing, building inputs)."""
    report = os.environ.get("COCO_BLOCK_REPORT")
    if not report:
        yield
        return
    last = [time.perf_counter()]
    worst = [0.0]

    def tick() -> None:
        now = time.perf_counter()
        worst[0] = max(worst[0], now - last[0])
        last[0] = now

    timer = QTimer()
    timer.setInterval(1)
    timer.timeout.connect(tick)
    timer.start()
    try:
        yield
    finally:
        timer.stop()
        with open(report, "a", encoding="utf-8") as out:
            out.write(f"{worst[0] * 1000:.1f}\t{request.node.nodeid}\n")
