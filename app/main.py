"""Coco's launcher: ``coco`` and ``python -m app`` call :func:`main`.

Parses the command line, sets up logging, builds the Qt application on a qasync event loop,
loads the settings, starts the offline demo model when nothing is configured (or
``--offline``), opens the last session (or the one asked for) and runs until the window closes.
A second launch on the same profile hands over to the running one.
"""

from __future__ import annotations

# First: where PySide6 is loaded already (tests, benchmarks, a program embedding Coco), its
# question about every later import gets the cheap answer from here on, this module's own
# imports included (about 0.3 ms each otherwise). A launch proper loads PySide6 later, and
# installs it then (``_main``).
from app.ui.runtime import import_hook

import_hook.install()

import gc
import logging
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app import __version__
from app.command_line import parse_args

if TYPE_CHECKING:
    import argparse

log = logging.getLogger("coco")

DEMO_TOKENS_PER_SECOND = 60
# How a bundled Coco (no Python to run ``-m``) is started as the example MCP server the demo
# offers (app/core/tools/mcp/example.py starts it so).
MCP_EXAMPLE_FLAG = "--mcp-example-server"


def configure_application(app: Any) -> None:
    """Names and icon the desktop uses for Coco (the Wayland app id is the desktop file)."""
    from app.appinfo import APP_ID, APP_NAME
    from app.ui.style.icons import app_icon

    app.setApplicationName(APP_NAME)
    app.setApplicationDisplayName(APP_NAME)
    app.setApplicationVersion(__version__)
    app.setDesktopFileName(APP_ID)
    app.setWindowIcon(app_icon())


def _session_exists(sessions_dir: Path, session_id: str) -> bool:
    from app.core.rollout.store import rollout_path

    try:
        return rollout_path(sessions_dir, session_id).exists()
    except (ValueError, OSError):
        return False


def _wait_for_first_paint(window: Any, timeout_ms: int = 500) -> bool:
    """Run Qt (only Qt: asyncio is not even imported yet) until ``window`` has painted once,
    or ``timeout_ms`` passed (a window that is not exposed, e.g. minimised by the desktop,
    must not hold start-up back). Returns True when the window asked to close meanwhile.

    Keyboard and mouse input waits in Qt's queue until the event loop proper runs; a close
    request from the desktop is held back and repeated then, when the session can be shut
    down properly.
    """
    from PySide6.QtCore import QEvent, QEventLoop, QObject, QTimer

    loop = QEventLoop()

    class _Watch(QObject):
        close_requested = False

        def eventFilter(self, obj: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint:
                QTimer.singleShot(0, loop.quit)  # after this paint has finished
            elif event.type() == QEvent.Type.Close:
                self.close_requested = True
                event.ignore()
                return True
            return False

    watch = _Watch()
    window.installEventFilter(watch)
    give_up = QTimer()
    give_up.setSingleShot(True)
    give_up.timeout.connect(loop.quit)
    give_up.start(timeout_ms)
    try:
        loop.exec(QEventLoop.ProcessEventsFlag.ExcludeUserInputEvents)
    finally:
        give_up.stop()
        window.removeEventFilter(watch)
    return watch.close_requested


async def _run(window: Any, requested_session: str | None) -> int:
    import asyncio

    closed = asyncio.Event()
    window.closed.connect(closed.set)
    # The window is on screen (main waited for its first paint). Only now are the settings
    # read (pydantic alone costs ~100 ms) and the session opened and rendered.
    session_id = requested_session or window.context.settings.last_session_id or None
    explicit = requested_session is not None
    if session_id and not explicit and not _session_exists(window.context.sessions_dir,
                                                           session_id):
        session_id = None  # the last session was never written to (an empty new one)
    await window.open_session(session_id)
    for warning in window.context.load_warnings:
        window.transcript.add_notice("warning", warning)
    window.composer.focus()
    await closed.wait()
    return 0


def _focus_window(window: Any, message: str) -> None:
    """A second launch asked for this window (and maybe a session)."""
    from app.ui.runtime.single_instance import bring_to_front, parse_message

    parsed = parse_message(message)
    if parsed is None:
        return
    bring_to_front(window)
    _command, session_id = parsed
    if session_id and (window.session is None or window.session.id != session_id):
        window._schedule_open(session_id)


def _ensure_std_streams() -> None:
    """A windowed Windows build has no stdout/stderr (None); printing must not crash it."""
    import os

    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115


def main(argv: list[str] | None = None) -> int:
    """Start Coco; returns the process exit code."""
    if getattr(sys, "frozen", False):  # a bundled Coco started as its own worker process
        import multiprocessing  # (``core.system.worker_process``) runs that, and exits here

        multiprocessing.freeze_support()
    words = sys.argv[1:] if argv is None else argv
    if words[:1] == [MCP_EXAMPLE_FLAG]:  # a bundled Coco runs the example MCP server so
        from app.demo.mcp_example import main as serve_example

        serve_example(words[1:])
        return 0
    _ensure_std_streams()
    try:
        args = parse_args(words)
    except SystemExit as exc:  # --help, --version, or a usage error (already printed)
        return exc.code if isinstance(exc.code, int) else 0

    # Before Qt: a missing system library or no display at all, said in words (Qt's own
    # message names the wrong library, then aborts).
    from app.qt_preflight import check as check_qt_platform

    problem = check_qt_platform()
    if problem is not None:
        print(problem.message, file=sys.stderr)
        return 1

    if args.self_test:
        from app.selftest import run_self_test

        return run_self_test(args.data_dir, log_level=args.log_level)

    # Until the window is on screen, only long-lived objects are made (modules, classes,
    # widgets): collecting garbage there is pure delay, some 30 ms of the start-up.
    gc.disable()
    try:
        return _main(args)
    finally:
        gc.enable()


def _start_logging(paths: Any, level: str | None) -> Path | None:
    """The log file (and stderr) from here on; returns the file's path (None: unwritable)."""
    import platform

    from app.applog import setup_logging

    log_file = setup_logging(paths.log_dir, level)
    log.info("Coco %s starting (Python %s, %s; profile %s%s)", __version__,
             platform.python_version(), sys.platform, paths.data_dir,
             ", isolated" if paths.isolated else "")
    return log_file


def _main(args: argparse.Namespace) -> int:
    # Only what the window needs to appear is imported before its first paint. The log file
    # (logging.handlers), asyncio and qasync, pydantic, the settings and the core come after:
    # together they took longer than the whole bare Qt start-up.
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from app.ui.runtime import import_hook

    import_hook.install()  # before the window's modules: each import asks PySide6 a question

    from app.core.system.secrets import SecretStore
    from app.paths import AppPaths
    from app.ui.runtime.qt_messages import route_qt_messages
    from app.ui.runtime.single_instance import SingleInstance, focus_message, server_name
    from app.ui.window.app_context import AppContext
    from app.ui.window.main_window import MainWindow

    paths = AppPaths.resolve(args.data_dir)
    route_qt_messages()  # before the QApplication: its platform plugin speaks first
    app = QApplication.instance() or QApplication(["coco"])
    assert isinstance(app, QApplication)
    configure_application(app)
    # The window closes itself once its session is shut down; Qt must not quit before that.
    app.setQuitOnLastWindowClosed(False)

    instance = SingleInstance(server_name(paths.data_dir))
    # The lock decides; listening for later launches waits until the window has painted.
    if not instance.claim(focus_message(args.session), listen=False):
        if instance.handed_over:
            print("Coco is already running with this profile; switched to its window.")
        else:
            print("Coco is already running with this profile but did not answer; "
                  "close it (or end its process) and start Coco again.")
        return 0

    server_box: list[Any] = []

    def start_demo() -> str:
        from app.demo import ModelServer

        server = ModelServer(mode="demo", tokens_per_second=DEMO_TOKENS_PER_SECOND).start()
        server_box.append(server)
        log.info("Offline demo model listening on %s", server.url)
        return str(server.url)

    def stop_demo() -> None:
        while server_box:
            server_box.pop().stop()

    uninstall_hook = None
    logging_started = False
    log_file: Path | None = None
    previous_sigint = signal.getsignal(signal.SIGINT)
    try:
        context = AppContext(
            config_dir=paths.config_dir, data_dir=paths.data_dir, start_demo=start_demo,
            stop_demo=stop_demo, offline=args.offline, log_dir=paths.log_dir,
            # An isolated profile keeps its keys too: in its own 0600 file, not the keyring
            # every profile of this user shares.
            secrets=SecretStore(paths.config_dir, use_keyring=not paths.isolated),
            # ...and its caches (the tokenizer's), so nothing of it lands in ~/.cache.
            config_overrides=(
                {"tokenizer_cache_dir": paths.tokenizer_cache_dir} if paths.isolated else None
            ),
        )
        window = MainWindow(context)
        instance.message_received.connect(lambda message: _focus_window(window, message))
        # Ctrl+C in the terminal closes the window properly (the session is shut down).
        signal.signal(signal.SIGINT, lambda *_: QTimer.singleShot(0, window.close))
        wake = QTimer()
        wake.start(250)  # lets Python run its signal handlers while Qt idles
        wake.timeout.connect(lambda: None)
        window.show()
        close_requested = _wait_for_first_paint(window)
        instance.listen()
        window.composer.focus()
        gc.enable()  # off since main() began: see there

        log_file = _start_logging(paths, args.log_level)
        logging_started = True
        context.log_file = log_file
        from app.applog import install_excepthook
        from app.ui.window.crash_dialog import show_crash_dialog

        uninstall_hook = install_excepthook(
            lambda message: show_crash_dialog(message, log_file, window), log_file
        )

        import asyncio

        import qasync  # type: ignore[import-untyped]

        from app.ui.runtime.loop import install_asyncgen_hooks, release_loop_timers

        loop = qasync.QEventLoop(app)
        asyncio.set_event_loop(loop)
        install_asyncgen_hooks(loop)
        if close_requested:
            QTimer.singleShot(0, window.close)
        with loop:
            code: int = loop.run_until_complete(_run(window, args.session))
        release_loop_timers(loop)
        context.close()
        log.info("Coco closed")
        return code
    except Exception as exc:  # a start-up failure: say what happened, never a bare traceback
        from app.applog import crash_message

        if not logging_started:
            log_file = _start_logging(paths, args.log_level)
        log.critical("Coco could not start", exc_info=True)
        print(crash_message(exc, log_file), file=sys.stderr)
        return 1
    finally:
        signal.signal(signal.SIGINT, previous_sigint)
        if uninstall_hook is not None:
            uninstall_hook()
        instance.release()
        stop_demo()


if __name__ == "__main__":
    raise SystemExit(main())
