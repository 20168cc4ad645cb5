"""Tray notifications: when a long reply or a compaction finishes while the window is not
active; never when it is active, when the setting is off, or when there is no tray."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtWidgets import QSystemTrayIcon, QWidget

from app.core import protocol as p
from app.ui.window.notifications import LONG_REPLY_SECONDS, Notifications, TraySink


class RecordingSink:
    def __init__(self, available: bool = True) -> None:
        self.is_available = available
        self.shown: list[tuple[str, str]] = []

    def available(self) -> bool:
        return self.is_available

    def show(self, title: str, message: str) -> None:
        self.shown.append((title, message))


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Harness:
    def __init__(self, qtbot: Any, *, enabled: bool = True, active: bool = False,
                 tray: bool = True) -> None:
        self.window = QWidget()
        qtbot.addWidget(self.window)
        self.enabled = enabled
        self.active = active
        self.clock = Clock()
        self.sink = RecordingSink(tray)
        self.notes = Notifications(
            self.window, lambda: self.enabled, sink=self.sink, clock=self.clock,
            is_active=lambda: self.active,
        )

    def turn(self, seconds: float, *, kind: str = "regular", status: str = "completed",
             compacted: tuple[int, int] | None = None, trigger: str = "auto") -> None:
        self.notes.handle_event(p.TurnStarted(turn_id="t1", kind=kind))
        self.clock.now += seconds
        if compacted is not None:
            self.notes.handle_event(p.ContextCompacted(
                turn_id="t1", item_id="c1", trigger=trigger, strategy="local",
                tokens_before=compacted[0], tokens_after=compacted[1], duration_ms=1200,
            ))
        self.notes.handle_event(p.TurnComplete(turn_id="t1", kind=kind, status=status))


def test_long_reply_in_the_background_notifies(qtbot: Any) -> None:
    h = Harness(qtbot)
    h.turn(LONG_REPLY_SECONDS + 5)
    took = int(LONG_REPLY_SECONDS + 5)
    assert h.sink.shown == [("Coco: Reply ready", f"The reply took {took} s.")]


def test_short_reply_does_not_notify(qtbot: Any) -> None:
    h = Harness(qtbot)
    h.turn(LONG_REPLY_SECONDS - 1)
    assert h.sink.shown == []


def test_manual_compaction_in_the_background_notifies_with_figures(qtbot: Any) -> None:
    h = Harness(qtbot)
    h.turn(3, kind="compact", compacted=(12_000, 800), trigger="manual")
    assert h.sink.shown == [("Coco: Context compacted", "12,000 → 800 tokens, in 3 s.")]


def test_auto_compaction_inside_a_reply_is_one_notification(qtbot: Any) -> None:
    h = Harness(qtbot)
    h.turn(4, compacted=(9_000, 700))
    assert len(h.sink.shown) == 1
    title, message = h.sink.shown[0]
    assert title == "Coco: Reply ready"
    assert "compacted automatically (9,000 → 700 tokens)" in message


def test_active_window_is_never_notified(qtbot: Any) -> None:
    h = Harness(qtbot, active=True)
    h.turn(LONG_REPLY_SECONDS + 30)
    h.turn(2, kind="compact", compacted=(5000, 400), trigger="manual")
    assert h.sink.shown == []


def test_setting_off_silences_everything_and_is_read_each_time(qtbot: Any) -> None:
    h = Harness(qtbot, enabled=False)
    h.turn(LONG_REPLY_SECONDS + 30)
    assert h.sink.shown == []
    h.enabled = True
    h.turn(LONG_REPLY_SECONDS + 30)
    assert len(h.sink.shown) == 1


def test_stopped_turns_do_not_notify(qtbot: Any) -> None:
    h = Harness(qtbot)
    h.turn(LONG_REPLY_SECONDS + 30, status="aborted")
    assert h.sink.shown == []


def test_long_failed_reply_says_so(qtbot: Any) -> None:
    h = Harness(qtbot)
    h.turn(LONG_REPLY_SECONDS + 1, status="failed")
    assert h.sink.shown == [("Coco: Reply failed", "See Coco's window for the reason.")]


def test_no_tray_means_no_op(qtbot: Any) -> None:
    h = Harness(qtbot, tray=False)
    h.turn(LONG_REPLY_SECONDS + 30)
    assert h.sink.shown == []
    assert h.notes.notify("Title", "message") is False


def test_real_tray_sink_is_a_no_op_without_a_system_tray(qtbot: Any) -> None:
    if QSystemTrayIcon.isSystemTrayAvailable():
        pytest.skip("this platform has a system tray")
    window = QWidget()
    qtbot.addWidget(window)
    notes = Notifications(window, lambda: True, is_active=lambda: False)
    assert notes.notify("Reply ready", "The reply took 30 s.") is False
    assert not TraySink(window.windowIcon()).available()


def test_notifications_never_carry_message_text(qtbot: Any) -> None:
    h = Harness(qtbot)
    h.notes.handle_event(p.TurnStarted(turn_id="t1"))
    h.clock.now += LONG_REPLY_SECONDS + 1
    h.notes.handle_event(p.TurnComplete(
        turn_id="t1", last_agent_message="the private answer text"))
    assert h.sink.shown and all("private answer" not in m for _t, m in h.sink.shown)
