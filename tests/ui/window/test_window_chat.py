"""The real window against the scripted server: sending, streaming, stopping, safe rendering."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextImageFormat

from app.demo import Reply

from ..helpers import RemeasureLog, assistant_texts, type_and_send, wait_idle

LONG_REPLY = " ".join(f"word{i}" for i in range(200))


def test_typing_and_sending_streams_the_reply_into_the_transcript(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    reply = "Here is **bold** text and code:\n\n```python\nprint('hi')\n```\n"
    server.enqueue(Reply(text=reply, chunk_size=4, delay_per_chunk=0.02))

    type_and_send(qtbot, window, "hello there")

    assert window.composer.text() == ""
    qtbot.waitUntil(lambda: [r.text for r in window.transcript.message_rows("user")]
                    == ["hello there"], timeout=5000)
    # Deltas show up before the reply is complete…
    qtbot.waitUntil(lambda: bool(assistant_texts(window)) and 0 < len(assistant_texts(window)[0])
                    < len(reply), timeout=5000)
    row = window.transcript.message_rows("assistant")[0]
    assert row.streaming
    wait_idle(qtbot, window)
    # …and the whole reply is rendered as Markdown at the end, batched rather than per delta.
    assert row.text == reply
    assert not row.streaming
    plain = row.body.toPlainText()
    assert "bold" in plain and "**" not in plain
    assert row.code_blocks == ["print('hi')"]
    deltas = max(1, len(reply) // 4)
    assert window.transcript.render_count < deltas
    assert server.requests_to("responses")[-1].body["input"][-1]["content"][0]["text"] == (
        "hello there"
    )


def test_enter_sends_and_shift_enter_breaks_the_line(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    server.enqueue(Reply(text="ok"))
    edit = window.composer.edit
    qtbot.keyClicks(edit, "line one")
    qtbot.keyClick(edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(edit, "line two")
    assert window.composer.text() == "line one\nline two"
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    wait_idle(qtbot, window)
    assert [r.text for r in window.transcript.message_rows("user")] == ["line one\nline two"]


def test_raw_html_in_a_reply_is_shown_as_text_not_rendered(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    hostile = "<img src=http://x/y.png><script>alert(1)</script> and ![pic](http://x/z.png)"
    server.enqueue(Reply(text=hostile))
    type_and_send(qtbot, window, "show me html")
    wait_idle(qtbot, window)
    row = window.transcript.message_rows("assistant")[0]
    plain = row.body.toPlainText()
    assert "<img src=http://x/y.png><script>alert(1)</script>" in plain
    # No image anywhere in the document: nothing is fetched or drawn.
    block = row.body.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            assert not it.fragment().charFormat().isImageFormat()
            it += 1
        block = block.next()
    assert not isinstance(row.body.loadResource(2, "http://x/y.png"), QTextImageFormat)
    assert row.body.loadResource(2, "http://x/y.png") is None
    # Nothing asked the server (or anyone) for the image.
    assert not [r.path for r in server.requests if "png" in r.path]


def test_stop_cancels_a_streaming_reply(qtbot: Any, make_window: Any, server: Any) -> None:
    window = make_window()
    server.enqueue(Reply(text=LONG_REPLY, chunk_size=6, delay_per_chunk=0.05))
    type_and_send(qtbot, window, "tell me a long story")
    qtbot.waitUntil(lambda: bool(assistant_texts(window)) and len(assistant_texts(window)[0]) > 10,
                    timeout=5000)
    assert window.composer.stop_button.isEnabled()
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Escape)
    wait_idle(qtbot, window, timeout=3000)
    row = window.transcript.message_rows("assistant")[0]
    assert row.interrupted
    assert len(row.text) < len(LONG_REPLY)
    assert "Interrupted by the user." in [r.message for r in window.transcript.notice_rows()]
    assert not window.composer.stop_button.isEnabled()
    assert window.composer.send_button.isEnabled()


def test_tool_calls_show_as_rows_that_expand(
    qtbot: Any, make_window: Any, server: Any, tmp_path: Any
) -> None:
    from app.demo import ToolCall

    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("remember the milk\n", encoding="utf-8")
    window = make_window(settings={"workspace": str(workspace)})
    server.enqueue(Reply(function_calls=[ToolCall("read_file", {"path": "notes.txt"})]))
    server.enqueue(Reply(text="The file says to remember the milk."))
    type_and_send(qtbot, window, "what is in notes.txt?")
    wait_idle(qtbot, window)
    rows = window.transcript.tool_rows()
    assert len(rows) == 1
    row = rows[0]
    assert row.name == "read_file"
    assert not row.expanded
    qtbot.mouseClick(row.toggle, Qt.MouseButton.LeftButton)
    assert row.expanded
    assert "notes.txt" in row.arguments_label.text()
    assert row.output is not None
    assert assistant_texts(window) == ["The file says to remember the milk."]


def test_copy_buttons_copy_the_message_and_each_code_block(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    from PySide6.QtCore import QUrl
    from PySide6.QtGui import QGuiApplication

    window = make_window()
    reply = "Two blocks:\n\n```sh\nls -la\n```\n\n```python\nprint(2)\n```\n"
    server.enqueue(Reply(text=reply))
    type_and_send(qtbot, window, "code please")
    wait_idle(qtbot, window)
    row = window.transcript.message_rows("assistant")[0]
    assert row.body.toHtml().count("coco-copy:") == 2
    qtbot.mouseClick(row.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == reply
    row.body.anchorClicked.emit(QUrl("coco-copy:1"))
    assert QGuiApplication.clipboard().text() == "print(2)"
    row.body.anchorClicked.emit(QUrl("coco-copy:0"))
    assert QGuiApplication.clipboard().text() == "ls -la"


def test_view_follows_the_bottom_unless_the_user_scrolled_up(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    view = window.transcript
    for i in range(30):
        view.add_message("user", f"earlier message {i}")
    qtbot.waitUntil(lambda: view.verticalScrollBar().maximum() > 0, timeout=3000)
    bar = view.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.value() == bar.maximum(), timeout=3000)

    server.enqueue(Reply(text="\n\n".join(f"paragraph {i}" for i in range(40)), chunk_size=12,
                         delay_per_chunk=0.02))
    type_and_send(qtbot, window, "a long answer please")
    # While it streams the view sticks to the newest text…
    qtbot.waitUntil(lambda: bool(assistant_texts(window)) and len(assistant_texts(window)[0]) > 60,
                    timeout=5000)
    qtbot.waitUntil(lambda: bar.value() == bar.maximum(), timeout=3000)
    # …until the user scrolls up; then it stays where the user put it.
    bar.setValue(0)
    assert not view.follow_bottom
    wait_idle(qtbot, window)
    assert bar.value() == 0 and bar.maximum() > 0
    # Sending again jumps back to the bottom and follows.
    server.enqueue(Reply(text="short"))
    type_and_send(qtbot, window, "thanks")
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: bar.value() == bar.maximum(), timeout=3000)
    assert view.follow_bottom


def test_the_final_text_arriving_again_is_not_rendered_again(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    # The core sends a reply's final text twice (item_completed, then agent_message); the
    # second must not render the unchanged text again: at the end of a long reply that render
    # re-measured the reply's parts on the window's thread.
    window = make_window()
    reply = "A *short* answer.\n\n- one\n- two\n"
    server.enqueue(Reply(text=reply, chunk_size=3))
    log = RemeasureLog(window)
    type_and_send(qtbot, window, "hello")
    wait_idle(qtbot, window)
    assert assistant_texts(window) == [reply]
    final = log.events.index("agent_message")
    assert log.events[final - 1] == "item_completed"  # the final text arrived just before
    assert log.while_drawing(final) == 0  # its second arrival changed nothing


def test_the_rows_a_live_event_adds_get_their_widgets_after_the_event_not_while_it_is_handled(
    qtbot: Any, make_window: Any, server: Any, monkeypatch: Any
) -> None:
    """Building a message's widget takes milliseconds: the block that delivers a core event
    (which often holds the core's own work on the stream too) is not given it; the layout
    passes just after build the widgets, and the messages are on screen."""
    from ..helpers import type_and_send, wait_idle

    window = make_window()
    transcript = window.transcript
    handling: list[bool] = []
    built: list[tuple[str, bool]] = []  # (the row's role or kind, built while an event was handled)
    handle = transcript.handle_live_event
    create = transcript.create_row_widget

    def handle_live_event(event: Any) -> None:
        handling.append(True)
        try:
            handle(event)
        finally:
            handling.pop()

    def create_row_widget(row: Any) -> Any:
        built.append((getattr(row, "role", type(row).__name__), bool(handling)))
        return create(row)

    monkeypatch.setattr(transcript, "handle_live_event", handle_live_event)
    monkeypatch.setattr(transcript, "create_row_widget", create_row_widget)
    server.enqueue(Reply(text="Here it is."))
    type_and_send(qtbot, window, "Show me")
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: all(row._widget is not None and row._widget.isVisible()
                                for row in transcript.message_rows()), timeout=5000)
    assert ("user", False) in built and ("assistant", False) in built
    assert not any(during for _, during in built)
