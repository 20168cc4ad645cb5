"""A failed turn in the window (issue 16, item 4): the error in words, a Retry button on it that
runs the turn again without adding the message twice, and a reopened session that shows the
same; an unreachable server said in words, the raw error kept out of the line."""

from __future__ import annotations

import socket
from typing import Any

from PySide6.QtCore import Qt

from app.demo import Fault, Reply

from ..helpers import assistant_texts, type_and_send, wait_idle


def user_texts(window: Any) -> list[str]:
    return [row.text for row in window.transcript.message_rows("user")]


def retry_shown(window: Any) -> list[bool]:
    """Whether each error line shows its Retry button (as the user sees it)."""
    return [
        row.widget.retry_button.isVisibleTo(row.widget)
        for row in window.transcript.notice_rows("error")
    ]


def test_retry_runs_the_failed_turn_again_once(
    qtbot: Any, make_window: Any, server: Any, tmp_path: Any
) -> None:
    window = make_window(overrides={"max_retries": 0})
    server.enqueue(Fault.status(500, "upstream is down"))
    type_and_send(qtbot, window, "the question")
    wait_idle(qtbot, window)
    assert retry_shown(window) == [True]
    error = window.transcript.notice_rows("error")[0]

    server.enqueue(Reply(text="the answer"))
    qtbot.mouseClick(error.widget.retry_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: assistant_texts(window) == ["the answer"], timeout=10_000)
    wait_idle(qtbot, window)
    assert user_texts(window) == ["the question"]  # not shown a second time
    assert retry_shown(window) == [False]  # the error stays, its Retry is gone
    assert [row.text for row in window.transcript.message_rows()] == [
        "the question", "the answer",
    ]
    bodies = [r.body for r in server.requests_to("responses")]
    assert len(bodies) == 2 and bodies[0]["input"] == bodies[1]["input"]

    # Reopened, the session shows the message once, the error, then the answer.
    live = [(type(row).__name__, getattr(row, "text", getattr(row, "message", "")))
            for row in window.transcript.rows]
    session_id = window.session.id
    qtbot.waitUntil(window.start_new_session().done, timeout=5000)
    qtbot.waitUntil(window._schedule_open(session_id).done, timeout=5000)
    reopened = [(type(row).__name__, getattr(row, "text", getattr(row, "message", "")))
                for row in window.transcript.rows]
    assert reopened == live
    assert retry_shown(window) == [False]


def test_a_new_message_takes_retry_away(qtbot: Any, make_window: Any, server: Any) -> None:
    window = make_window(overrides={"max_retries": 0})
    server.enqueue(Fault.status(500, "upstream is down"))
    type_and_send(qtbot, window, "first try")
    wait_idle(qtbot, window)
    assert retry_shown(window) == [True]
    server.enqueue(Reply(text="answer"))
    type_and_send(qtbot, window, "something else")
    wait_idle(qtbot, window)
    assert retry_shown(window) == [False]
    assert assistant_texts(window) == ["answer"]


def test_an_unreachable_server_is_said_in_words_with_retry(
    qtbot: Any, make_window: Any
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    window = make_window(overrides={"max_retries": 0, "base_url": url})
    type_and_send(qtbot, window, "hello?")
    wait_idle(qtbot, window)
    [error] = window.transcript.notice_rows("error")
    assert error.message == (
        f"Coco could not reach the server at {url}: nothing is listening there (connection "
        "refused). Check that the server is running and that the address in Settings is right."
    )
    assert "Errno" not in error.widget.label.text()
    assert retry_shown(window) == [True]
    assert user_texts(window) == ["hello?"]
    assert window.composer.text() == ""  # it was sent (and is kept): not given back


def test_a_refused_retry_is_said_and_leaves_the_composer_free(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    server.enqueue(Reply(text="fine"))
    type_and_send(qtbot, window, "hello")
    wait_idle(qtbot, window)
    assert window.controller.retry_turn()  # (no Retry is shown: asked for anyway)
    qtbot.waitUntil(lambda: bool(window.transcript.notice_rows("error")), timeout=5000)
    assert window.transcript.notice_rows("error")[0].message == (
        "There is no failed message to send again."
    )
    qtbot.waitUntil(lambda: not window.busy, timeout=5000)  # no turn is awaited any more
    assert not window.composer.busy
    assert len(server.requests_to("responses")) == 1
