"""The window as a person uses it (issue 25): no stray windows, drafts kept, wheel and keys
that do what the user means, text that is never clipped or cut mid-word."""

from __future__ import annotations

import socket
from typing import Any

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication, QScrollArea

from app.demo import Fault, Reply

from ..conftest import close_window, run
from ..helpers import last_user_text, type_and_send, wait_idle

OVER_LIMIT = {"input_tokens": 9_400, "output_tokens": 100, "total_tokens": 9_500}


def visible_windows() -> list[Any]:
    """The application's visible top-level windows (tooltips and popups are not left open
    by these tests)."""
    return [w for w in QApplication.topLevelWidgets() if w.isVisible() and w.isWindow()]


def long_text(paragraphs: int) -> str:
    return "\n\n".join(f"Paragraph {n}: " + "words of a long answer " * 30 for n in range(paragraphs))


def test_no_stray_windows_after_an_automatic_compaction_of_long_messages(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window(settings={"context_window": 10_000})  # auto-compact at 9 000
    server.enqueue(Reply(text=long_text(10)))
    type_and_send(qtbot, window, "a first question")
    wait_idle(qtbot, window)
    server.enqueue(Reply(text=long_text(10), usage=OVER_LIMIT))
    server.enqueue(Reply(text="auto summary"))  # the turn ends over the limit: compacted then
    type_and_send(qtbot, window, "a second question")
    qtbot.waitUntil(lambda: bool(window.transcript.compaction_rows()), timeout=5000)
    wait_idle(qtbot, window)
    answers = window.transcript.message_rows("assistant")
    assert all(answer.segments for answer in answers)  # shown in parts
    server.enqueue(Reply(text="answer after compaction"))
    type_and_send(qtbot, window, "next question")
    wait_idle(qtbot, window)
    marker = window.transcript.compaction_rows()[0]
    assert marker.state == "done" and "automatic" in marker.title_label.text()
    assert not answers[0].in_context and not answers[0].segments[0].in_context

    bar = window.transcript.verticalScrollBar()
    for value in (0, bar.maximum() // 2, bar.maximum(), 0):
        bar.setValue(value)
        QApplication.processEvents()
        assert visible_windows() == [window]
    # The out-of-context parts are built and dimmed; only the message's first part is tagged.
    part = answers[0].segments[0]
    assert part.widget is not None and not part.context_tag.isVisibleTo(part.widget)
    assert answers[0].context_tag.isVisibleTo(answers[0].widget)


def test_the_apps_own_notices_are_not_tagged_as_out_of_the_models_context(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window(overrides={"max_retries": 0})
    server.enqueue(Fault.status(500, "upstream is down"))
    type_and_send(qtbot, window, "the question")
    wait_idle(qtbot, window)
    server.enqueue(Reply(text="the answer"))
    type_and_send(qtbot, window, "another question")
    wait_idle(qtbot, window)
    server.enqueue(Reply(text="SUMMARY: two questions."))
    window.compact()
    wait_idle(qtbot, window)

    error = window.transcript.notice_rows("error")[0]
    answer = window.transcript.message_rows("assistant")[0]
    assert not answer.in_context and answer.context_tag.isVisibleTo(answer.widget)
    assert not error.context_tag.isVisibleTo(error.widget)  # never was in the model's context
    # An error reads in the error colour, a selectable label included (its text role).
    from PySide6.QtGui import QPalette

    from app.ui.style.theme import colors

    label = error.widget.label
    for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text):
        assert label.palette().color(role).name() == colors().error
    assert answer.widget.status_label.palette().color(QPalette.ColorRole.WindowText).name() == (
        colors().muted
    )


def test_a_draft_survives_quit_and_reopen(qtbot: Any, make_window: Any, server: Any) -> None:
    window = make_window()
    draft = "a thought not sent yet\nwith a second line"
    window.composer.edit.setFocus()
    qtbot.keyClicks(window.composer.edit, "a thought not sent yet")
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(window.composer.edit, "with a second line")
    session_id = window.session.id
    close_window(qtbot, window)

    reopened = make_window(session_id=session_id)
    assert reopened.composer.text() == draft
    assert server.requests_to("responses") == []  # a draft is never sent
    # Sent, it is no draft any more: the next start has an empty composer.
    server.enqueue(Reply(text="ok"))
    qtbot.keyClick(reopened.composer.edit, Qt.Key.Key_Return)
    wait_idle(qtbot, reopened)
    close_window(qtbot, reopened)
    assert make_window(session_id=session_id).composer.text() == ""


def test_shift_enter_line_breaks_stay_in_the_sent_message(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    edit = window.composer.edit
    edit.setFocus()
    qtbot.keyClicks(edit, "line one")
    qtbot.keyClick(edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(edit, "line two")
    server.enqueue(Reply(text="first line\nsame paragraph"))
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    wait_idle(qtbot, window)

    assert last_user_text(server.requests_to("responses")[-1].body) == "line one\nline two"
    question = window.transcript.message_rows("user")[0]
    shown = question.widget.body.toPlainText()
    assert shown.splitlines() == ["line one", "line two"]
    # The model's Markdown keeps its own rules: a single line break joins the lines.
    answer = window.transcript.message_rows("assistant")[0]
    assert "first line same paragraph" in answer.widget.body.toPlainText()


def wheel(qtbot: Any, widget: Any, steps: int = -3) -> None:
    """Turn the mouse wheel over ``widget`` (negative: towards the user, scrolling down)."""
    centre = QPointF(widget.rect().center())
    event = QWheelEvent(
        centre, QPointF(widget.mapToGlobal(widget.rect().center())), QPoint(),
        QPoint(0, 120 * steps), Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase, False,
    )
    QApplication.sendEvent(widget, event)


def test_the_wheel_scrolls_settings_past_controls_without_changing_them(
    qtbot: Any, make_window: Any
) -> None:
    window = make_window()
    dialog = window.open_settings()
    dialog.resize(600, 400)  # the panel scrolls
    qtbot.waitExposed(dialog)
    dialog.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is dialog)
    style, threshold = dialog.summary_style, dialog.threshold
    before = (style.currentIndex(), threshold.value())
    scroll = dialog.findChild(QScrollArea).verticalScrollBar()
    scroll.setValue(scroll.maximum() // 2)
    start = scroll.value()

    wheel(qtbot, style)
    wheel(qtbot, threshold)
    assert (style.currentIndex(), threshold.value()) == before
    assert not style.hasFocus() and not threshold.hasFocus()
    assert scroll.value() > start  # the panel scrolled instead

    threshold.setFocus()  # chosen by the user: the wheel sets it
    qtbot.waitUntil(threshold.hasFocus)
    wheel(qtbot, threshold, steps=-1)
    assert threshold.value() != before[1]
    dialog.reject()


def test_a_long_paragraph_is_shown_in_parts_that_never_split_a_word(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    words = [f"word{n}" for n in range(3_000)]  # one paragraph on one line, ~26 000 chars
    paragraph = " ".join(words)
    server.enqueue(Reply(text=paragraph, chunk_size=997))
    type_and_send(qtbot, window, "one long paragraph please")
    wait_idle(qtbot, window)

    answer = window.transcript.message_rows("assistant")[0]
    assert len(answer.segments) >= 5
    parts = [answer.head_source, *(part.shown_text for part in answer.segments)]
    assert "".join(parts) == paragraph
    for part in parts:  # each part holds whole words only
        assert set(part.split()) <= set(words), part[:40]
    # The same cuts when the session is reopened (computed off the streaming path).
    session_id = window.session.id
    run(qtbot, window.open_session(None))
    run(qtbot, window.open_session(session_id))
    reopened = window.transcript.message_rows("assistant")[0]
    assert [p.shown_text for p in reopened.segments] == parts[1:]


def test_compact_with_a_focus_right_after_a_compaction_summarises_again_for_it(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    server.enqueue(Reply(text="we looked at parse_config in app/config.py"))
    type_and_send(qtbot, window, "what does the code do")
    wait_idle(qtbot, window)
    server.enqueue(Reply(text="SUMMARY: a question about the code."))
    window.compact()
    wait_idle(qtbot, window)
    first = window.transcript.compaction_rows()[0]
    assert first.state == "done"
    assert "your last message kept" in first.info_label.text()

    # Nothing added and no focus: nothing to do, said in words.
    type_and_send(qtbot, window, "/compact")
    wait_idle(qtbot, window)
    assert [n.message for n in window.transcript.notice_rows("background")][-1] == (
        "Nothing new to compact since the last compaction."
    )
    requests = len(server.requests_to("responses"))

    # With a focus: the same conversation summarised again, from the full history.
    server.enqueue(Reply(text="SUMMARY: parse_config in app/config.py."))
    type_and_send(qtbot, window, "/compact focus on the code")
    wait_idle(qtbot, window)
    assert len(server.requests_to("responses")) == requests + 1
    body = server.requests_to("responses")[-1].body
    assert "focus on the code" in last_user_text(body)
    sent = str(body["input"])
    assert "we looked at parse_config" in sent  # the answer itself, not only its summary
    markers = window.transcript.compaction_rows()
    assert [m.state for m in markers] == ["undone", "done"]
    assert "focus on the code" in markers[1].info_label.text()
    assert "focus: focus" not in markers[1].info_label.text()
    history = str(window.session.history())
    assert "parse_config in app/config.py." in history
    assert "SUMMARY: a question about the code." not in history


def reopen(qtbot: Any, window: Any) -> None:
    session_id = window.session.id
    run(qtbot, window.open_session(None))
    run(qtbot, window.open_session(session_id))


def test_failed_and_stopped_compactions_are_shown_again_on_resume(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window(overrides={"max_retries": 0})
    server.enqueue(Reply(text="an answer"))
    type_and_send(qtbot, window, "a question")
    wait_idle(qtbot, window)
    server.enqueue(Reply(text="slow summary", initial_delay=3.0))
    window.compact()
    qtbot.waitUntil(lambda: len(server.requests_to("responses")) == 2, timeout=5000)
    window.stop()
    wait_idle(qtbot, window)
    server.enqueue(Fault.status(400, "the summary request was refused"))
    type_and_send(qtbot, window, "/compact keep the names")
    wait_idle(qtbot, window)

    def shown() -> list[tuple[str, str]]:
        return [(m.state, m.title) for m in window.transcript.compaction_rows()]

    live = shown()
    assert live == [
        ("stopped", "Compaction stopped · nothing changed"),
        ("stopped", "Compaction failed · nothing changed"),
    ]
    stopped, failed = window.transcript.compaction_rows()
    assert failed.retry_button.isVisibleTo(failed.widget)  # run it again, with its focus
    assert not stopped.retry_button.isVisibleTo(stopped.widget)
    server.enqueue(Reply(text="SUMMARY: the names."))
    qtbot.mouseClick(failed.retry_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, window)
    assert "keep the names" in last_user_text(server.requests_to("responses")[-1].body)
    assert [m.state for m in window.transcript.compaction_rows()] == ["stopped", "stopped", "done"]
    errors = [row.message for row in window.transcript.notice_rows("error")]

    reopen(qtbot, window)
    assert shown()[:2] == live
    assert [m.state for m in window.transcript.compaction_rows()] == ["stopped", "stopped", "done"]
    assert [row.message for row in window.transcript.notice_rows("error")] == errors
    # The error sits below its marker, as it did live.
    rows = window.transcript.rows
    failed = window.transcript.compaction_rows()[1]
    error = window.transcript.notice_rows("error")[0]
    assert rows.index(failed) < rows.index(error)
    assert not failed.retry_button.isVisibleTo(failed.widget)  # not offered from the past
    # An export tells the same story.
    from app.ui.sessions.export import transcript_to_markdown

    exported = transcript_to_markdown(window.session.replay_events())
    assert exported.count("**Compaction stopped** · nothing changed") == 1
    assert exported.count("**Compaction failed** · nothing changed") == 1


def test_compacting_against_a_dead_server_fails_at_once_in_one_sentence(
    qtbot: Any, make_window: Any
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    window = make_window(overrides={"max_retries": 3, "base_url": url})
    type_and_send(qtbot, window, "hello?")
    wait_idle(qtbot, window)
    [message_error] = window.transcript.notice_rows("error")
    assert message_error.retry_turn_id is not None
    before = len(window.transcript.rows)

    window.compact()
    wait_idle(qtbot, window)
    added = window.transcript.rows[before:]
    marker = window.transcript.compaction_rows()[0]
    errors = [row for row in added if getattr(row, "kind", "") == "error"]
    assert [row.message for row in errors] == [(
        f"Could not compact: Coco could not reach the server at {url}: nothing is listening "
        "there (connection refused). Check that the server is running and that the address in "
        "Settings is right."
    )]
    said = " ".join(getattr(row, "message", "") for row in added)
    assert said.count("could not reach") == 1  # not retried, nothing else said about it
    assert not any(getattr(row, "kind", "") == "stream_error" for row in added)
    assert marker.title == "Compaction failed · nothing changed"
    assert marker.retry_button.isVisibleTo(marker.widget)
    # The failed message still offers its own Retry, on its own error line.
    assert message_error.retry_turn_id is not None
    assert message_error.widget.retry_button.isVisibleTo(message_error.widget)
    assert errors[0].retry_turn_id is None


def test_in_the_light_theme_an_idle_stop_looks_disabled(qtbot: Any, make_window: Any) -> None:
    from PySide6.QtGui import QIcon

    from app.ui.style.icons import icon
    from app.ui.style.theme import apply_theme

    window = make_window()
    apply_theme("light")
    try:
        stop = window.composer.stop_button
        assert not stop.isEnabled()  # idle
        stop.setIcon(icon("stop"))  # drawn again with the light palette
        idle = stop.icon().pixmap(20, 20, QIcon.Mode.Disabled).toImage()
        active = stop.icon().pixmap(20, 20, QIcon.Mode.Normal).toImage()
        assert idle != active
    finally:
        apply_theme("system")


def test_choosing_the_demo_shows_its_model_not_the_one_typed_for_another_provider(
    qtbot: Any, make_window: Any
) -> None:
    window = make_window()
    dialog = window.open_settings()
    dialog.model.setText("my-own-model")
    dialog.provider.setCurrentIndex(dialog.provider.findData("demo"))
    assert dialog.model.text() == "" and dialog.model.placeholderText() == "coco-demo"
    assert dialog.base_url.text() == ""
    assert dialog.settings().model == ""  # saved, the demo runs its own model
    dialog.provider.setCurrentIndex(dialog.provider.findData("custom"))
    assert dialog.model.text() == "my-own-model"  # typed, not lost
    assert dialog.base_url.text().startswith("http://127.0.0.1:")
    dialog.reject()


def test_at_700_by_500_the_session_list_comes_back_when_the_model_view_closes(
    qtbot: Any, make_window: Any
) -> None:
    window = make_window()
    window.resize(700, 500)
    qtbot.waitUntil(lambda: window.width() == 700)
    assert window.sessions.isVisible()
    window.model_view_action.trigger()  # open the Model view: the session list makes way
    qtbot.waitUntil(lambda: window.model_view_pane.isVisible())
    assert not window.sessions.isVisible()

    window.model_view_action.trigger()  # closed again
    qtbot.waitUntil(lambda: not window.model_view_pane.isVisible())
    assert window.sessions.isVisible() and window.sidebar_action.isChecked()
    assert window.transcript.width() > 0


def test_deleting_the_open_session_opens_the_next_one_of_the_list(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    server.enqueue(Reply(text="ok"))
    type_and_send(qtbot, window, "the older session")
    wait_idle(qtbot, window)
    older = window.session.id
    qtbot.waitUntil(window.start_new_session().done, timeout=5000)
    server.enqueue(Reply(text="ok"))
    type_and_send(qtbot, window, "the newer session")
    wait_idle(qtbot, window)
    newer = window.session.id
    panel = window.sessions
    panel.refresh()
    assert panel.session_ids() == [newer, older]  # newest first
    panel.confirm_delete = lambda title: True

    assert run(qtbot, panel.delete_session(newer, "the newer session"))
    assert window.session.id == older  # the next one, not a new empty one
    assert [row.text for row in window.transcript.message_rows()] == ["the older session", "ok"]
    assert panel.session_ids() == [older]
    # The last one deleted: a new, empty session takes its place.
    assert run(qtbot, panel.delete_session(older, "the older session"))
    assert window.session.id not in (older, newer) and window.transcript.rows == []


def test_rows_that_leave_the_context_are_measured_again_with_their_tag(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    """A title or notice was cut off once the "not in the model's context" tag joined it
    (a narrow transcript: the Model view open beside it)."""
    window = make_window()
    window.resize(1000, 700)
    window.model_view_action.trigger()
    qtbot.waitUntil(lambda: window.model_view_pane.isVisible())
    server.enqueue(Reply(text="an answer"))
    type_and_send(qtbot, window, "a question")
    wait_idle(qtbot, window)
    server.enqueue(Reply(text="SUMMARY: a question."))
    window.compact()
    wait_idle(qtbot, window)
    window.undo_compaction()
    qtbot.waitUntil(lambda: window.transcript.compaction_rows()[0].state == "undone")
    server.enqueue(Reply(text="SUMMARY: a question, again."))
    window.compact()
    wait_idle(qtbot, window)

    undone = window.transcript.compaction_rows()[0]
    assert not undone.in_context and undone.context_tag.isVisibleTo(undone.widget)
    QApplication.processEvents()
    for row in window.transcript.rows:
        widget = row._widget
        if widget is not None and widget.isVisible():
            assert widget.height() >= widget.height_for(widget.width()), type(row).__name__
