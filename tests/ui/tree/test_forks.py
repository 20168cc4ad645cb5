"""Forking in the window (issue 36 item 5): "Fork into a new conversation" in a row's context
menu forks at that row's turn, ``/fork`` at the last turn; the fork opens at once and the
session list shows it under the conversation it came from."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPoint, QTimer
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtWidgets import QApplication, QMenu

from app.demo import Reply
from app.ui.sessions.fork_groups import FORK_MARK
from app.ui.transcript.row_widget_base import FORK_TEXT

from ..helpers import type_and_send, wait_idle


def chat(qtbot: Any, window: Any, server: Any, text: str, answer: str) -> None:
    server.enqueue(Reply(text=answer))
    type_and_send(qtbot, window, text)
    wait_idle(qtbot, window)


def texts(window: Any) -> list[str]:
    return [row.text for row in window.transcript.message_rows()]


def choose_from_context_menu(qtbot: Any, widget: Any, text: str) -> list[str]:
    """Right-click ``widget`` and choose ``text`` from its menu, as a user does; the menu's
    entries."""
    seen: list[str] = []

    def choose() -> None:
        menu = QApplication.activePopupWidget()
        if not isinstance(menu, QMenu):
            QTimer.singleShot(10, choose)
            return
        seen.extend(action.text() for action in menu.actions())
        action = next(a for a in menu.actions() if a.text() == text)
        menu.close()
        action.trigger()

    QTimer.singleShot(0, choose)
    at = QPoint(20, 10)
    QApplication.sendEvent(
        widget, QContextMenuEvent(QContextMenuEvent.Reason.Mouse, at, widget.mapToGlobal(at))
    )
    qtbot.waitUntil(lambda: bool(seen), timeout=3000)
    return seen


def test_fork_from_a_rows_menu_opens_the_fork_listed_under_its_source(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    chat(qtbot, window, server, "plan the garden", "Beds first.")
    chat(qtbot, window, server, "and the shed?", "Later.")
    source = window.session.id
    first_answer = window.transcript.message_rows("assistant")[0]

    with qtbot.waitSignal(window.controller.session_opened, timeout=5000,
                          check_params_cb=lambda opened: opened != source):  # the fork, open
        entries = choose_from_context_menu(qtbot, first_answer.widget, FORK_TEXT)
    assert entries[0].startswith("Pin")  # the row's menu also pins
    wait_idle(qtbot, window)
    # The fork holds the conversation up to and including that row's turn.
    qtbot.waitUntil(lambda: texts(window) == ["plan the garden", "Beds first."], timeout=5000)
    fork = window.session.id
    ids = window.sessions.session_ids()
    assert ids.index(fork) == ids.index(source) + 1  # right under the conversation it came from
    label = window.sessions.list.item(ids.index(fork)).text()
    assert label.startswith(FORK_MARK) and "(fork)" in label
    assert not window.sessions.list.item(ids.index(source)).text().startswith(FORK_MARK)

    # The original is untouched.
    window.sessions.session_activated.emit(source)
    qtbot.waitUntil(lambda: window.session is not None and window.session.id == source,
                    timeout=5000)
    qtbot.waitUntil(lambda: len(texts(window)) == 4, timeout=5000)


def test_slash_fork_forks_at_the_last_turn(qtbot: Any, make_window: Any, server: Any) -> None:
    window = make_window()
    chat(qtbot, window, server, "one", "1.")
    chat(qtbot, window, server, "two", "2.")
    source = window.session.id
    with qtbot.waitSignal(window.controller.session_opened, timeout=5000,
                          check_params_cb=lambda opened: opened != source):  # the fork, open
        type_and_send(qtbot, window, "/fork")
    qtbot.waitUntil(lambda: texts(window) == ["one", "1.", "two", "2."], timeout=5000)
    # The fork goes on on its own: its next message follows the whole path.
    chat(qtbot, window, server, "three", "3.")
    assert texts(window)[-2:] == ["three", "3."]
    ids = window.sessions.session_ids()
    assert ids.index(window.session.id) == ids.index(source) + 1


def test_slash_fork_in_an_empty_conversation_says_there_is_nothing_to_fork(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    source = window.session.id
    type_and_send(qtbot, window, "/fork")
    assert window.composer.hint.isVisible()
    assert "nothing to fork" in window.composer.hint.text()
    assert window.session.id == source
