"""The waits the transcript counts on: a retry's countdown and a stalled stream's count.

A stream error puts one line per turn on the transcript that updates in place ("Reconnecting…
2/5 · why · how long"); when the core waits before retrying, that line counts the wait down,
and a stream that sends nothing for a while gets a line counting how long. Both move on each
second from the core's figures and ``clock`` (``tick_waits``), and end when the turn moves on.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QWidget

from ...controller.format import retry_detail, retry_text
from ...controller.waits import countdown_text, stall_text, waited_text
from ..row_models import NoticeRow
from .streaming import StreamingTranscript

if TYPE_CHECKING:
    from app.core import protocol as p


TICK_MS = 1000  # a wait's countdown (or a stall's count) moves on each second


# Plain classes, not dataclasses: this module is loaded before the window's first paint, where
# creating a dataclass costs compiling its methods.
class _RetryWait:
    """A retry wait being counted down on the reconnect row."""

    def __init__(
        self, row: NoticeRow, attempt_text: str, reason: str, wait: float,
        requested: float | None, deadline: float,
    ) -> None:
        self.row = row
        self.attempt_text = attempt_text
        self.reason = reason
        self.wait = wait
        self.requested = requested
        self.deadline = deadline


class _Stall:
    """A stall being counted on its row: ``started`` is when the server last sent data."""

    def __init__(self, row: NoticeRow, started: float, timeout: float | None) -> None:
        self.row = row
        self.started = started
        self.timeout = timeout


class WaitingTranscript(StreamingTranscript):
    """The reconnect line of a turn, a retry's countdown on it and a stall's count."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._reconnect: NoticeRow | None = None

        # Waits count on locally from the core's figures, once a second (``tick_waits``).
        self.clock: Callable[[], float] = time.monotonic
        self._retry_wait: _RetryWait | None = None
        self._stall: _Stall | None = None
        self._wait_timer = QTimer(self)
        self._wait_timer.setInterval(TICK_MS)
        self._wait_timer.timeout.connect(self.tick_waits)

    def tick_waits(self) -> None:
        """Move the shown waits on to ``clock()``: the retry countdown, the stall count. The
        timer calls it each second while a wait is shown."""
        now = self.clock()
        retry = self._retry_wait
        if retry is not None:
            retry.row.set_message(
                countdown_text(
                    retry.attempt_text, retry.reason, retry.deadline - now, retry.wait,
                    retry.requested,
                )
            )
        stall = self._stall
        if stall is not None:
            stall.row.set_message(stall_text(now - stall.started, stall.timeout))
        if retry is None and stall is None:
            self._wait_timer.stop()
        elif not self._wait_timer.isActive():
            self._wait_timer.start()

    def waiting_text(self) -> str:
        """What the wait rows say now (empty when nothing is awaited), for tests and tools."""
        rows = [wait.row for wait in (self._retry_wait, self._stall) if wait is not None]
        return "\n".join(row.message for row in rows)

    def _end_retry_wait(self, stopped: bool = False) -> None:
        retry = self._retry_wait
        if retry is None:
            return
        self._retry_wait = None
        retry.row.set_message(
            waited_text(retry.attempt_text, retry.reason, retry.wait, retry.requested, stopped)
        )
        self.tick_waits()

    def _end_stall(self) -> None:
        """The stall is over: its row goes (the reply, a retry or an error says the rest)."""
        stall = self._stall
        if stall is None:
            return
        self._stall = None
        if stall.row in self.rows:
            self.remove_rows([stall.row])
        self.tick_waits()

    def _on_stream_error(self, event: p.StreamError) -> None:
        self._hold_partial()
        self._end_stall()
        self._end_retry_wait()
        # One line per turn that updates in place: "Reconnecting... 2/5 · why · how long".
        attempt_text = retry_text(event.message, event.attempt, event.max_attempts)
        text = retry_detail(
            attempt_text, event.reason, event.wait_seconds, event.requested_seconds
        )
        if self._reconnect is not None and self._reconnect in self.rows:
            self._reconnect.set_message(text)
        else:
            self._reconnect = self.add_notice("stream_error", text)
        wait = event.wait_seconds
        if wait is not None and wait >= 1:
            # A wait worth a countdown: "Retrying in 42 s — why", once a second.
            self._retry_wait = _RetryWait(
                self._reconnect, attempt_text, event.reason, wait, event.requested_seconds,
                self.clock() + wait,
            )
            self.tick_waits()

    def _on_stream_waiting(self, event: p.StreamWaiting) -> None:
        """The server has sent nothing for a while (or sends again): count the wait."""
        if not event.stalled:
            self._end_stall()
            return
        started = self.clock() - event.since_seconds
        if self._stall is not None and self._stall.row in self.rows:
            self._stall.started, self._stall.timeout = started, event.timeout_seconds
        else:
            row = self.add_notice("stream_error", "")
            self._stall = _Stall(row, started, event.timeout_seconds)
        self.tick_waits()
