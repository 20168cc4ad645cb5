"""Nothing is cut at the window's minimum size, and the Model view gives way before the chat
column gets too narrow (issue 16, item 3). The real window, on a conversation with a tool
call, a compaction, an undone compaction, dimmed rows and an error with Retry, resized to its
minimum: every visible label shows its whole text (wrapped, or shortened with "…" on purpose),
every button its whole face, and the chat column keeps its floor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QSize
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QLabel,
    QLineEdit,
    QToolBar,
    QWidget,
)

from app.demo import Fault, Reply, ToolCall
from app.ui.style.widgets import ElidedLabel
from app.ui.window.pane_layout import CHAT_MIN_WIDTH, GAVE_WAY_TIP, MIN_WINDOW_SIZE

from ..helpers import type_and_send, wait_idle


def send(qtbot: Any, window: Any, text: str) -> None:
    type_and_send(qtbot, window, text)
    wait_idle(qtbot, window)


def settle(qtbot: Any, window: Any, size: QSize) -> None:
    """Resize the window and wait until its chat column has taken the new room."""
    window.resize(size)
    qtbot.waitUntil(lambda: window.size() == size, timeout=5000)
    QApplication.processEvents()
    window.transcript.relayout()
    QApplication.processEvents()


def cut_widgets(root: QWidget) -> list[str]:
    """Every visible label or button under ``root`` that shows less than its content: a
    one-line label narrower than its text, a wrapped label shorter than its lines, a button
    smaller than its face, a shortened line without its whole text in the tooltip."""
    problems: list[str] = []
    for widget in root.findChildren(QWidget):
        if not widget.isVisible() or widget.width() <= 0:
            continue
        name = f"{type(widget).__name__} {widget.accessibleName() or widget.objectName()!r}"
        if isinstance(widget, ElidedLabel):
            if widget.elided and widget.text() not in widget.toolTip():
                problems.append(f"{name}: shortened without its text in the tooltip")
        elif isinstance(widget, QLabel) and (widget.text() or widget.pixmap().width()):
            if widget.wordWrap():
                needed = widget.heightForWidth(widget.width())
                if needed > widget.height() + 1:
                    problems.append(
                        f"{name} {widget.text()[:40]!r}: {widget.height()} px high, "
                        f"needs {needed}"
                    )
            elif widget.sizeHint().width() > widget.width() + 1:
                problems.append(
                    f"{name} {widget.text()[:40]!r}: {widget.width()} px wide, "
                    f"needs {widget.sizeHint().width()}"
                )
        elif isinstance(widget, QAbstractButton) and not isinstance(
            widget.parentWidget(), QLineEdit
        ):  # (not the icons Qt lays out inside a line edit)
            hint = widget.minimumSizeHint()
            if hint.width() > widget.width() + 1 or hint.height() > widget.height() + 1:
                problems.append(f"{name}: {widget.size()} smaller than {hint}")
    return problems


def conversation(qtbot: Any, window: Any, server: Any) -> None:
    server.enqueue(Reply(text="A first answer that is long enough to wrap over a few lines " * 3))
    send(qtbot, window, "Plan a weekend in Lisbon. Constraint: the budget is under 900 EUR.")
    server.enqueue(Reply(function_calls=[ToolCall("read_file", {"path": "notes.txt"})]))
    server.enqueue(Reply(text="The notes say alpha and beta."))
    send(qtbot, window, "Please read notes.txt from the workspace and tell me what it says")
    server.enqueue(Reply(text="Summary of the first part of the conversation."))
    send(qtbot, window, "/compact")
    server.enqueue(Reply(text="Here is the packing list you asked for."))
    send(qtbot, window, "Show me a markdown list of what to pack.")
    server.enqueue(Reply(text="Summary two."))
    send(qtbot, window, "/compact")
    send(qtbot, window, "/undo-compact")
    server.enqueue(Fault.status(500, "the upstream model server is down for maintenance"))
    send(qtbot, window, "And where should we eat on Sunday evening near the river?")


def test_nothing_is_cut_at_the_minimum_size_and_the_model_view_gives_way(
    qtbot: Any, make_window: Any, server: Any, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("alpha\nbeta\n")
    window = make_window(
        overrides={"max_retries": 0}, settings={"workspace": str(workspace)}
    )
    conversation(qtbot, window, server)
    transcript = window.transcript
    assert [row.state for row in transcript.compaction_rows()] == ["done", "undone"]
    assert any(not row.in_context for row in transcript.rows)  # greyed rows above a marker
    [error] = transcript.notice_rows("error")
    assert error.retry_turn_id is not None

    window.model_view_action.trigger()  # opened as the user does
    settle(qtbot, window, QSize(1200, 800))
    assert window.model_view_pane.isVisible()

    assert window.minimumSize() == MIN_WINDOW_SIZE
    settle(qtbot, window, MIN_WINDOW_SIZE)
    # The Model view gave way: hidden, its toggle unchecked but still on the toolbar, saying
    # why; the chat column keeps its floor.
    assert not window.model_view_pane.isVisible()
    assert not window.model_view_action.isChecked()
    toggle = window.toolbar.widgetForAction(window.model_view_action)
    assert toggle.isVisible() and toggle.isEnabled()
    assert GAVE_WAY_TIP in window.model_view_action.toolTip()
    centre = transcript.parentWidget()
    assert centre.width() >= CHAT_MIN_WIDTH
    assert window.sessions.isVisible()

    # Every toolbar action is on the toolbar, none pushed into an overflow menu.
    toolbar = window.findChild(QToolBar, "mainToolbar")
    for action in toolbar.actions():
        widget = toolbar.widgetForAction(action)
        if widget is not None and action.isVisible():
            assert widget.isVisible(), action.text()

    # Every row, from the top of the transcript to the bottom, and the window around it.
    bar = transcript.verticalScrollBar()
    seen: set[int] = set()
    value = 0
    problems: list[str] = []
    while True:
        bar.setValue(value)
        transcript.relayout()
        QApplication.processEvents()
        problems += cut_widgets(window)
        seen.update(id(row) for row in transcript.rows if row._widget is not None)
        if bar.value() >= bar.maximum():
            break
        value = bar.value() + bar.pageStep() // 2
    assert seen >= {id(row) for row in transcript.rows}  # every row was on screen once
    assert sorted(set(problems)) == [], "\n".join(sorted(set(problems)))

    # The composer's hint fits its one line.
    edit = window.composer.edit
    width = edit.fontMetrics().horizontalAdvance(edit.placeholderText())
    assert width <= edit.viewport().width()

    # A hover message runs into the gauge: it is shortened with "…", not cut.
    status = window.statusBar()
    status.showMessage(window.compact_action.statusTip() + " and a few more words to be long")
    assert status.shown_message().endswith("…")
    assert status.fontMetrics().horizontalAdvance(status.shown_message()) <= (
        status.message_rect().width()
    )
    status.clearMessage()

    # Wide again: the Model view comes back by itself, with its toggle checked.
    settle(qtbot, window, QSize(1200, 800))
    assert window.model_view_pane.isVisible() and window.model_view_action.isChecked()
    assert GAVE_WAY_TIP not in window.model_view_action.toolTip()
    assert centre.width() >= CHAT_MIN_WIDTH


def test_asking_for_the_model_view_at_the_minimum_size_moves_the_session_list_aside(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    server.enqueue(Reply(text="an answer"))
    send(qtbot, window, "a question")
    settle(qtbot, window, MIN_WINDOW_SIZE)
    assert window.sessions.isVisible()

    window.model_view_action.trigger()
    QApplication.processEvents()
    assert window.model_view_pane.isVisible() and window.model_view_action.isChecked()
    assert not window.sessions.isVisible()  # it made way
    assert not window.sidebar_action.isChecked()
    assert GAVE_WAY_TIP in window.sidebar_action.toolTip()
    # The status bar says so, whole: not shortened with "…" beside the gauge.
    status = window.statusBar()
    assert status.currentMessage() == "Session list hidden: too narrow"
    assert status.shown_message() == status.currentMessage()
    centre = window.transcript.parentWidget()
    qtbot.waitUntil(lambda: centre.width() >= CHAT_MIN_WIDTH, timeout=5000)
    assert window.model_view_pane.width() >= window.model_view_pane.minimumWidth()
    assert cut_widgets(window.model_view) == []
    tree = window.model_view.tree
    qtbot.waitUntil(lambda: tree.header().length() <= tree.viewport().width(), timeout=3000)
    assert tree.header().sectionSize(4) > 0  # the content column keeps some room, ends in "…"

    # Closed by the user, the Model view stays closed when the window grows; the session
    # list, which only made way, comes back.
    window.model_view_action.trigger()
    settle(qtbot, window, QSize(1200, 800))
    assert not window.model_view_pane.isVisible()
    assert window.sessions.isVisible() and window.sidebar_action.isChecked()
