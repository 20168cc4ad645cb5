"""Memory housekeeping: no full collection walks the long-lived objects during a turn, and
what the window froze is handed back when it closes; a replaced session is collected."""

from __future__ import annotations

import gc
import sys
from typing import Any

from app.demo import Reply
from app.ui import memory

from .conftest import close_window
from .helpers import type_and_send, wait_idle


def test_objects_alive_when_a_turn_starts_are_frozen_and_thawed_on_close(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    # Once the session is on screen, it and everything before it are frozen.
    qtbot.waitUntil(lambda: gc.get_freeze_count() > 0, timeout=3000)
    server.enqueue(Reply(text="ok"))
    type_and_send(qtbot, window, "hello")
    frozen_at_turn = gc.get_freeze_count()
    assert frozen_at_turn > 0
    wait_idle(qtbot, window)
    close_window(qtbot, window)
    assert gc.get_freeze_count() == 0


def test_switching_sessions_collects_what_the_old_one_left(
    qtbot: Any, make_window: Any
) -> None:
    window = make_window()
    collected: list[int] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info["generation"] == 2:
            collected.append(info["collected"])

    gc.callbacks.append(note)
    try:
        qtbot.waitUntil(window.start_new_session().done, timeout=5000)
        # Once the new session is on screen: a full collection, then a freeze again.
        qtbot.waitUntil(lambda: bool(collected) and gc.get_freeze_count() > 0, timeout=3000)
    finally:
        gc.callbacks.remove(note)


def test_a_new_empty_session_is_tidied_up_after_its_paint_not_at_the_time_limit(
    qtbot: Any, make_window: Any, monkeypatch: Any
) -> None:
    """The housekeeping waits for the paint that shows the session; an empty new session
    must get that paint too, or it runs at the half-second fallback, mid-whatever."""
    from PySide6.QtCore import QEvent, QObject

    window = make_window()
    order: list[str] = []

    class PaintLog(QObject):
        def eventFilter(self, obj: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint:
                order.append("paint")
            return False

    log = PaintLog()
    window.transcript.viewport().installEventFilter(log)
    real = memory.session_shown
    monkeypatch.setattr(memory, "session_shown", lambda: (order.append("shown"), real()))
    qtbot.waitUntil(window.start_new_session().done, timeout=5000)
    qtbot.waitUntil(lambda: "shown" in order, timeout=3000)

    assert "paint" in order[: order.index("shown")]


def test_trimming_the_heap_is_possible_with_glibc() -> None:
    trimmed = memory.trim_heap()
    assert trimmed is (sys.platform.startswith("linux") and _glibc())


def _glibc() -> bool:
    import platform

    return platform.libc_ver()[0] == "glibc"
