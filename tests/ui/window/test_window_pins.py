"""Pins and the edited summary in the real window, driving the real core against the loopback
server: pin from a row (the row shows it, the Model view marks it, a compaction keeps it in
view), refusal in words, edit the summary from the marker ("edited", Undo edit), and both as
they were after the session is reopened."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt

from app.core.compaction.prompts import summary_prefix
from app.demo import Reply, ToolCall

from ..helpers import type_and_send, wait_idle

PREFIX = summary_prefix()


def chat(qtbot: Any, window: Any, server: Any, text: str, reply: str = "ok") -> None:
    server.enqueue(Reply(text=reply))
    type_and_send(qtbot, window, text)
    wait_idle(qtbot, window)


def compact(qtbot: Any, window: Any, server: Any, summary: str) -> Any:
    server.enqueue(Reply(text=summary))
    qtbot.mouseClick(window.compact_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, window)
    return window.transcript.compaction_rows()[-1]


def reopen(qtbot: Any, window: Any) -> None:
    session_id = window.session.id
    started = window.start_new_session()
    qtbot.waitUntil(started.done, timeout=5000)
    opened = window._schedule_open(session_id)
    qtbot.waitUntil(opened.done, timeout=5000)


def test_a_reply_pinned_from_its_row_stays_in_view_through_a_compaction(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    chat(qtbot, window, server, "which port?", "Use port 8443 for the admin API.")
    reply = window.transcript.message_rows("assistant")[0]
    assert reply.pin_button.isVisibleTo(reply.widget) and not reply.pinned

    qtbot.mouseClick(reply.pin_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: reply.pinned, timeout=5000)
    assert reply.pin_tag.isVisibleTo(reply.widget)
    assert "verbatim" in reply.pin_tag.toolTip()
    assert reply.pin_button.accessibleName().startswith("Unpin")
    window.model_view_action.setChecked(True)
    kinds = [row["kind"] for row in window.model_view.rows]
    assert "message · pinned" in kinds

    marker = compact(qtbot, window, server, "SUMMARY-1")
    # The marker says which message the pin it carried is, as the core names it.
    assert "1 pin carried over (pinned: the answer “Use port 8443 for the admin API.”)" in (
        marker.info_label.text()
    )
    # The pinned reply, carried before the summary, is not dimmed like the rest above the marker.
    assert reply.in_context and not reply.context_tag.isVisibleTo(reply.widget)
    chat(qtbot, window, server, "and now?")
    sent = server.requests_to("responses")[-1].body["input"]
    texts = [part["text"] for item in sent if item.get("type") == "message"
             for part in item["content"]]
    assert texts.index("Use port 8443 for the admin API.") == texts.index(
        f"{PREFIX}\nSUMMARY-1") - 1
    assert marker.state == "done"

    reopen(qtbot, window)
    again = window.transcript.message_rows("assistant")[0]
    assert again.pinned and again.in_context
    assert again.pin_tag.isVisibleTo(again.widget)

    qtbot.mouseClick(again.pin_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not again.pinned, timeout=5000)
    assert not again.pin_tag.isVisibleTo(again.widget)


def test_a_pin_too_large_for_the_window_is_refused_in_words(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window(settings={"context_window": 4_096})
    long_reply = " ".join(f"word{i}" for i in range(1500))
    chat(qtbot, window, server, "tell me everything", long_reply)
    reply = window.transcript.message_rows("assistant")[0]
    qtbot.mouseClick(reply.pin_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(window.transcript.notice_rows("error")), timeout=5000)
    message = window.transcript.notice_rows("error")[-1].message
    assert message.startswith("Not pinned: this message is about ")
    assert "tokens of room are left for pins" in message
    assert not reply.pinned


def test_the_summary_edited_from_the_marker_shows_edited_and_can_be_undone(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    chat(qtbot, window, server, "set up the service")
    marker = compact(qtbot, window, server, "The user set up a service.")
    assert marker.edit_button.isVisibleTo(marker.widget)
    assert not marker.edited_label.isVisibleTo(marker.widget)

    qtbot.mouseClick(marker.edit_button, Qt.MouseButton.LeftButton)
    dialog = marker.widget.editor
    assert dialog is not None and dialog.isVisible()
    assert dialog.text_edit.toPlainText() == "The user set up a service."
    dialog.text_edit.setPlainText("The user set up svc-coco on port 8443.")
    dialog.accept()
    qtbot.waitUntil(lambda: marker.edited, timeout=5000)
    assert marker.edited_label.isVisibleTo(marker.widget)
    assert marker.summary == "The user set up svc-coco on port 8443."
    assert marker.undo_edit_button.isVisibleTo(marker.widget)
    summaries = [e.text for e in window.session.context_view() if e.is_summary]
    assert summaries == [f"{PREFIX}\nThe user set up svc-coco on port 8443."]

    reopen(qtbot, window)
    marker = window.transcript.compaction_rows()[-1]
    assert marker.edited and marker.edited_label.isVisibleTo(marker.widget)
    assert marker.summary == "The user set up svc-coco on port 8443."

    qtbot.mouseClick(marker.undo_edit_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not marker.edited, timeout=5000)
    assert marker.summary == "The user set up a service."
    assert not marker.edited_label.isVisibleTo(marker.widget)
    assert not marker.undo_edit_button.isVisibleTo(marker.widget)


def test_an_older_marker_offers_no_edit_once_a_later_compaction_replaced_it(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    chat(qtbot, window, server, "q1")
    first = compact(qtbot, window, server, "S1")
    chat(qtbot, window, server, "q2")
    second = compact(qtbot, window, server, "S2")
    assert not first.edit_button.isVisibleTo(first.widget)
    assert second.edit_button.isVisibleTo(second.widget)


def test_a_tool_output_is_pinned_from_the_rows_context_menu(
    qtbot: Any, make_window: Any, server: Any, tmp_path: Any
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "config.txt").write_text("db_host = 10.0.0.7\n")
    window = make_window(settings={"workspace": str(workspace)})
    server.enqueue(Reply(function_calls=[ToolCall("read_file", {"path": "config.txt"}, "c1")]))
    chat(qtbot, window, server, "read config.txt", "Read it.")
    tool = window.transcript.tool_rows()[0]
    menu = tool.widget.pin_menu()
    assert menu is not None
    [action] = menu.actions()
    assert action.text().startswith("Pin")
    action.trigger()
    qtbot.waitUntil(lambda: tool.pinned, timeout=5000)
    assert tool.pin_tag.isVisibleTo(tool.widget)
    [unpin] = tool.widget.pin_menu().actions()
    assert unpin.text() == "Unpin"


def test_a_reply_pinned_after_it_left_the_view_comes_back_at_the_next_compaction(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    chat(qtbot, window, server, "q1", "the answer worth keeping")
    compact(qtbot, window, server, "S1")
    reply = window.transcript.message_rows("assistant")[0]
    assert not reply.in_context
    qtbot.mouseClick(reply.pin_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: reply.pinned, timeout=5000)
    assert "from the next compaction on" in reply.pin_tag.toolTip()
    assert not reply.in_context  # the model does not see it yet: the row says so
    chat(qtbot, window, server, "q2")
    marker = compact(qtbot, window, server, "S2")
    assert reply.in_context and not reply.context_tag.isVisibleTo(reply.widget)
    view = [e.text for e in window.session.context_view()]
    assert view.index("the answer worth keeping") == view.index(f"{PREFIX}\nS2") - 1
    # Undo of that compaction: the model no longer sees it, and the row says so again.
    qtbot.mouseClick(marker.undo_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: marker.state == "undone", timeout=5000)
    assert not reply.in_context and reply.pinned
