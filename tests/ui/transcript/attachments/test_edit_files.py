"""Editing a sent message with attachments in the window: the edit box shows them as chips;
the edited message goes with all of them, or without those whose ✕ was clicked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from app.demo import Reply
from tests.attachment_files import write_png

from ...helpers import wait_idle
from .test_strip import _send_with_files


def _drawn(window: Any, count: int) -> bool:
    redraw = window.controller.redraw
    return redraw is not None and redraw.drawn >= count and not redraw.holding


def _edit(qtbot: Any, window: Any, text: str) -> Any:
    row = window.transcript.message_rows("user")[-1]
    window.transcript.scroll_to_row(row)
    qtbot.waitUntil(lambda: row._widget is not None)
    qtbot.mouseClick(row.widget.branch.action, Qt.MouseButton.LeftButton)
    editor = row.widget.branch.editor
    editor.box.selectAll()
    qtbot.keyClicks(editor.box, text)
    return editor


def _sent_types(server: Any) -> list[str]:
    user = [i for i in server.requests_to("responses")[-1].body["input"] if i.get("role") == "user"]
    return [part["type"] for part in user[-1]["content"]]


def test_an_edit_keeps_the_attachments_and_a_removed_chip_leaves_its_file_out(
    qtbot: Any, make_window: Any, server: Any, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("alpha\n")
    shot = write_png(tmp_path / "shot.png", 400, 300)
    window = make_window()
    _send_with_files(qtbot, window, server, [notes, shot])

    editor = _edit(qtbot, window, "look again")
    names = [button.text() for button in editor.file_buttons]
    assert names == ["notes.md  ✕", "shot.png  ✕"]
    server.enqueue(Reply(text="Again."))
    qtbot.keyClick(editor.box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: _drawn(window, 1), timeout=5000)
    wait_idle(qtbot, window)
    assert _sent_types(server) == ["input_text", "input_text", "input_image"]
    row = window.transcript.message_rows("user")[-1]
    assert row.text == "look again" and [a["name"] for a in row.attachments] == [
        "notes.md", "shot.png"
    ]

    editor = _edit(qtbot, window, "only the picture")
    qtbot.mouseClick(editor.file_buttons[0], Qt.MouseButton.LeftButton)  # notes.md ✕
    assert [b.text() for b in editor.file_buttons] == ["shot.png  ✕"]
    server.enqueue(Reply(text="A picture."))
    qtbot.mouseClick(editor.send_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: _drawn(window, 2), timeout=5000)
    wait_idle(qtbot, window)
    assert _sent_types(server) == ["input_text", "input_image"]
    row = window.transcript.message_rows("user")[-1]
    assert [a["name"] for a in row.attachments] == ["shot.png"]
