"""Retries as the window shows them, driven by the real core against the scripted server: the
status bar during a retried compaction, and a reply stream cut and sent again."""

from __future__ import annotations

from typing import Any

import pytest

from app.demo import Fault, Reply

from ..helpers import assistant_texts, type_and_send, wait_idle


def record_after_each_event(window: Any, read: Any) -> list[Any]:
    """``read()`` after the window has handled each core event, in order."""
    seen: list[Any] = []
    window.bridge.event_received.connect(lambda event: seen.append((event.type, read())))
    return seen


def test_a_retried_compaction_shows_the_attempt_count_once(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window(overrides={"max_retries": 5})
    server.enqueue(Reply(text="first answer"))
    type_and_send(qtbot, window, "first question")
    wait_idle(qtbot, window)
    statuses = record_after_each_event(window, window.indicator.text)
    server.enqueue(Fault.status(500, "upstream hiccup"))
    server.enqueue(Reply(text="the summary"))

    window.compact()
    wait_idle(qtbot, window)

    retrying = [text for kind, text in statuses if kind == "stream_error"]
    assert retrying == ["Reconnecting... 1/5"]
    assert window.transcript.compaction_rows()[0].state == "done"
    notices = [row.message for row in window.transcript.notice_rows("stream_error")]
    # The transcript's line also says why, in the core's words.
    assert notices == ["Reconnecting... 1/5 · the server had an error (HTTP 500)"]


def test_a_long_server_wait_is_capped_and_said(qtbot: Any, make_window: Any, server: Any) -> None:
    window = make_window(overrides={"max_retries": 1})
    server.enqueue(Fault.status(429, "slow down", retry_after=1.5))
    server.enqueue(Reply(text="answer"))
    type_and_send(qtbot, window, "question")
    wait_idle(qtbot, window)
    notices = [row.message for row in window.transcript.notice_rows("stream_error")]
    assert notices == [
        "Reconnecting... 1/1 · the server is rate limiting requests · retried after 2 s"
    ]


@pytest.fixture
def same_message_id(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the scripted server reuse one id for every message item, as some servers do."""
    from app.demo.render import responses as render

    original = render.new_id
    monkeypatch.setattr(
        render, "new_id",
        lambda prefix, sep="_": "msg_same" if prefix == "msg" else original(prefix, sep),
    )


def _retry_a_cut_reply(qtbot: Any, window: Any, server: Any) -> list[Any]:
    seen = record_after_each_event(
        window,
        lambda: [(row.text, row.streaming) for row in window.transcript.message_rows("assistant")],
    )
    server.enqueue(Fault.cut(after_chunks=2, text="Hello wor"))
    server.enqueue(Reply(text="Hello world, in full."))
    type_and_send(qtbot, window, "say hello")
    wait_idle(qtbot, window)
    return seen


def _check_replaced(window: Any, seen: list[Any]) -> None:
    kinds = [kind for kind, _rows in seen]
    assert "stream_error" in kinds
    # The partial row was shown while it streamed; it stayed, no longer streaming, while the
    # core reconnected (what was shown stays: issue 39), and went when the retry's answer began.
    before = [rows for kind, rows in seen[: kinds.index("stream_error")]]
    assert any(rows == [("Hello wor", True)] for rows in before)
    assert seen[kinds.index("stream_error")][1] == [("Hello wor", False)]
    # Never the partial text followed by the retried one.
    assert not any(text.startswith("Hello worHello") for _k, rows in seen for text, _s in rows)
    assert assistant_texts(window) == ["Hello world, in full."]
    row = window.transcript.message_rows("assistant")[0]
    assert not row.streaming and not row.interrupted
    assert not row.widget.status_label.isVisibleTo(row.widget)  # no "writing…" left behind
    assert window.session.transcript()[-1]["item"]["content"][0]["text"] == (
        "Hello world, in full."
    )


def test_a_retried_stream_replaces_its_partial_row(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    seen = _retry_a_cut_reply(qtbot, window, server)
    _check_replaced(window, seen)


def test_a_retry_reusing_the_item_id_does_not_double_the_text(
    qtbot: Any, make_window: Any, server: Any, same_message_id: None
) -> None:
    window = make_window()
    seen = _retry_a_cut_reply(qtbot, window, server)
    _check_replaced(window, seen)
    assert window.transcript.message_rows("assistant")[0].item_id == "msg_same"


def test_a_reply_cut_off_when_the_retries_give_up_stays_shown_until_retry_answers(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window(overrides={"max_retries": 2})
    server.enqueue(Fault.cut(after_chunks=3, text="Three lines\nhad streamed\nwhen the"))
    server.enqueue(Fault.status(503))
    server.enqueue(Fault.status(503))
    type_and_send(qtbot, window, "explain")
    wait_idle(qtbot, window)
    (row,) = window.transcript.message_rows("assistant")
    assert row.text == "Three lines\nhad streamed\nwhen the"
    assert row.cut_off and not row.in_context and not row.streaming
    window.transcript.scroll_to_row(row)
    qtbot.waitUntil(lambda: row.widget is not None)
    label = row.widget.status_label
    assert label.isVisibleTo(row.widget) and "cut off" in label.text()
    # Retry sends the message again: its answer takes the cut-off reply's place.
    server.enqueue(Reply(text="The whole answer."))
    assert window.controller.retry_turn()
    wait_idle(qtbot, window)
    assert assistant_texts(window) == ["The whole answer."]
    assert not window.transcript.message_rows("assistant")[0].cut_off
