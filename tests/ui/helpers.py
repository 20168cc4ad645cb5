"""Small steps the window tests share: type and send, wait for the turn to end."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from app.core.items import assistant_message, is_message, message_text
from app.core.rollout.store import RolloutWriter
from app.demo import Reply


def type_and_send(qtbot: Any, window: Any, text: str) -> None:
    """Type ``text`` into the composer and press Enter, as a user does."""
    edit = window.composer.edit
    edit.setFocus()
    qtbot.keyClicks(edit, text)
    qtbot.keyClick(edit, Qt.Key.Key_Return)


def wait_idle(qtbot: Any, window: Any, timeout: int = 10_000) -> None:
    """Wait until no turn runs (the reply or compaction has finished): the window idle, and
    the core's slot free too. A compaction a reply leads to starts after the turn's task has
    ended, when the window may already show the session idle; the core holds its slot until it
    has decided on that compaction."""
    qtbot.waitUntil(
        lambda: not window.busy and (window.session is None or not window.session.busy),
        timeout=timeout,
    )


def saved_session_ending_with(
    qtbot: Any, window: Any, server: Any, text: str
) -> tuple[str, Path]:
    """A saved session (one short turn) whose rollout ends with an assistant message ``text``,
    written after the window left it for a new session; the saved session's id and rollout."""
    server.enqueue(Reply(text="short answer"))
    type_and_send(qtbot, window, "paste the log")
    wait_idle(qtbot, window)
    session_id: str = window.session.id
    path = window.session.rollout_path
    qtbot.waitUntil(window.start_new_session().done, timeout=5000)
    with RolloutWriter(path) as writer:
        writer.append("response_item", {"item": assistant_message(text, "msg_huge"), "turn_id": "t2"})
    return session_id, path


def last_user_text(body: dict[str, Any]) -> str:
    """Text of the last user message in a /responses request body."""
    for item in reversed(body.get("input") or []):
        if is_message(item, "user"):
            return message_text(item)
    return ""


def assistant_texts(window: Any) -> list[str]:
    return [row.text for row in window.transcript.message_rows("assistant")]


class RemeasureLog:
    """Which event the window was drawing at each re-measure of a transcript row.

    ``events`` lists the events drawn so far (each as ``label(event)``; connected after the
    window's own handler, so an event is listed once it has been drawn), ``during`` the index
    in ``events`` of the event being drawn at each re-measure."""

    def __init__(self, window: Any, label: Any = lambda event: event.type) -> None:
        self.events: list[str] = []
        self.during: list[int] = []
        view = window.transcript
        measure = view.row_changed

        def counted(row: Any) -> None:  # every re-measure of a row goes through here
            self.during.append(len(self.events))
            measure(row)

        view.row_changed = counted
        window.controller.event_received.connect(lambda event: self.events.append(label(event)))

    def while_drawing(self, index: int) -> int:
        """How many re-measures the ``index``-th event drawn made."""
        return self.during.count(index)
