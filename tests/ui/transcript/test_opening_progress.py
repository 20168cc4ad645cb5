"""Opening a huge session says how far it has got, and the core reads, counts and prepares it
off the window's thread. The open is held at a known point (the core's first counting step
waits for the test), the window's clock is a fake one past the half second."""

from __future__ import annotations

import itertools
import threading
from typing import Any

import pytest

from app.core import OpenProgress
from app.core.rollout import reader as rollout
from app.core.tokens import tiktoken_counts as tokens
from app.demo import Reply
from tests.conftest import needs_tiktoken

from ..helpers import saved_session_ending_with, type_and_send, wait_idle

HUGE = "log line: request served in 12 ms, cache hit, 200 OK\n" * 6000  # 318 000 characters


@pytest.fixture
def small_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rollout, "READ_STEP", 4096)
    monkeypatch.setattr(tokens, "COUNT_STEP_CHARS", 50_000)


@needs_tiktoken  # long texts are counted ahead only with the real tokenizer
def test_opening_a_huge_session_shows_progress_and_ends_with_it_shown(
    qtbot: Any, make_window: Any, server: Any, small_steps: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    window = make_window()
    # Long texts are counted ahead only with the real tokenizer (estimates need nothing); its
    # files are loaded once for the process.
    assert window.session._counter.wait_ready(60)
    session_id, path = saved_session_ending_with(qtbot, window, server, HUGE)

    reports: list[tuple[str, int, int]] = []
    release = threading.Event()
    real_report = OpenProgress.report

    def report(self: OpenProgress, stage: str, done: int, total: int) -> None:
        reports.append((stage, done, total))
        real_report(self, stage, done, total)
        if stage == "counting" and threading.current_thread() is not threading.main_thread():
            release.wait(30)  # hold the open here until the window has shown it

    monkeypatch.setattr(OpenProgress, "report", report)
    ticks = itertools.count()
    window.transcript.clock = lambda: float(next(ticks))  # a second passes at every look
    opened = window._schedule_open(session_id)
    qtbot.waitUntil(lambda: window.transcript.opening_text() != "", timeout=5000)
    assert window.transcript.opening_text() == (
        "Counting the tokens of long messages… 50 KB of 318 KB"
    )
    assert window.transcript.empty_label.text() == window.transcript.opening_text()
    release.set()
    qtbot.waitUntil(opened.done, timeout=10_000)

    # The file was read in steps, its long message counted in steps, then prepared.
    size = path.stat().st_size
    reading = [done for stage, done, _total in reports if stage == "reading"]
    assert reading[0] == 0 and reading[-1] == size and len(reading) > 2
    counting = [done for stage, done, _total in reports if stage == "counting"]
    assert counting == sorted(counting) and counting[-1] == len(HUGE) and len(counting) > 3
    assert ("preparing", len(HUGE), len(HUGE)) in reports
    # The session is shown; the progress is gone.
    assert window.transcript.opening_text() == ""
    texts = [row.text for row in window.transcript.message_rows("assistant")]
    assert texts == ["short answer", HUGE]
    assert window.transcript.message_rows("assistant")[1].segments  # shown in parts


def test_a_quick_open_shows_no_progress(qtbot: Any, make_window: Any, server: Any) -> None:
    window = make_window()
    server.enqueue(Reply(text="short answer"))
    type_and_send(qtbot, window, "hello")
    wait_idle(qtbot, window)
    session_id = window.session.id
    qtbot.waitUntil(window.start_new_session().done, timeout=5000)
    window.transcript.clock = lambda: 0.0  # no time passes
    seen: list[str] = []
    window.transcript._opening_timer.timeout.connect(
        lambda: seen.append(window.transcript.opening_text())
    )
    qtbot.waitUntil(window._schedule_open(session_id).done, timeout=5000)
    assert set(seen) <= {""}
    assert [row.text for row in window.transcript.message_rows("assistant")] == ["short answer"]
