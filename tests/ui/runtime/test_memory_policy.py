"""Memory housekeeping: no full collection walks the long-lived objects during a turn or at a
session switch (only every so often), and what the window froze is handed back when it
closes."""

from __future__ import annotations

import gc
import sys
from typing import Any

import pytest

from app.demo import Reply
from app.ui.runtime import memory

from ..conftest import close_window
from ..helpers import type_and_send, wait_idle


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


def test_switching_sessions_runs_no_full_collection_but_every_so_often(
    qtbot: Any, make_window: Any, monkeypatch: Any
) -> None:
    """A full collection walks everything the process holds (80 ms on the main thread); a
    switch leaves the closed session to reference counting, and only every
    ``FULL_COLLECTION_EVERY``-th switch collects what waits in cycles."""
    window = make_window()
    monkeypatch.setattr(memory, "FULL_COLLECTION_EVERY", 2)
    monkeypatch.setattr(memory, "_switches", 0)
    shown: list[str] = []
    real = memory.session_shown
    monkeypatch.setattr(memory, "session_shown", lambda: (shown.append("shown"), real()))
    # The collections the housekeeping asks for, by generation (the interpreter's own
    # automatic ones are not its doing and are not counted).
    asked: list[int] = []
    real_collect = gc.collect

    def collect(generation: int = 2) -> int:
        if sys._getframe(1).f_globals.get("__name__") == memory.__name__:
            asked.append(generation)
        return real_collect(generation)

    monkeypatch.setattr(gc, "collect", collect)
    qtbot.waitUntil(window.start_new_session().done, timeout=5000)
    qtbot.waitUntil(lambda: len(shown) == 1, timeout=3000)
    assert gc.get_freeze_count() > 0  # frozen again after the young collection
    assert asked == [1]  # the young generations only at the first switch
    qtbot.waitUntil(window.start_new_session().done, timeout=5000)
    qtbot.waitUntil(lambda: len(shown) == 2, timeout=3000)
    # The second switch collects everything once, then freezes again.
    assert asked == [1, 2]
    assert gc.get_freeze_count() > 0


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


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc only")
def test_opening_a_session_fixes_the_mmap_threshold_first(
    make_window: Any, monkeypatch: Any
) -> None:
    """glibc raises its mmap threshold whenever a large mapped block is freed, and a second
    long read then fragments the heap for good; the window fixes it before reading any
    session (``mallopt`` is asked, with the threshold)."""
    import ctypes

    calls: list[tuple[int, int]] = []

    class _Libc:
        def mallopt(self, param: int, value: int) -> int:
            calls.append((param, value))
            return 1

    monkeypatch.setattr(memory, "_threshold_fixed", False)
    monkeypatch.setattr(memory, "_trim_looked_up", True)  # (the fake has no malloc_trim)
    monkeypatch.setattr(ctypes, "CDLL", lambda _name: _Libc())
    make_window()
    assert calls[:1] == [(-3, memory.MMAP_THRESHOLD)]
    assert memory.fix_mmap_threshold()
    assert len(calls) == 1  # once per process


def test_opening_a_saved_session_runs_no_collection_and_freezes_what_it_built(
    qtbot: Any, make_window: Any, server: Any, monkeypatch: Any
) -> None:
    """Reading a session and building its rows make containers that all stay alive: the
    collector's automatic runs walked them for nothing before the first paint. While the
    session opens only the young collection asked for at the switch runs, and what the open
    built is frozen before the window paints it."""
    from app.demo import Reply

    from ..helpers import type_and_send, wait_idle

    window = make_window()
    for number in range(25):
        server.enqueue(Reply(text=f"answer {number} " + "word " * 40))
        type_and_send(qtbot, window, f"question {number}")
        wait_idle(qtbot, window)
    session_id = window.session.id
    qtbot.waitUntil(window.start_new_session().done, timeout=5000)

    asked: list[int] = []
    real_collect = gc.collect

    def collect(generation: int = 2) -> int:
        asked.append(generation)
        return real_collect(generation)

    ran: list[int] = []

    def on_collection(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            ran.append(info["generation"])

    unfrozen_rows: list[int] = []

    def on_opened(_session_id: str) -> None:  # before the first paint of the session
        gc.callbacks.remove(on_collection)
        ids = {id(obj) for obj in gc.get_objects()}
        unfrozen_rows.append(sum(1 for row in window.transcript.rows if id(row) in ids))

    window.controller.session_opened.connect(on_opened)
    monkeypatch.setattr(gc, "collect", collect)
    gc.callbacks.append(on_collection)
    try:
        qtbot.waitUntil(window._schedule_open(session_id).done, timeout=5000)
    finally:
        if on_collection in gc.callbacks:
            gc.callbacks.remove(on_collection)
    assert len(window.transcript.message_rows()) == 50
    assert ran == asked == [1]  # the young collection at the switch, nothing automatic
    assert unfrozen_rows == [0]


def test_a_branch_drawn_again_runs_no_collection_and_is_frozen_before_collection_resumes() -> None:
    """Another branch's rows are made with the collector paused; what exists is frozen while
    it still is, so the collection due once it resumes does not walk them all."""
    collections: list[int] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    assert gc.isenabled()
    before = gc.get_freeze_count()
    gc.callbacks.append(note)
    try:
        with memory.drawing_branch():
            rows = [[n] for n in range(50_000)]  # far past the young generation's threshold
            assert not gc.isenabled()
        leftover = [[n] for n in range(10)]  # an allocation after it: nothing is due
        assert gc.isenabled() and len(leftover) == 10
        assert collections == []
        assert gc.get_freeze_count() >= before + len(rows)
    finally:
        gc.callbacks.remove(note)
        gc.unfreeze()
