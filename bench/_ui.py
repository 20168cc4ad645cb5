"""Building and driving the real window for the UI benchmarks (offscreen Qt, qasync loop).

The window is ``app.ui.window.main_window.MainWindow`` on an ``AppContext`` with settings for a custom
provider (no key, no keyring, no demo server), built the way the launcher builds it.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from bench._common import MODEL, setup_env

T = TypeVar("T")


def _import_pyside() -> None:
    """PySide6, with the import hook the app installs at start-up (``app.main``): without it
    every module imported afterwards has its source read through ``linecache`` (2 MB and
    milliseconds per lazy import that the app does not pay)."""
    import PySide6.QtCore  # noqa: F401  (the hook exists once PySide6 is imported)

    from app.ui.runtime import import_hook

    import_hook.install()


def main_window_class() -> Any:
    """``MainWindow`` when ``app.ui`` has one, else ``None``."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    try:
        _import_pyside()
        from app.ui.window.main_window import MainWindow
    except ImportError:
        return None
    return MainWindow


def pyside_drops_references() -> bool:
    """True when this PySide6 drops references to ``True`` / ``None`` it returns.

    PySide6 6.12.0 does, on CPython 3.11 (where ``None`` and ``True`` are not immortal): every
    Python ``Signal.emit()`` loses a reference to ``True``, and calls such as
    ``QLabel.setText``, ``QTextEdit.setHtml``, ``QWidget.setStyleSheet`` or
    ``QApplication.sendEvent`` lose one to ``None``. After some thousands of calls the process
    aborts ("Fatal Python error: none_dealloc / bool_dealloc"). The probe gives back what it took.
    """
    import sys

    from PySide6.QtCore import QObject, Signal
    from PySide6.QtWidgets import QLabel

    class _Probe(QObject):
        fired = Signal(object)

    probe = _Probe()
    label = QLabel()
    true_before, none_before = sys.getrefcount(True), sys.getrefcount(None)
    for _ in range(8):
        probe.fired.emit(0)
        label.setText("probe")
    lost_true = true_before - sys.getrefcount(True)
    lost_none = none_before - sys.getrefcount(None)
    if lost_true > 0:
        _add_refs(True, lost_true)
    if lost_none > 0:
        _add_refs(None, lost_none)
    return lost_true > 0 or lost_none > 0


def _add_refs(obj: object, count: int) -> None:
    import ctypes

    ctypes.c_ssize_t.from_address(id(obj)).value += count


EMIT_BUG_MITIGATED = False


def qt_app() -> Any:
    """The process's ``QApplication`` (offscreen unless told otherwise).

    If PySide6 has the reference bug (see :func:`pyside_drops_references`), ``None``, ``True``
    and ``False`` get a billion spare references each so the window survives long enough to be
    measured; the results say so (``EMIT_BUG_MITIGATED``). A benchmark-only crutch, not a fix.
    """
    global EMIT_BUG_MITIGATED
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    _import_pyside()
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(["coco-bench"])
    app.setQuitOnLastWindowClosed(False)
    if not EMIT_BUG_MITIGATED and pyside_drops_references():
        for obj in (None, True, False):
            _add_refs(obj, 10**9)
        EMIT_BUG_MITIGATED = True
    return app


def run_on_qt(make: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine on a qasync loop over the Qt application, as the launcher does."""
    import qasync

    app = qt_app()
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    try:
        from app.ui.runtime.loop import install_asyncgen_hooks

        install_asyncgen_hooks(loop)
    except ImportError:
        pass
    with loop:
        return loop.run_until_complete(make())


def make_context(root: Path, base_url: str, **settings: Any) -> Any:
    """An ``AppContext`` under ``root`` (config/ and data/) pointing at ``base_url``."""
    from app.core.settings import AppSettings, SettingsStore
    from app.core.system.secrets import SecretStore
    from app.ui.window.app_context import AppContext

    folder = setup_env()
    config_dir = root / "config"
    values: dict[str, Any] = {
        "provider": "custom",
        "base_url": base_url,
        "model": MODEL,
        "wire_api": "responses",
    }
    values.update(settings)
    SettingsStore(config_dir).save(AppSettings(**values))
    return AppContext(
        config_dir=config_dir,
        data_dir=root / "data",
        secrets=SecretStore(config_dir, use_keyring=False),
        env={},
        start_demo=None,
        config_overrides={
            "tokenizer_cache_dir": folder or root / "tiktoken",
            "tokenizer_download": False,
            "retry_base_delay": 0.001,
        },
    )


def make_window(context: Any) -> Any:
    main_window = main_window_class()
    window = main_window(context)
    window.resize(1200, 780)
    return window


async def close_window(window: Any, timeout: float = 10.0) -> None:
    """Close as the user does and wait until the session has shut down."""
    if window._close_done:
        return
    window.close()
    deadline = time.perf_counter() + timeout
    while not window._close_done and time.perf_counter() < deadline:
        await asyncio.sleep(0.01)


class PaintWatch:
    """Records when any of ``widgets`` receives a paint event."""

    def __init__(self, *widgets: Any) -> None:
        from PySide6.QtCore import QEvent, QObject

        watch = self
        self.times: list[float] = []

        class _Filter(QObject):
            def eventFilter(self, obj: Any, event: Any) -> bool:
                if event.type() == QEvent.Type.Paint:
                    watch.times.append(time.perf_counter())
                return False

        self._filter = _Filter()
        for widget in widgets:
            widget.installEventFilter(self._filter)
        self.widgets = widgets

    def first_after(self, moment: float) -> float | None:
        return next((t for t in self.times if t >= moment), None)

    async def wait_after(self, moment: float, timeout: float = 120.0) -> float:
        """The first paint at or after ``moment`` (waits for one, asking for an update)."""
        for widget in self.widgets:
            widget.update()
        deadline = time.perf_counter() + timeout
        while True:
            found = self.first_after(moment)
            if found is not None:
                return found
            if time.perf_counter() > deadline:
                raise TimeoutError("no paint event arrived")
            await asyncio.sleep(0.001)


class StallProbe:
    """A main-thread timer firing every ``interval_ms``; the gaps between firings are stalls."""

    def __init__(self, interval_ms: int = 5) -> None:
        from PySide6.QtCore import QTimer

        self.interval = interval_ms / 1000
        self.stamps: list[float] = []
        self.timer = QTimer()
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(lambda: self.stamps.append(time.perf_counter()))

    def start(self) -> None:
        self.stamps = [time.perf_counter()]
        self.timer.start()

    def stop(self) -> None:
        self.stamps.append(time.perf_counter())
        self.timer.stop()

    def gaps_ms(self) -> list[float]:
        return [(b - a) * 1000 for a, b in zip(self.stamps, self.stamps[1:], strict=False)]

    def longest_ms(self) -> float:
        gaps = self.gaps_ms()
        return max(gaps) if gaps else 0.0

    def over_ms(self, limit: float) -> int:
        return sum(1 for gap in self.gaps_ms() if gap > limit)


def transcript_paint_targets(window: Any) -> list[Any]:
    """What repaints when the transcript shows new content: its scrolled widget (a
    ``QScrollArea`` design) and its viewport (an item-view design)."""
    view = window.transcript
    targets = [view.viewport()]
    inner = view.widget() if hasattr(view, "widget") else None
    if inner is not None:
        targets.append(inner)
    return targets


def resume_to_first_paint(data_dir: Path, session_id: str) -> dict[str, Any]:
    """In a window already shown (an empty new session painted), open ``session_id`` as a
    click in the session list does; time until the window's first paint showing it."""
    from bench._common import current_rss_mb, peak_rss_mb

    root = data_dir.parent
    context = make_context(root, "http://127.0.0.1:9/v1")
    assert context.data_dir == data_dir

    async def scenario() -> dict[str, Any]:
        window = make_window(context)
        await window.open_session(None)
        window.show()
        watch = PaintWatch(*transcript_paint_targets(window))
        await watch.wait_after(0.0, timeout=30)
        await asyncio.sleep(0.05)
        rss_before = current_rss_mb()
        start = time.perf_counter()
        await window.open_session(session_id)
        opened = time.perf_counter()
        painted = await watch.wait_after(opened)
        rows = len(window.transcript.rows)
        rss_after = current_rss_mb()
        await close_window(window)
        return {
            "paint_s": painted - start,
            "open_session_s": opened - start,
            "paint_after_open_s": painted - opened,
            "rows": rows,
            "rss_before_mb": rss_before,
            "rss_after_mb": rss_after,
            "peak_mb": peak_rss_mb(),
        }

    out = run_on_qt(scenario)
    out["emit_bug_mitigated"] = EMIT_BUG_MITIGATED
    return out
