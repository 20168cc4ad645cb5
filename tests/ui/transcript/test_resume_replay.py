"""Resume is a replay: a reopened session is drawn from the core's replayed events through the
handler live events go through, so it looks exactly as it did live."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.demo import Fault, Reply, ToolCall
from app.ui.transcript.compaction_row import CompactionRow
from app.ui.transcript.message_rows import MessageRow
from app.ui.transcript.row_models import NoticeRow, ReasoningRow, ToolRow

from ..helpers import type_and_send, wait_idle


def send(qtbot: Any, window: Any, text: str) -> None:
    type_and_send(qtbot, window, text)
    wait_idle(qtbot, window)


def snapshot(window: Any) -> list[tuple[Any, ...]]:
    """What each row shows: its kind, words, and whether the model still sees it."""
    rows: list[tuple[Any, ...]] = []
    for row in window.transcript.rows:
        if isinstance(row, MessageRow):
            rows.append(("message", row.role, row.text, row.in_context, row.interrupted))
        elif isinstance(row, CompactionRow):
            rows.append(
                ("marker", row.title, row.figures, row.info, row.state, row.undoable,
                 row.in_context)
            )
        elif isinstance(row, NoticeRow):
            if row.kind != "stream_error":  # a reconnect is status, not conversation
                rows.append(("notice", row.kind, row.message, row.in_context))
        elif isinstance(row, ToolRow):
            rows.append(("tool", row.name, row.arguments, row.in_context))
        elif isinstance(row, ReasoningRow):
            rows.append(("reasoning", row.text, row.in_context))
    return rows


def test_a_reopened_session_renders_exactly_as_it_did_live(
    qtbot: Any, make_window: Any, server: Any, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("alpha\nbeta\n")
    window = make_window(settings={"workspace": str(workspace), "context_window": 16_000})

    server.enqueue(Reply(text="first answer"))
    send(qtbot, window, "first question")
    server.enqueue(Reply(function_calls=[ToolCall("read_file", {"path": "notes.txt"})]))
    server.enqueue(Reply(text="the file says alpha and beta", reasoning="ENC-R"))
    send(qtbot, window, "read notes.txt")
    server.enqueue(Reply(text="summary one"))
    send(qtbot, window, "/compact names")  # a compaction with a focus
    server.enqueue(Reply(text="second answer"))
    send(qtbot, window, "second question")
    server.enqueue(Reply(text="summary two"))
    send(qtbot, window, "/compact")
    send(qtbot, window, "/undo-compact")  # undone: its rows are back in view
    server.enqueue(Reply(text=""))  # an empty reply: a warning note
    send(qtbot, window, "say nothing")
    # An overflow that compaction cannot recover from: the message leaves the model's view.
    server.enqueue(Fault.overflow())
    server.enqueue(Reply(text="summary three"))
    server.enqueue(Fault.overflow())
    send(qtbot, window, "the message that does not fit")
    server.enqueue(Reply(text="last answer"))
    send(qtbot, window, "last question")
    # A compaction whose request overflows once: it says, while running, that it left older
    # items out (a background line drawn below its marker).
    server.enqueue(Fault.overflow())
    server.enqueue(Reply(text="summary four"))
    send(qtbot, window, "/compact")

    live = snapshot(window)
    trimmed = next(i for i, e in enumerate(live) if e[0] == "notice" and "Trimmed" in e[2])
    assert live[trimmed - 1][0] == "marker"
    kinds = {entry[0] for entry in live}
    assert {"message", "marker", "notice", "tool"} <= kinds
    assert any(entry[0] == "marker" and entry[4] == "undone" for entry in live)
    assert any(entry[0] == "message" and not entry[3] for entry in live)  # out of view

    session_id = window.session.id
    run_new = window.start_new_session()
    qtbot.waitUntil(run_new.done, timeout=5000)
    opened = window._schedule_open(session_id)
    qtbot.waitUntil(opened.done, timeout=5000)
    assert snapshot(window) == live


def test_the_window_may_paint_a_reopened_conversation_before_the_rest_of_the_opening(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    """Drawing a huge message and finishing the opening (session list, title, settings
    saved) made one long block; the event loop turns between the two."""
    import asyncio

    window = make_window()
    server.enqueue(Reply(text="an answer"))
    send(qtbot, window, "a question")
    session_id = window.session.id
    qtbot.waitUntil(window.start_new_session().done, timeout=5000)
    order: list[str] = []
    loop = asyncio.get_event_loop()
    window.controller.session_resumed.connect(
        lambda _events: loop.call_soon(lambda: order.append("loop turned"))
    )
    window.controller.session_opened.connect(lambda _id: order.append("opened"))
    qtbot.waitUntil(window._schedule_open(session_id).done, timeout=5000)
    assert order == ["loop turned", "opened"]
    assert [row.text for row in window.transcript.message_rows()] == ["a question", "an answer"]
