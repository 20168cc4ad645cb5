"""The virtualised transcript: widgets only for rows on screen, stable scrolling, state kept
when a row's widget is rebuilt."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import pytest

from app.core.session.replay import replay_events
from app.ui.transcript.row_layout import KEEP_WIDGETS, SPACING
from app.ui.transcript.row_models import ToolRow
from app.ui.transcript.row_widget_base import RowWidget
from app.ui.transcript.view import TranscriptView


def _message(role: str, text: str, index: int) -> dict[str, Any]:
    part = "output_text" if role == "assistant" else "input_text"
    return {"kind": "item", "item": {"type": "message", "role": role, "id": f"m{index}",
                                     "content": [{"type": part, "text": text}]}}


def _entries(turns: int) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    for i in range(turns):
        entries.append(_message("user", f"question {i} " + "word " * (i % 40), 2 * i))
        answer = "\n\n".join(f"Paragraph {j} of answer {i}. " + "text " * (10 + 7 * j)
                             for j in range(1 + i % 4))
        entries.append(_message("assistant", answer, 2 * i + 1))
        if i % 25 == 0:
            entries.append({"kind": "item", "item": {
                "type": "function_call", "call_id": f"c{i}", "name": "read_file",
                "arguments": '{"path": "notes.txt"}'}})
            entries.append({"kind": "item", "item": {
                "type": "function_call_output", "call_id": f"c{i}", "output": "line\n" * 20}})
    return entries


@pytest.fixture
def view(qtbot: Any) -> TranscriptView:
    transcript = TranscriptView()
    qtbot.addWidget(transcript)
    transcript.resize(700, 500)
    transcript.show()
    qtbot.waitExposed(transcript)
    return transcript


def _live_widgets(view: TranscriptView) -> int:
    return sum(1 for row in view.rows if row._widget is not None)


def _shown(view: TranscriptView) -> list[Any]:
    return sorted((r for r in view.rows if r._widget is not None and r._widget.isVisible()),
                  key=lambda r: r.index)


def _assert_stacked(view: TranscriptView) -> None:
    """Rows on screen sit one under the other, each exactly as tall as its row says."""
    shown = _shown(view)
    assert shown
    for row in shown:
        assert row._widget.height() == row.height
    for above, below in pairwise(shown):
        assert below.index == above.index + 1
        assert below._widget.y() == above._widget.y() + above.height + SPACING


def test_a_long_session_gets_widgets_only_for_the_rows_on_screen(view: TranscriptView) -> None:
    view.replay(replay_events(_entries(1500), None))

    assert len(view.rows) == 3000 + 60  # a row per message and per tool call
    assert _live_widgets(view) <= len(_shown(view)) + KEEP_WIDGETS < 60
    bar = view.verticalScrollBar()
    assert bar.value() == bar.maximum() > 0
    last = view.rows[-1]
    assert last._widget is not None and last._widget.isVisible()
    assert last._widget.geometry().bottom() < view.viewport().height()
    _assert_stacked(view)
    # A row anywhere can still be asked for what it shows.
    assert view.message_rows("user")[0].body.toPlainText().startswith("question 0")


def test_scrolling_shows_the_rows_at_each_position_in_order(
    qtbot: Any, view: TranscriptView
) -> None:
    view.replay(replay_events(_entries(600), None))
    bar = view.verticalScrollBar()
    for value in (0, bar.maximum() // 3, bar.maximum() // 2, 12345, 0):
        bar.setValue(value)
        _assert_stacked(view)
        top = view.row_at_top()
        assert top is not None and top._widget.y() <= 12
    assert view.rows[0]._widget.isVisible()
    assert not view.follow_bottom
    assert _live_widgets(view) <= len(_shown(view)) + KEEP_WIDGETS


def test_the_first_row_on_screen_stays_put_when_a_row_above_grows(
    qtbot: Any, view: TranscriptView
) -> None:
    view.replay(replay_events(_entries(400), None))
    bar = view.verticalScrollBar()
    bar.setValue(bar.maximum() // 2)
    qtbot.waitUntil(lambda: not view._deferred)  # the rows just off screen measured too
    top = view.row_at_top()
    assert top is not None
    y_before, value_before = top._widget.y(), bar.value()
    tool = next(r for r in view.rows[: top.index] if isinstance(r, ToolRow))
    height_before = tool.height

    tool.set_expanded(True)  # off screen: its estimated height grows

    assert tool.height > height_before
    assert view.row_at_top() is top
    assert top._widget.y() == y_before
    assert bar.value() == value_before + tool.height - height_before


def test_a_row_rebuilt_after_scrolling_away_shows_its_state_again(
    view: TranscriptView,
) -> None:
    view.replay(replay_events(_entries(400), None))
    bar = view.verticalScrollBar()
    bar.setValue(0)
    tool = view.tool_rows()[0]
    message = view.message_rows("assistant")[0]
    tool.set_expanded(True)
    message.set_in_context(False)
    assert tool.widget.details.isVisible()

    for step in range(1, 9):  # scroll down through the session: their widgets are dropped
        bar.setValue(bar.maximum() * step // 8)
    assert tool._widget is None and message._widget is None

    bar.setValue(0)
    assert tool.widget.toggle.isChecked() and tool.widget.details.isVisible()
    assert tool.expanded
    assert message.context_tag.isVisibleTo(message.widget)
    assert message.widget.graphicsEffect() is not None  # dimmed


def test_clearing_deletes_every_row_widget(qtbot: Any, view: TranscriptView) -> None:
    view.replay(replay_events(_entries(50), None))
    assert _live_widgets(view) > 0
    view.clear()
    qtbot.waitUntil(lambda: not view.viewport().findChildren(RowWidget), timeout=2000)
    assert view.rows == []
    assert view.empty_label.isVisible()


def test_a_streaming_row_grows_with_its_text_and_the_view_follows(view: TranscriptView) -> None:
    row = view.add_message("assistant", "", "reply")
    heights = []
    for i in range(16):
        row.append(f"Paragraph {i}: " + "words " * 40 + "\n\n")
        row.render_markdown()
        parts = [row, *row.segments]  # a long message is shown in parts
        for part in parts:
            body = part.body
            # The whole rendered text fits: the part is as tall as its document needs.
            assert body.height() >= body.document().size().height()
            assert part.widget.height() == part.height
        heights.append(sum(part.height for part in parts))
    assert row.segments
    assert heights == sorted(heights) and heights[-1] > heights[0] + 200
    bar = view.verticalScrollBar()
    assert bar.maximum() > 0 and bar.value() == bar.maximum()


def test_a_screenful_of_new_short_rows_is_built_over_passes_the_newest_first(
    qtbot: Any, view: TranscriptView, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Making a row's widget counts in a pass's budget (``NEW_WIDGET_COST``): a redraw that
    brings a screenful of short rows builds a few per pass, following the bottom from the
    newest up, and the rest in the passes after."""
    from app.ui.transcript import row_layout

    built: list[int] = []
    create = view.create_row_widget
    monkeypatch.setattr(view, "create_row_widget", lambda row: (built.append(row.index),
                                                                create(row))[1])
    with view.hold():
        for i in range(60):
            view.add_message("user" if i % 2 else "assistant", f"a short line {i}", f"m{i}")
    per_pass = row_layout.LAYOUT_BUDGET // row_layout.NEW_WIDGET_COST
    assert 1 <= len(built) <= per_pass
    assert built == sorted(built, reverse=True) and built[0] == len(view.rows) - 1
    assert view._deferred
    qtbot.waitUntil(lambda: not view._deferred)
    assert len(built) > per_pass
    assert all(r._widget is not None for r in _shown(view)) and view.rows[-1]._widget.isVisible()
    _assert_stacked(view)
