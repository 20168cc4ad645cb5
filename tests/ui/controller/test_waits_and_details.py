"""Waits with a word and a live count, and errors with their detail one click away, driven by
the real core against the scripted server. The window's clock is a fake one the test moves,
and the once-a-second tick is called through ``tick_waits`` (what its timer calls)."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt

from app.core.providers import sampling
from app.demo import Fault, Reply

from ..helpers import type_and_send, wait_idle


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def with_fake_clock(window: Any) -> FakeClock:
    """Give the window's transcript a clock the test moves; returns it."""
    clock = FakeClock()
    window.transcript.clock = clock
    return clock


def reconnect_rows(window: Any) -> list[str]:
    return [row.message for row in window.transcript.notice_rows("stream_error")]


def test_a_capped_server_wait_counts_down_and_says_why(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window(overrides={"max_retries": 2})
    clock = with_fake_clock(window)
    server.enqueue(Fault.status(429, "slow down", retry_after=3600))
    type_and_send(qtbot, window, "question")
    qtbot.waitUntil(lambda: bool(reconnect_rows(window)), timeout=5000)

    expected = (
        "Reconnecting... 1/2 · Retrying in {} — the server is rate limiting requests; "
        "it asked for 1 h, Coco waits at most 60 s"
    )
    assert reconnect_rows(window) == [expected.format("60 s")]
    assert window.transcript._wait_timer.isActive()  # the window ticks it each second
    clock.now += 1
    window.transcript.tick_waits()
    assert reconnect_rows(window) == [expected.format("59 s")]
    clock.now += 17.4
    window.transcript.tick_waits()
    assert reconnect_rows(window) == [expected.format("42 s")]

    window.stop()  # the user does not wait the minute out
    wait_idle(qtbot, window)
    stopped = "Reconnecting... 1/2 · the server is rate limiting requests · stopped while waiting"
    assert reconnect_rows(window) == [f"{stopped} to retry"]
    assert not window.transcript._wait_timer.isActive()


def test_the_countdown_ends_when_the_next_attempt_answers(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window(overrides={"max_retries": 1})
    with_fake_clock(window)
    texts: list[str] = []
    window.bridge.event_received.connect(
        lambda event: texts.append(window.transcript.waiting_text())
    )
    server.enqueue(Fault.status(429, "busy", retry_after=1))
    server.enqueue(Reply(text="here it is"))
    type_and_send(qtbot, window, "question")
    wait_idle(qtbot, window)
    assert "Reconnecting... 1/1 · Retrying in 1 s — the server is rate limiting requests" in texts
    assert window.transcript.waiting_text() == ""
    assert reconnect_rows(window) == [
        "Reconnecting... 1/1 · the server is rate limiting requests · retried after 1 s"
    ]
    assert [row.text for row in window.transcript.message_rows("assistant")] == ["here it is"]


@pytest.fixture
def quick_stall_notice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sampling, "STALL_NOTICE_SECONDS", 0.05)


def test_a_stalled_stream_shows_a_count_up_with_the_timeout(
    qtbot: Any, make_window: Any, server: Any, quick_stall_notice: None
) -> None:
    window = make_window(settings={"request_timeout": 120})
    clock = with_fake_clock(window)
    server.enqueue(Reply(reasoning="thinking", text="never sent", pause_after_items=1))
    type_and_send(qtbot, window, "think hard")
    qtbot.waitUntil(lambda: window.transcript.waiting_text() != "", timeout=5000)
    tail = " Coco gives up after 2 min without data (the request timeout, in Settings)"
    assert window.transcript.waiting_text() == "Waiting for the server (0 s)…" + tail
    clock.now += 12.3
    window.transcript.tick_waits()
    assert window.transcript.waiting_text() == "Waiting for the server (12 s)…" + tail
    clock.now += 1
    window.transcript.tick_waits()
    assert window.transcript.waiting_text() == "Waiting for the server (13 s)…" + tail

    window.stop()
    wait_idle(qtbot, window)
    # The wait is over: its row goes, the interruption is said as usual.
    assert window.transcript.waiting_text() == ""
    assert reconnect_rows(window) == []
    assert not window.transcript._wait_timer.isActive()


def test_an_error_row_shows_its_detail_on_demand_and_after_reopening(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window(overrides={"max_retries": 0})
    server.enqueue(Fault.status(400, "Unsupported parameter: 'reasoning.effort'"))
    type_and_send(qtbot, window, "question")
    wait_idle(qtbot, window)
    [row] = window.transcript.notice_rows("error")
    widget = row.widget
    assert row.details and "400" in row.details
    assert widget.details_button.isVisibleTo(widget)
    assert not widget.details_label.isVisibleTo(widget)

    qtbot.mouseClick(widget.details_button, Qt.MouseButton.LeftButton)
    assert row.details_shown
    assert widget.details_label.isVisibleTo(widget)
    assert widget.details_label.text() == row.details
    assert widget.details_label.textInteractionFlags() & (
        Qt.TextInteractionFlag.TextSelectableByMouse
    )
    qtbot.mouseClick(widget.details_button, Qt.MouseButton.LeftButton)
    assert not widget.details_label.isVisibleTo(widget)

    details = row.details
    session_id = window.session.id
    run_new = window.start_new_session()
    qtbot.waitUntil(run_new.done, timeout=5000)
    opened = window._schedule_open(session_id)
    qtbot.waitUntil(opened.done, timeout=5000)
    [replayed] = window.transcript.notice_rows("error")
    assert replayed.details == details
    assert replayed.widget.details_button.isVisibleTo(replayed.widget)


def test_a_notice_without_detail_has_no_toggle(qtbot: Any, make_window: Any, server: Any) -> None:
    window = make_window()
    server.enqueue(Reply(text=""))  # an empty reply: a warning, nothing technical behind it
    type_and_send(qtbot, window, "say nothing")
    wait_idle(qtbot, window)
    [row] = window.transcript.notice_rows("warning")
    assert not row.widget.details_button.isVisibleTo(row.widget)
