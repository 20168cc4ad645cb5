"""Desktop notifications: a tray message when a long reply or a compaction finishes while the
window is in the background.

Fed with the session's events (``handle_event``). Says nothing when the window is active, when
``AppSettings.notifications`` is off, or when the platform has no system tray (then it is a
no-op). Notifications name what finished and how long it took, never message contents.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QWidget

if TYPE_CHECKING:
    from PySide6.QtWidgets import QSystemTrayIcon

    from app.core import protocol as p

log = logging.getLogger(__name__)

LONG_REPLY_SECONDS = 15.0
MESSAGE_TIMEOUT_MS = 8000


class NotificationSink(Protocol):
    """Where notifications go (the system tray; tests give a recorder)."""

    def available(self) -> bool: ...

    def show(self, title: str, message: str) -> None: ...


class TraySink(QObject):
    """Shows messages through a ``QSystemTrayIcon``, created on the first message."""

    clicked = Signal()

    def __init__(self, icon: QIcon, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._icon = icon
        self._tray: QSystemTrayIcon | None = None

    def available(self) -> bool:
        from PySide6.QtWidgets import QSystemTrayIcon  # not before the window's first paint

        return QSystemTrayIcon.isSystemTrayAvailable() and QSystemTrayIcon.supportsMessages()

    def show(self, title: str, message: str) -> None:
        if self._tray is None:
            from PySide6.QtWidgets import QSystemTrayIcon

            self._tray = QSystemTrayIcon(self._icon, self)
            self._tray.setToolTip("Coco")
            self._tray.messageClicked.connect(self.clicked)
            self._tray.activated.connect(lambda _reason: self.clicked.emit())
        # A tray message needs a visible tray icon; it stays while Coco runs.
        self._tray.show()
        self._tray.showMessage(title, message, self._icon, MESSAGE_TIMEOUT_MS)

    def close(self) -> None:
        if self._tray is not None:
            self._tray.hide()


@dataclass
class _Turn:
    kind: str
    started: float
    compaction: tuple[str, int, int] | None = None  # (trigger, tokens before, tokens after)


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    return f"{seconds} s" if seconds < 90 else f"{seconds // 60} min {seconds % 60:02d} s"


class Notifications(QObject):
    """Decides when a finished turn deserves a notification, and sends it.

    ``enabled``: read at each decision (the setting can change while Coco runs).
    ``is_active``: whether the user is looking at the window (default: the window is active).
    """

    activated = Signal()  # the user clicked a notification

    def __init__(
        self,
        window: QWidget,
        enabled: Callable[[], bool],
        *,
        sink: NotificationSink | None = None,
        long_reply_seconds: float = LONG_REPLY_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        is_active: Callable[[], bool] | None = None,
    ) -> None:
        super().__init__(window)
        self._window = window
        self._enabled = enabled
        self._long = long_reply_seconds
        self._clock = clock
        self._is_active = is_active or (lambda: window.isActiveWindow())
        if sink is None:
            tray = TraySink(window.windowIcon(), self)
            tray.clicked.connect(self.activated)
            sink = tray
        self._sink = sink
        self._turns: dict[str, _Turn] = {}

    def handle_event(self, event: p.Event) -> None:
        """Follow one session event (all events may be passed; most are ignored)."""
        if event.type == "turn_started":
            self._turns[event.turn_id] = _Turn(event.kind, self._clock())
        elif event.type == "context_compacted":
            turn = self._turns.get(event.turn_id)
            if turn is not None:
                turn.compaction = (event.trigger, event.tokens_before, event.tokens_after)
        elif event.type == "turn_complete":
            turn = self._turns.pop(event.turn_id, None)
            if turn is not None:
                self._turn_finished(turn, event.status, self._clock() - turn.started)

    def reset(self) -> None:
        """Forget running turns (another session was opened)."""
        self._turns.clear()

    def _turn_finished(self, turn: _Turn, status: str, seconds: float) -> None:
        if status == "aborted":
            return  # the user stopped it, so they are watching
        note = self._message_for(turn, status, seconds)
        if note is not None:
            self.notify(*note)

    def _message_for(self, turn: _Turn, status: str, seconds: float) -> tuple[str, str] | None:
        compacted = turn.compaction
        figures = f"{compacted[1]:,} → {compacted[2]:,} tokens" if compacted else ""
        if turn.kind == "compact":
            if status == "completed" and compacted:
                return "Context compacted", f"{figures}, in {_duration(seconds)}."
            return ("Compaction failed", "See Coco's window for the reason.") if (
                status == "failed") else None
        if status == "failed":
            if seconds < self._long:
                return None
            return "Reply failed", "See Coco's window for the reason."
        if compacted:
            return "Reply ready", (
                f"The context was compacted automatically ({figures}); "
                f"the reply took {_duration(seconds)}."
            )
        if seconds >= self._long:
            return "Reply ready", f"The reply took {_duration(seconds)}."
        return None

    def notify(self, title: str, message: str) -> bool:
        """Show a notification unless the window is active, notifications are off or there
        is no tray; True when one was shown."""
        if not self._enabled() or self._is_active():
            return False
        try:
            if not self._sink.available():
                return False
            self._sink.show(f"Coco: {title}", message)
        except RuntimeError as exc:  # a tray torn down with the window
            log.info("Could not show a notification: %s", exc)
            return False
        return True
