"""Recall in the window: the model's recall call is shown like any tool call, the user runs the
same search with Ctrl+F and lands on the matching row, and the settings switch turns it off."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt

from app.core.settings import SettingsStore
from app.demo import Reply, ToolCall
from app.ui.transcript.row_models import ExpandableRow

from ..helpers import type_and_send, wait_idle


def chat(qtbot: Any, window: Any, server: Any, text: str, answer: str) -> None:
    server.enqueue(Reply(text=answer))
    type_and_send(qtbot, window, text)
    wait_idle(qtbot, window)


def test_ctrl_f_finds_an_early_message_and_scrolls_to_it(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    chat(qtbot, window, server, "The staging port is 7001 for the orchard service.", "Noted.")
    for n in range(25):
        chat(qtbot, window, server, f"Filler question {n} about gardening", f"Filler answer {n}.")
    first = window.transcript.message_rows("user")[0]
    assert window.transcript.row_at_top() is not first  # scrolled away at the bottom

    qtbot.keyClick(window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    bar = window.find_bar
    assert bar.isVisible() and bar.query.hasFocus()
    qtbot.keyClicks(bar.query, "orchard staging port")
    qtbot.keyClick(bar.query, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: bool(bar.matches), timeout=5000)

    assert bar.status.text().startswith("1 of 1: turn 1 · your message")
    qtbot.waitUntil(lambda: window.transcript.row_at_top() is first, timeout=5000)
    qtbot.keyClick(bar.query, Qt.Key.Key_Escape)
    assert not bar.isVisible()
    assert window.busy is False  # Esc closed the bar, it did not stop anything


def test_a_search_without_words_or_matches_says_so(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    chat(qtbot, window, server, "hello", "Hi.")
    bar = window.find_bar
    window.find_action.trigger()
    for query, expected in [("kangaroo", "Nothing in this conversation matches 'kangaroo'."),
                            ('"*"', "Type words to look for.")]:
        bar.query.clear()
        qtbot.keyClicks(bar.query, query)
        qtbot.keyClick(bar.query, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda expected=expected: bar.status.text() == expected, timeout=5000)
        assert bar.matches == []


def test_the_models_recall_call_is_shown_like_any_tool_call(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    chat(qtbot, window, server, "Our deploy target is svc-orchard-41.", "Noted.")
    server.enqueue(Reply(function_calls=[ToolCall("recall", {"query": "deploy target"})]))
    server.enqueue(Reply(text="It was svc-orchard-41."))
    type_and_send(qtbot, window, "Which deploy target did I give you?")
    wait_idle(qtbot, window)
    tools = window.transcript.tool_rows()
    assert [row.name for row in tools] == ["recall"]
    assert isinstance(tools[0], ExpandableRow)
    assert '"deploy target"' in tools[0].arguments
    assert "Our deploy target is svc-orchard-41." in tools[0].output


def test_recall_is_switched_off_in_the_settings_panel(
    qtbot: Any, make_window: Any, server: Any, tmp_path: Any
) -> None:
    window = make_window()
    dialog = window.open_settings()
    assert dialog.recall.isChecked()  # on by default
    dialog.recall.setChecked(False)
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    saved, _ = SettingsStore(tmp_path / "config").load()
    assert saved.recall is False
    qtbot.waitUntil(lambda: window.session.config.recall is False, timeout=5000)
    chat(qtbot, window, server, "hello", "Hi.")
    body = server.requests_to("responses")[-1].body
    assert "recall" not in [tool.get("name") for tool in body.get("tools") or []]
