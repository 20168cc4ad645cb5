"""The conversation as a tree in the window (issue 36 item 5): a user message edited in place
(Enter resends, Esc cancels, ↑ in an empty composer), an answer regenerated, ``‹ n/m ›``
switching in place, all against the real core and the scripted server."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt

from app.demo import Reply

from ..helpers import type_and_send, wait_idle


def chat(qtbot: Any, window: Any, server: Any, text: str, answer: str) -> None:
    server.enqueue(Reply(text=answer))
    type_and_send(qtbot, window, text)
    wait_idle(qtbot, window)


def texts(window: Any) -> list[tuple[str, str]]:
    return [(row.role, row.text) for row in window.transcript.message_rows()]


def user_row(window: Any, text: str) -> Any:
    return next(r for r in window.transcript.message_rows("user") if r.text == text)


def drawn(window: Any, count: int) -> bool:
    redraw = window.controller.redraw
    return redraw is not None and redraw.drawn >= count and not redraw.holding


def edit_row(qtbot: Any, row: Any, text: str) -> Any:
    """Click the row's Edit button and replace its text (as typed); the editor."""
    qtbot.mouseClick(row.widget.branch.action, Qt.MouseButton.LeftButton)
    editor = row.widget.branch.editor
    assert editor is not None and editor.isVisible() and editor.box.hasFocus()
    assert editor.box.toPlainText() == row.text
    editor.box.selectAll()
    qtbot.keyClicks(editor.box, text)
    return editor


def test_an_edit_in_place_resends_on_a_new_branch_and_the_arrows_switch_back(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    chat(qtbot, window, server, "capital of France?", "Paris.")
    chat(qtbot, window, server, "capital of Germny?", "Berlni.")

    row = user_row(window, "capital of Germny?")
    editor = edit_row(qtbot, row, "capital of Germany?")
    assert not editor.carry.isVisible()  # branch_summary "never" (the default)
    server.enqueue(Reply(text="Berlin."))
    qtbot.keyClick(editor.box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: drawn(window, 1), timeout=5000)
    wait_idle(qtbot, window)

    assert texts(window) == [
        ("user", "capital of France?"), ("assistant", "Paris."),
        ("user", "capital of Germany?"), ("assistant", "Berlin."),
    ]
    edited = user_row(window, "capital of Germany?")
    controls = edited.widget.branch
    qtbot.waitUntil(lambda: controls.position.isVisible(), timeout=5000)
    assert controls.position.text() == "2/2"
    assert not controls.next.isEnabled() and controls.previous.isEnabled()

    qtbot.mouseClick(controls.previous, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: drawn(window, 2), timeout=5000)
    assert texts(window)[2:] == [("user", "capital of Germny?"), ("assistant", "Berlni.")]
    back = user_row(window, "capital of Germny?").widget.branch
    assert back.position.text() == "1/2" and back.next.isEnabled()
    # The model sees the branch switched to: the next message follows "Berlni.".
    chat(qtbot, window, server, "and Italy?", "Rome.")
    sent = [item.get("content") for item in server.requests_to("responses")[-1].body["input"]]
    assert "Berlni." in str(sent) and "Berlin." not in str(sent)


def test_esc_cancels_an_edit_and_nothing_is_sent(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    chat(qtbot, window, server, "hello", "Hi.")
    requests = len(server.requests_to("responses"))
    row = user_row(window, "hello")
    editor = edit_row(qtbot, row, "goodbye")
    qtbot.keyClick(editor.box, Qt.Key.Key_Escape)
    assert not row.editing and not editor.isVisible() and row.widget.body.isVisible()
    assert texts(window) == [("user", "hello"), ("assistant", "Hi.")]
    assert len(server.requests_to("responses")) == requests
    assert window.busy is False


def test_up_in_an_empty_composer_edits_the_last_message(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    chat(qtbot, window, server, "first", "One.")
    chat(qtbot, window, server, "second", "Two.")
    window.composer.edit.setFocus()
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Up)
    row = user_row(window, "second")
    assert row.editing and not user_row(window, "first").editing
    editor = row.widget.branch.editor
    qtbot.waitUntil(lambda: editor.box.hasFocus(), timeout=2000)
    editor.box.selectAll()
    qtbot.keyClicks(editor.box, "second, edited")
    server.enqueue(Reply(text="Two again."))
    qtbot.keyClick(editor.box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: drawn(window, 1), timeout=5000)
    wait_idle(qtbot, window)
    assert texts(window)[2:] == [("user", "second, edited"), ("assistant", "Two again.")]


def test_regenerate_answers_again_and_the_answer_row_switches_between_answers(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    chat(qtbot, window, server, "a name for a cat?", "Tom.")
    answer = window.transcript.message_rows("assistant")[-1]
    server.enqueue(Reply(text="Felix."))
    qtbot.mouseClick(answer.widget.branch.action, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: drawn(window, 1), timeout=5000)
    wait_idle(qtbot, window)
    assert texts(window) == [("user", "a name for a cat?"), ("assistant", "Felix.")]
    regenerated = window.transcript.message_rows("assistant")[-1]
    qtbot.waitUntil(lambda: regenerated.branches is not None, timeout=5000)
    controls = regenerated.widget.branch
    assert controls.position.text() == "2/2"
    assert window.transcript.message_rows("user")[0].branches is None  # on the answer
    qtbot.mouseClick(controls.previous, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: drawn(window, 2), timeout=5000)
    assert texts(window) == [("user", "a name for a cat?"), ("assistant", "Tom.")]


def test_the_branch_summary_setting_decides_the_edit_boxs_checkbox(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window(settings={"branch_summary": "always"})
    chat(qtbot, window, server, "draft a haiku", "Old pond...")
    sent: list[Any] = []
    submit = window.session.submit

    async def recording(op: Any) -> str:
        sent.append(op)
        return await submit(op)

    window.session.submit = recording
    editor = edit_row(qtbot, user_row(window, "draft a haiku"), "draft a limerick")
    assert editor.carry.isVisible() and editor.carry.isChecked()  # always: checked
    server.enqueue(Reply(text="There once..."))
    qtbot.keyClick(editor.box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: drawn(window, 1), timeout=5000)
    wait_idle(qtbot, window)
    assert [(op.op, op.text, op.carry_summary) for op in sent] == [
        ("edit_turn", "draft a limerick", True)
    ]

    # "ask": the checkbox is offered, unchecked; the settings panel saves the choice.
    dialog = window.open_settings()
    assert dialog.branch_summary.currentData() == "always"
    dialog.branch_summary.setCurrentIndex(dialog.branch_summary.findData("ask"))
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert window.context.settings.branch_summary == "ask"
    editor = edit_row(qtbot, user_row(window, "draft a limerick"), "draft a sonnet")
    assert editor.carry.isVisible() and not editor.carry.isChecked()
    qtbot.keyClick(editor.box, Qt.Key.Key_Escape)


def test_a_carried_branch_summary_is_shown_with_undo_and_undone_in_place(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window(settings={"branch_summary": "always"})
    chat(qtbot, window, server, "hello", "Hi.")
    chat(qtbot, window, server, "my budget is 500 euros", "Noted.")
    server.enqueue(Reply(text="- The budget was 500 euros."))  # the branch summary
    server.enqueue(Reply(text="Hello again."))
    editor = edit_row(qtbot, user_row(window, "hello"), "hi there")
    qtbot.keyClick(editor.box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: drawn(window, 1), timeout=5000)
    wait_idle(qtbot, window)
    assert window.composer.edit.hasFocus()  # the editor is gone: typing goes on below

    notes = [r for r in window.transcript.notice_rows("background") if r.undo_op is not None]
    assert len(notes) == 1 and "The budget was 500 euros." in notes[0].message
    note = notes[0]
    window.transcript.scroll_to_row(note)
    qtbot.waitUntil(lambda: note._widget is not None and note._widget.isVisible(), timeout=5000)
    undo = note._widget.undo_button
    assert undo.isVisible()
    qtbot.mouseClick(undo, Qt.MouseButton.LeftButton)

    qtbot.waitUntil(lambda: note.undo_op is None, timeout=5000)
    assert not undo.isVisible()
    assert "taken out of the model's view again" in note.message
    assert "<branch_summary>" not in str(window.session.history())
