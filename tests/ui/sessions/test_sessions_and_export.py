"""The session list (resume, search, rename, delete to trash), restart restore, export,
slash-command handling in the composer, and the first-run demo banner."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from app.demo import Reply
from app.ui.window.demo_banner import DEMO_BANNER

from ..conftest import close_window, run
from ..helpers import type_and_send, wait_idle


def chat(qtbot: Any, window: Any, server: Any, text: str, reply: str) -> None:
    server.enqueue(Reply(text=reply))
    type_and_send(qtbot, window, text)
    wait_idle(qtbot, window)


def test_session_list_resumes_a_session_and_searches_content(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    chat(qtbot, window, server, "tell me about apples", "Apples are crunchy.")
    first_id = window.session.id
    run_new = window.start_new_session()
    qtbot.waitUntil(run_new.done, timeout=5000)
    assert window.transcript.rows == []
    chat(qtbot, window, server, "and bananas?", "Bananas are soft.")
    second_id = window.session.id

    panel = window.sessions
    assert panel.session_ids() == [second_id, first_id]  # newest first
    assert panel.titles() == ["and bananas?", "tell me about apples"]

    panel.search.setText("crunchy")  # only in the assistant's reply
    panel.refresh()
    assert panel.session_ids() == [first_id]
    panel.search.setText("")
    panel.refresh()

    item = panel.list.item(panel.session_ids().index(first_id))
    rect = panel.list.visualItemRect(item)
    # Opened once the window says so (the session is the core's a moment before its rows
    # are drawn: its long messages are looked for in a worker thread in between).
    with qtbot.waitSignal(window.session_opened, timeout=5000):
        qtbot.mouseClick(panel.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert window.session is not None and window.session.id == first_id
    texts = [(r.role, r.text) for r in window.transcript.message_rows()]
    assert texts == [("user", "tell me about apples"), ("assistant", "Apples are crunchy.")]
    # The resumed session goes on where it stopped.
    chat(qtbot, window, server, "more apples", "Sure.")
    body = server.requests_to("responses")[-1].body
    said = [json.dumps(i) for i in body["input"]]
    assert any("tell me about apples" in s for s in said)
    assert not any("bananas" in s for s in said)


def test_rename_and_delete_moves_the_file_to_the_trash(
    qtbot: Any, make_window: Any, server: Any, tmp_path: Path
) -> None:
    window = make_window()
    chat(qtbot, window, server, "a session to delete", "ok")
    session_id = window.session.id
    panel = window.sessions
    assert panel.rename_session(session_id, "Renamed one")
    assert panel.titles() == ["Renamed one"]
    assert window.windowTitle() == "Renamed one — Coco"  # the open session's title follows
    assert not panel.rename_session(session_id, "   ")
    assert "cannot be empty" in window.transcript.notice_rows("error")[-1].message

    panel.confirm_delete = lambda title: False  # the user says no
    assert panel.delete_session(session_id, "Renamed one") is None
    assert panel.session_ids() == [session_id]

    asked: list[str] = []
    panel.confirm_delete = lambda title: asked.append(title) or True
    assert run(qtbot, panel.delete_session(session_id, "Renamed one"))
    assert asked == ["Renamed one"]
    assert panel.session_ids() == []
    trash = tmp_path / "data" / "sessions" / "trash"
    assert [p.stem for p in trash.glob("*.jsonl")] == [session_id]
    # The open session was the deleted one: a new one takes its place.
    qtbot.waitUntil(lambda: window.session is not None and window.session.id != session_id,
                    timeout=5000)


def test_restart_restores_the_open_session_and_the_geometry(
    qtbot: Any, make_window: Any, server: Any, tmp_path: Path
) -> None:
    window = make_window()
    chat(qtbot, window, server, "remember this session", "I will.")
    session_id = window.session.id
    window.resize(700, 520)
    close_window(qtbot, window)

    from app.core.settings import SettingsStore

    saved, _ = SettingsStore(tmp_path / "config").load()
    assert saved.last_session_id == session_id
    assert (tmp_path / "config" / "window.ini").exists()

    again = make_window(session_id=saved.last_session_id, configure=False)
    assert again.session.id == session_id
    assert (again.size().width(), again.size().height()) == (700, 520)
    assert [r.text for r in again.transcript.message_rows("user")] == ["remember this session"]


def test_resumed_session_shows_the_marker_and_dimmed_rows(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    chat(qtbot, window, server, "before compaction", "answer")
    server.enqueue(Reply(text="the summary text"))
    window.compact("names")
    wait_idle(qtbot, window)
    chat(qtbot, window, server, "after compaction", "answer two")
    session_id = window.session.id
    run_new = window.start_new_session()
    qtbot.waitUntil(run_new.done, timeout=5000)
    opened = window._schedule_open(session_id)
    qtbot.waitUntil(opened.done, timeout=5000)

    marker = window.transcript.compaction_rows()[0]
    assert marker.state == "done"
    assert marker.summary == "the summary text"
    assert "focus: names" in marker.info_label.text()
    rows = window.transcript.rows
    index = rows.index(marker)
    # Above the marker the answer is out of the model's view; the user's message was kept
    # verbatim by the compaction, so the model still sees it.
    above = {getattr(r, "text", ""): r.in_context for r in rows[:index] if hasattr(r, "text")}
    assert above == {"before compaction": True, "answer": False}
    assert marker.in_context
    assert all(r.in_context for r in rows[index + 1:])


def test_export_writes_markdown_and_json(
    qtbot: Any, make_window: Any, server: Any, tmp_path: Path
) -> None:
    window = make_window()
    chat(qtbot, window, server, "export me", "Exported **text**.")
    target = tmp_path / "out.md"
    window.choose_export_path = lambda kind: (target, "markdown")
    type_and_send(qtbot, window, "/export")
    text = target.read_text(encoding="utf-8")
    assert "### You\n\nexport me" in text
    assert "Exported **text**." in text

    json_target = tmp_path / "out.json"
    window.choose_export_path = lambda kind: (json_target, "json")
    window.export_json_action.trigger()
    document = json.loads(json_target.read_text(encoding="utf-8"))
    assert document["session_id"] == window.session.id
    assert [e["kind"] for e in document["transcript"]] == ["item", "item"]


def test_markdown_export_shows_what_the_window_shows_and_never_the_key(
    qtbot: Any, make_window: Any, server: Any, tmp_path: Path
) -> None:
    from app.demo import ToolCall

    from ..conftest import TEST_KEY

    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    window = make_window(settings={"workspace": str(workspace)})
    server.enqueue(Reply(function_calls=[ToolCall("read_file", {"path": "notes.txt"})]))
    server.enqueue(Reply(text="It says alpha and beta.", reasoning="ENC-SECRET-BLOB"))
    type_and_send(qtbot, window, "read notes.txt")
    wait_idle(qtbot, window)
    server.enqueue(Reply(text="the summary text"))
    type_and_send(qtbot, window, "/compact names")
    wait_idle(qtbot, window)
    type_and_send(qtbot, window, "/undo-compact")
    qtbot.waitUntil(lambda: window.transcript.compaction_rows()[0].state == "undone",
                    timeout=5000)
    server.enqueue(Reply(text=""))  # an empty reply: a warning note
    type_and_send(qtbot, window, "say nothing")
    wait_idle(qtbot, window)

    target = tmp_path / "out.md"
    window.choose_export_path = lambda kind: (target, "markdown")
    window.export_md_action.trigger()
    text = target.read_text(encoding="utf-8")
    blocks = [
        "### You\n\nread notes.txt",
        "**Tool call** `read_file`",
        "**Tool output**",
        "1\talpha\n   2\tbeta",
        "### Assistant\n\nIt says alpha and beta.",
        "**Context compacted** (manual, local summary)",
        "Focus: names",
        "_This compaction was undone._",
        "> the summary text",
        "### You\n\nsay nothing",
        "> **Warning:**",
    ]
    at = 0
    for block in blocks:  # each one, in the order they happened
        at = text.find(block, at)
        assert at >= 0, block
    for hidden in ("environment_context", "ENC-SECRET-BLOB", TEST_KEY):
        assert hidden not in text

    json_target = tmp_path / "out.json"
    window.choose_export_path = lambda kind: (json_target, "json")
    window.export_json_action.trigger()
    assert TEST_KEY not in json_target.read_text(encoding="utf-8")


def test_unknown_command_gets_an_inline_hint_and_is_not_sent(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    type_and_send(qtbot, window, "/frobnicate now")
    assert window.composer.hint.isVisible()
    assert "Unknown command /frobnicate" in window.composer.hint.text()
    assert window.composer.text() == "/frobnicate now"
    assert server.requests_to("responses") == []
    assert window.transcript.message_rows() == []


def test_slash_opens_the_command_popup_with_help(qtbot: Any, make_window: Any) -> None:
    window = make_window()
    qtbot.keyClicks(window.composer.edit, "/")
    assert window.composer.popup_commands() == ["compact", "new", "undo-compact", "model",
                                                "export", "fork"]
    assert "/compact [focus]" in window.composer.popup.item(0).text()
    qtbot.keyClicks(window.composer.edit, "mo")
    assert window.composer.popup_commands() == ["model"]
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Tab)
    assert window.composer.text() == "/model "
    assert window.composer.popup_commands() == []


def test_model_command_switches_the_session_model(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    type_and_send(qtbot, window, "/model gpt-test-2")
    qtbot.waitUntil(lambda: window.session.config.model == "gpt-test-2", timeout=5000)
    assert window.context.settings.model == "gpt-test-2"
    qtbot.waitUntil(lambda: any(
        # A new empty conversation does not "continue" (issue 39): it will use the model.
        "This conversation will use gpt-test-2" in row.message
        for row in window.transcript.notice_rows("background")
    ), timeout=5000)
    server.enqueue(Reply(text="hi"))
    type_and_send(qtbot, window, "hello")
    wait_idle(qtbot, window)
    assert server.requests_to("responses")[-1].body["model"] == "gpt-test-2"


def test_first_run_uses_the_demo_model_with_a_banner(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window(configure=False)
    assert window.context.using_demo
    assert window.banner.isVisible()
    assert window.banner.label.text() == DEMO_BANNER
    assert window.session.config.model == "coco-demo"
    qtbot.mouseClick(window.banner.button, Qt.MouseButton.LeftButton)
    assert window._settings_dialog is not None and window._settings_dialog.isVisible()
    window._settings_dialog.reject()


def test_every_toolbar_control_has_a_name_and_a_tooltip(qtbot: Any, make_window: Any) -> None:
    window = make_window()
    from PySide6.QtWidgets import QAbstractButton, QLineEdit, QPlainTextEdit

    controls = [w for w in window.findChildren(QAbstractButton) if w.isVisibleTo(window)]
    controls += window.findChildren(QLineEdit) + window.findChildren(QPlainTextEdit)
    missing = [
        (type(w).__name__, w.text() if hasattr(w, "text") else "")
        for w in controls
        if w.isVisibleTo(window) and (not w.accessibleName() or not w.toolTip())
    ]
    assert missing == []
    shortcuts = {a.objectName(): a.shortcut().toString() for a in window.actions()}
    assert shortcuts["new"] == "Ctrl+N"
    assert shortcuts["compact"] == "Ctrl+K"
    assert shortcuts["settings"] == "Ctrl+,"
    assert shortcuts["focus_composer"] == "Ctrl+L"
    assert shortcuts["stop"] == "Esc"
