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


def _on_screen(window: Any, row: Any, view: Any) -> bool:
    """The highlighted place of ``view`` (in ``row``) lies inside the transcript's viewport."""
    selections = view.extraSelections()
    if not selections or row._widget is None or not row.widget.isVisible():
        return False
    rect = view.cursorRect(selections[0].cursor)
    viewport = window.transcript.viewport()
    top = view.viewport().mapTo(viewport, rect.topLeft()).y()
    return 0 <= top <= viewport.height() - rect.height()


def find(qtbot: Any, window: Any, query: str) -> Any:
    qtbot.keyClick(window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    bar = window.find_bar
    bar.query.clear()
    qtbot.keyClicks(bar.query, query)
    qtbot.keyClick(bar.query, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: bool(bar.matches), timeout=5000)
    return bar


def test_a_match_in_a_compaction_summary_opens_the_marker_and_is_highlighted(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    chat(qtbot, window, server, "Plan the trip.", "Sure.")
    server.enqueue(Reply(text="The user plans a trip to the lighthouse of Zanzibarra in May."))
    window.compact_action.trigger()
    wait_idle(qtbot, window)
    for n in range(20):
        chat(qtbot, window, server, f"Filler question {n} about gardening", f"Filler answer {n}.")
    marker = window.transcript.compaction_rows()[0]
    assert not marker.expanded

    bar = find(qtbot, window, "Zanzibarra")
    assert "a compaction summary" in bar.status.text()
    qtbot.waitUntil(lambda: marker.expanded, timeout=5000)
    view = marker.widget.summary_view
    assert view.isVisible()
    marked = [s.cursor.selectedText() for s in view.extraSelections()]
    assert marked == ["Zanzibarra"]
    qtbot.waitUntil(lambda: _on_screen(window, marker, view), timeout=5000)
    qtbot.keyClick(bar.query, Qt.Key.Key_Escape)
    assert view.extraSelections() == []  # closing find takes the highlight off


def test_a_match_deep_in_a_long_answer_is_scrolled_into_view_and_highlighted(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    paragraphs = [f"Paragraph {n} says nothing in particular about soil." for n in range(400)]
    paragraphs[330] = "Here the answer names the quokkafruit orchard at last."
    chat(qtbot, window, server, "Tell me everything.", "\n\n".join(paragraphs))
    for n in range(5):
        chat(qtbot, window, server, f"Filler question {n}", f"Filler answer {n}.")

    find(qtbot, window, "quokkafruit")
    answer = window.transcript.message_rows("assistant")[0]
    assert answer.segments  # a long message, shown in parts
    part = next(s for s in answer.segments if "quokkafruit" in s.shown_text)
    view = part.widget.body
    qtbot.waitUntil(lambda: _on_screen(window, part, view), timeout=5000)
    assert [s.cursor.selectedText() for s in view.extraSelections()] == ["quokkafruit"]


def test_the_query_field_keeps_its_width_as_the_result_grows(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    window.resize(900, 600)
    chat(qtbot, window, server, "hello", "Hi.")
    window.find_action.trigger()
    bar = window.find_bar
    qtbot.waitUntil(lambda: bar.query.width() > 0)
    width = bar.query.width()
    bar.status.setText("12 of 34: turn 18 · a compaction summary · not in the model's view " * 3)
    bar.layout().activate()
    assert bar.query.width() == width
    assert bar.status.elided  # the result gives way, shortened with "…"
