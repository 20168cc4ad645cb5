"""``coco --self-test``: drive the real window through a short conversation and check it.

It opens the main window on a throw-away profile, starts the offline demo model, chats, runs a
manual compaction and then an automatic one (the auto-compact limit is set low so it fires),
checks the transcript and the history the model sees, reopens the session from disk, opens the
Help dialogs, checks the log, and closes the window. It prints one line per step and exits 0,
or 1 naming the step that failed. It works headless (``QT_QPA_PLATFORM=offscreen``) and in a
PyInstaller bundle, which is what the packaging checks run.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from app import __version__
from app.paths import AppPaths

log = logging.getLogger("coco.selftest")

DEFAULT_TIMEOUT = 45.0
STEP_TIMEOUT = 15.0
# Low enough that a few demo turns cross it; the demo's context window stays at its default.
SELF_TEST_AUTO_COMPACT_LIMIT = 600
MAX_TURNS_FOR_AUTO = 6
# A text and its token count in both encodings Coco ships (o200k_base, cl100k_base); the byte
# estimate says 9, so an exact count is told apart from an estimate.
TOKEN_PROBE = "Compaction: tokens before → after"
TOKEN_PROBE_COUNT = 7

MESSAGES = (
    "Hello Coco, I am planning a trip to Lisbon in May with my sister.",
    "We like museums, long walks and seafood; we have four days.",
    "Please remember that my sister is vegetarian.",
    "What should we do on the first day?",
    "Any tips for getting around the city cheaply?",
    "Which neighbourhood is best for an evening stroll?",
    "How about a day trip outside the city?",
    "Summarise what you know about our plans so far.",
    "Thank you, that is all for now.",
)


class SelfTestFailure(Exception):
    """A check failed; ``step`` names it."""

    def __init__(self, step: str, reason: str) -> None:
        super().__init__(f"{step}: {reason}")
        self.step = step
        self.reason = reason


class _Run:
    """The state of one self-test run: what was sent, the step in progress, the output."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.step = "start"
        self.sent: list[str] = []
        self.unhandled: list[str] = []
        self.started = time.monotonic()

    @contextmanager
    def check(self, name: str) -> Iterator[None]:
        self.step = name
        begun = time.monotonic()
        yield
        self.out.write(f"ok    {name} ({time.monotonic() - begun:.1f} s)\n")
        self.out.flush()

    def fail(self, reason: str) -> SelfTestFailure:
        return SelfTestFailure(self.step, reason)

    def expect(self, condition: bool, reason: str) -> None:
        if not condition:
            raise self.fail(reason)


async def _wait_until(
    run: _Run, condition: Callable[[], bool], what: str, timeout: float = STEP_TIMEOUT
) -> None:
    """Poll ``condition`` on the event loop (Qt keeps running) until true or ``timeout``."""
    deadline = time.monotonic() + timeout
    while not condition():
        if run.unhandled:
            raise run.fail(f"unhandled exception while waiting for {what}")
        if time.monotonic() > deadline:
            raise run.fail(f"timed out after {timeout:.0f} s waiting for {what}")
        await asyncio.sleep(0.02)


def _settled(counter: Any) -> Callable[[], bool]:
    """Whether ``counter`` (a TokenCounter) has finished loading its encoding."""
    return lambda: bool(counter.state != "loading")


def _user_texts(entries: list[dict[str, Any]]) -> list[str]:
    from app.core.compaction.prompts import is_summary_message
    from app.core.items import is_message, message_text

    return [
        message_text(e["item"]) for e in entries
        if e.get("kind") == "item" and is_message(e["item"], "user")
        and not is_summary_message(e["item"])
    ]


def _compactions(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in entries if e.get("kind") == "compaction" and not e.get("undone")]


async def _send(run: _Run, window: Any, text: str) -> None:
    """Type ``text`` into the composer and press Enter, then wait for the reply."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    replies = len(window.transcript.message_rows("assistant"))
    edit = window.composer.edit
    edit.setFocus()
    edit.setPlainText(text)
    QTest.keyClick(edit, Qt.Key.Key_Return)
    run.sent.append(text)
    await _wait_until(run, lambda: window.busy, "the turn to start", 5.0)
    await _wait_until(run, lambda: not window.busy, "the reply")
    # The window is idle between the reply's end and the compaction it may lead to; the core's
    # slot is held until it has decided, and through that compaction.
    await _wait_until(run, lambda: not window.session.busy, "a compaction after the reply")
    rows = window.transcript.message_rows("assistant")
    run.expect(len(rows) == replies + 1, f"expected a reply, found {len(rows) - replies}")
    run.expect(bool(rows[-1].text.strip()), "the reply is empty")


async def _scenario(run: _Run, window: Any, paths: AppPaths, log_file: Path | None) -> None:
    from app.core.compaction.prompts import is_summary_message
    from app.core.items import is_message, message_text

    with run.check("open the window on the offline demo model"):
        await window.open_session(None)
        window.show()
        run.expect(window.isVisible(), "the window is not shown")
        run.expect(window.session is not None, "no session was opened")
        run.expect(window.context.using_demo, "the demo model is not in use")

    with run.check("exact token counts from the shipped tokenizer (no cache, no network)"):
        from app.core.tokens.counter import TokenCounter, approx_tokens

        for model in ("gpt-4.1", "gpt-4"):  # o200k_base, cl100k_base
            counter = TokenCounter(model, paths.tokenizer_cache_dir, allow_download=False)
            await _wait_until(run, _settled(counter), f"the {counter.encoding_name} tokenizer")
            run.expect(counter.exact, f"no exact counts: the shipped {counter.encoding_name} "
                       "tokenizer file is missing or damaged")
            counted = counter.count(TOKEN_PROBE)
            run.expect(counted == TOKEN_PROBE_COUNT != approx_tokens(TOKEN_PROBE),
                       f"{counter.encoding_name} counts {counted} tokens in {TOKEN_PROBE!r}, "
                       f"not {TOKEN_PROBE_COUNT}")
        written = list(paths.cache_dir.rglob("*")) if paths.cache_dir.is_dir() else []
        run.expect(not written, f"the tokenizer wrote to the cache folder: {written[:3]}")

    with run.check("chat: two replies"):
        for text in MESSAGES[:2]:
            await _send(run, window, text)

    with run.check("manual compaction (Compact action)"):
        window.compact_action.trigger()
        await _wait_until(run, lambda: bool(window.transcript.compaction_rows()),
                          "the compaction marker")
        await _wait_until(run, lambda: not window.busy, "the compaction")
        entries = window.session.transcript()
        done = _compactions(entries)
        run.expect(len(done) == 1, f"expected 1 compaction, found {len(done)}")
        run.expect(done[0].get("trigger") == "manual", f"trigger is {done[0].get('trigger')}")
        marker = window.transcript.compaction_rows()[0]
        run.expect(marker.state == "done", f"marker state is {marker.state!r}")

    with run.check("automatic compaction (low auto-compact limit)"):
        for sent, text in enumerate(MESSAGES[2:2 + MAX_TURNS_FOR_AUTO], start=1):
            await _send(run, window, text)  # (and the compaction right after it, if any)
            if any(c.get("trigger") == "auto" for c in _compactions(window.session.transcript())):
                break
        else:
            raise run.fail(f"no automatic compaction after {MAX_TURNS_FOR_AUTO} turns")
        await _send(run, window, MESSAGES[2 + sent])  # the next message, after the summary

    session = window.session
    entries = session.transcript()
    history = session.history()
    with run.check("transcript keeps everything, with marker rows"):
        run.expect(_user_texts(entries) == run.sent,
                   "the transcript does not hold every user message in order")
        rows = window.transcript.message_rows("user")
        run.expect([r.text for r in rows] == run.sent, "the window does not show every message")
        markers = window.transcript.compaction_rows()
        done = _compactions(entries)
        told = ", ".join(
            f"{c.get('trigger')} {c.get('tokens_before')}→{c.get('tokens_after')}" for c in done
        )
        run.expect(len(markers) == len(done) == 2,
                   f"expected 2 compactions with a marker row each, found {len(done)} "
                   f"({told}) and {len(markers)} marker rows "
                   f"({', '.join(m.state for m in markers)})")
        run.expect(all(m.state == "done" for m in markers), "a marker is not finished")
        above = window.transcript.rows[: window.transcript.rows.index(markers[-1])]
        # Above the last marker only the user messages the history still holds verbatim
        # (kept by the compaction) are in the model's view; everything else is marked out.
        in_view = set(_user_texts([{"kind": "item", "item": item} for item in history]))
        run.expect(bool(above), "no rows before the last compaction")
        run.expect(
            all(
                r.in_context == (getattr(r, "role", None) == "user" and r.text in in_view)
                for r in above
            ),
            "rows before the last compaction are not marked as the core says",
        )

    with run.check("history is compacted, summary last before the new message"):
        items = [e for e in entries if e.get("kind") == "item"]
        run.expect(len(history) < len(items),
                   f"history ({len(history)} items) is not shorter than the transcript "
                   f"({len(items)} items)")
        summaries = [i for i, item in enumerate(history) if is_summary_message(item)]
        run.expect(len(summaries) == 1, f"expected 1 summary in the history, {len(summaries)}")
        users = [i for i, item in enumerate(history)
                 if is_message(item, "user") and not is_summary_message(item)]
        after = [i for i in users if i > summaries[0]]
        run.expect(bool(after), "no user message after the summary")
        run.expect(after[0] == summaries[0] + 1,
                   "the summary is not the last item before the new user message")
        run.expect(message_text(history[after[-1]]) == run.sent[-1],
                   "the newest user message is not in the history")

    with run.check("reopen the session from disk"):
        session_id = session.id
        await window.open_session(session_id)
        run.expect(window.session is not None and window.session.id == session_id,
                   "the session did not reopen")
        run.expect(window.session.history() == history, "the resumed history differs")
        run.expect(len(window.transcript.compaction_rows()) == 2,
                   "the reopened transcript lost its marker rows")

    with run.check("help dialogs"):
        from app.ui.window.help_dialogs import AboutDialog, ShortcutsDialog

        shortcuts = ShortcutsDialog(window)
        rows = shortcuts.rows()
        run.expect(any("Compact" in action for _g, action, _k in rows),
                   "the shortcuts list has no Compact entry")
        shortcuts.deleteLater()
        about = AboutDialog(paths, log_file, window)
        run.expect(f"Coco {__version__}" in about.details_text(), "About shows no version")
        about.deleteLater()

    with run.check("log file written, without message contents"):
        for handler in logging.getLogger().handlers:
            handler.flush()
        if log_file is None:
            raise run.fail("no log file could be written")
        run.expect(log_file.is_file(), f"no log file at {log_file}")
        text = log_file.read_text(encoding="utf-8", errors="replace")
        leaked = [m for m in run.sent if m in text]
        run.expect(not leaked, "the log contains message text")
        run.expect(not run.unhandled, "an unhandled exception was reported")

    with run.check("close the window"):
        closed = asyncio.Event()
        window.closed.connect(closed.set)
        window.close()
        try:
            await asyncio.wait_for(closed.wait(), 10)
        except TimeoutError:
            raise run.fail("the window did not close within 10 s") from None


def run_self_test(
    data_dir: Path | None = None,
    *,
    log_level: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    out: TextIO | None = None,
) -> int:
    """Run the self-test; 0 when every step passed, 1 otherwise.

    ``data_dir``: the profile to use (kept afterwards); None uses a temporary folder that is
    removed when the test passes and kept, for inspection, when it fails.
    """
    out = out or sys.stdout
    temporary = data_dir is None
    root = Path(tempfile.mkdtemp(prefix="coco-selftest-")) if data_dir is None else data_dir
    paths = AppPaths.resolve(root)
    run = _Run(out)
    out.write(f"Coco {__version__} self-test in {paths.data_dir}\n")
    out.flush()
    try:
        code = _run_in_qt(run, paths, log_level, timeout)
    except SelfTestFailure as exc:
        code = 1
        out.write(f"FAIL  {exc.step}: {exc.reason}\n")
    except Exception as exc:  # any crash is a failed step, reported as such
        code = 1
        log.exception("Self-test crashed")
        out.write(f"FAIL  {run.step}: {type(exc).__name__}: {exc}\n")
    total = time.monotonic() - run.started
    if code == 0:
        out.write(f"PASS  self-test ({total:.1f} s)\n")
        if temporary:
            shutil.rmtree(paths.data_dir, ignore_errors=True)
    else:
        out.write(f"The profile was kept for inspection: {paths.data_dir}\n")
    out.flush()
    return code


def _run_in_qt(run: _Run, paths: AppPaths, log_level: str | None, timeout: float) -> int:
    import qasync  # type: ignore[import-untyped]
    from PySide6.QtCore import qVersion
    from PySide6.QtWidgets import QApplication

    from app.applog import install_excepthook, setup_logging
    from app.core.system.secrets import SecretStore
    from app.demo import ModelServer
    from app.ui.runtime.loop import install_asyncgen_hooks, release_loop_timers
    from app.ui.runtime.qt_messages import route_qt_messages
    from app.ui.style.icons import app_icon
    from app.ui.window.app_context import AppContext
    from app.ui.window.main_window import MainWindow

    log_file = setup_logging(paths.log_dir, log_level)
    route_qt_messages()
    log.info("Self-test starting (Coco %s)", __version__)
    app = QApplication.instance() or QApplication(["coco", "--self-test"])
    assert isinstance(app, QApplication)
    app.setApplicationName("Coco")
    app.setWindowIcon(app_icon())
    app.setQuitOnLastWindowClosed(False)
    run.out.write(f"Qt {qVersion()} on the {app.platformName()!r} platform\n")
    uninstall = install_excepthook(run.unhandled.append, log_file)
    server = ModelServer(mode="demo", tokens_per_second=None).start()
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    install_asyncgen_hooks(loop)
    try:
        context = AppContext(
            config_dir=paths.config_dir,
            data_dir=paths.data_dir,
            secrets=SecretStore(paths.config_dir, use_keyring=False),
            start_demo=lambda: server.url,
            stop_demo=lambda: None,
            offline=True,
            env={},
            config_overrides={
                "auto_compact_token_limit": SELF_TEST_AUTO_COMPACT_LIMIT,
                "tokenizer_download": False,
                # The profile's own (empty) cache: exact counts can only come from the shipped
                # tokenizer files, which the tokenizer step checks.
                "tokenizer_cache_dir": paths.tokenizer_cache_dir,
            },
        )
        window = MainWindow(context)
        window.resize(1000, 700)
        scenario: Awaitable[None] = _scenario(run, window, paths, log_file)
        with loop:
            try:
                loop.run_until_complete(asyncio.wait_for(scenario, timeout))
            except TimeoutError:
                raise run.fail(f"the self-test did not finish within {timeout:.0f} s") from None
            finally:
                if not window._close_done:  # a failed step left it open: close it properly
                    window.close()
                    deadline = time.monotonic() + 5
                    while not window._close_done and time.monotonic() < deadline:
                        loop.run_until_complete(asyncio.sleep(0.05))
                context.close()
        release_loop_timers(loop)
        return 0
    finally:
        server.stop()
        uninstall()
        log.info("Self-test finished")
