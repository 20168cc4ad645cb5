"""Reopening a huge message draws it in bounded steps: its parts on screen are rendered ahead
in a worker thread, the rows are built in one turn of the event loop and laid out in the next,
the rows are measured once when the scroll bar appears, and a message view is not laid out
again when it is shown at the width it was measured at. What is shown is what the one-step
replay shows."""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any

import pytest
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QApplication, QWidget

from app.ui.controller.replay_prep import PARTS_RENDERED_AHEAD, prepare_replay, quick_cuts
from app.ui.richtext.markdown import MarkdownRenderer
from app.ui.richtext.markdown_document import MarkdownDocument, render_ahead
from app.ui.style.theme import colors
from app.ui.style.widgets import RichTextView
from app.ui.text.long_text import segment_source

from ..conftest import run
from ..helpers import saved_session_ending_with

LOG = "log line 0042: request served in 12 ms, cache hit, 200 OK\n"
HUGE = LOG * 6000  # 348 000 characters: parts of 16 KB
MIXED = "# Title\n\nSome *text*.\n\n```python\nx = 1\n```\n\nA tail with `code`\nand a second line"


def _render_threads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of the thread of every Markdown render from now on, in order."""
    threads: list[str] = []
    real = MarkdownRenderer._render

    def counted(self: MarkdownRenderer, text: str, first_code: int, breaks: bool) -> Any:
        threads.append(threading.current_thread().name)
        return real(self, text, first_code, breaks)

    monkeypatch.setattr(MarkdownRenderer, "_render", counted)
    return threads


def _counting_renderer(monkeypatch: pytest.MonkeyPatch) -> tuple[MarkdownRenderer, list[str]]:
    """A renderer whose every Markdown render is noted with its thread's name."""
    return MarkdownRenderer(colors(), "default"), _render_threads(monkeypatch)


@pytest.mark.parametrize("breaks", [False, True])
def test_a_document_rendered_ahead_is_the_document_rendered_in_place(
    qapp: Any, monkeypatch: pytest.MonkeyPatch, breaks: bool
) -> None:
    renderer, threads = _counting_renderer(monkeypatch)
    eager = MarkdownDocument(QTextDocument(), renderer, breaks)
    eager.update(MIXED)
    in_place = len(threads)
    assert in_place == 2  # the closed blocks, then the tail

    worker = threading.Thread(target=render_ahead, args=(renderer, MIXED, breaks))
    worker.start()
    worker.join()
    ahead = MarkdownDocument(QTextDocument(), renderer, breaks)
    ahead.update(MIXED)
    assert len(threads) == 2 * in_place  # the update took both renders ready
    assert ahead.document.toHtml() == eager.document.toHtml()
    assert ahead.code_blocks == eager.code_blocks == ["x = 1"]

    again = MarkdownDocument(QTextDocument(), renderer, breaks)
    again.update(MIXED)
    assert len(threads) == 3 * in_place  # each was taken once


def test_a_render_ahead_is_not_taken_for_another_text_and_can_be_dropped(
    qapp: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    renderer, threads = _counting_renderer(monkeypatch)
    renderer.render_ahead("one text")
    assert "another text" in renderer.render("another text").html
    assert "one text" in renderer.render("one text", breaks=True).html  # other arguments
    assert len(threads) == 3  # both rendered anew
    renderer.forget_ahead()
    renderer.render("one text")
    assert len(threads) == 4


async def test_the_last_parts_of_the_last_long_message_are_rendered_ahead() -> None:
    """Only they can be on screen when the transcript opens at its end; a user's text keeps
    its line breaks; a part that ends at a cut is complete (rendered in one piece)."""
    rendered: list[tuple[str, bool, bool]] = []
    first = SimpleNamespace(kind="agent_message", data={"text": HUGE})
    last = SimpleNamespace(kind="user_message", data={"text": HUGE + "the end"})
    events = [SimpleNamespace(type="item_completed", item=item) for item in (first, last)]
    await prepare_replay(
        events, None, lambda text, breaks, complete: rendered.append((text, breaks, complete))  # type: ignore[arg-type]
    )
    text = HUGE + "the end"
    cuts = quick_cuts(text)
    assert len(cuts) > PARTS_RENDERED_AHEAD
    assert rendered == [
        (segment_source(text, cuts, len(cuts) - number), True, number > 0)
        for number in range(PARTS_RENDERED_AHEAD)
    ]


def _shown(window: Any) -> list[str]:
    """The HTML of every part of the huge message (each built now if it is off screen)."""
    row = window.transcript.message_rows("assistant")[-1]
    return [part.body.document().toHtml() for part in [row, *row.segments]]


def test_a_reopened_huge_message_is_drawn_in_two_steps_and_shows_what_one_step_shows(
    qtbot: Any, make_window: Any, server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    window = make_window()
    session_id, _rollout = saved_session_ending_with(qtbot, window, server, HUGE)
    transcript = window.transcript
    built: list[Any] = []
    create = transcript.create_row_widget
    monkeypatch.setattr(transcript, "create_row_widget", lambda row: (built.append(row), create(row))[1])
    renders = _render_threads(monkeypatch)
    at_rows: list[int] = []
    # Connected after the window's own slot: runs once the rows are built.
    window.controller.session_resumed.connect(lambda _events: at_rows.append(len(built)))
    finish = transcript.finish_replay
    at_layout: list[tuple[int, int]] = []

    def finish_counted() -> None:
        before = (len(built), renders.count(threading.main_thread().name))
        finish()
        at_layout.append((len(built) - before[0], renders.count(threading.main_thread().name) - before[1]))

    monkeypatch.setattr(transcript, "finish_replay", finish_counted)
    run(qtbot, window.open_session(session_id), timeout=30)

    row = transcript.message_rows("assistant")[-1]
    assert row.text == HUGE and len(row.segments) > PARTS_RENDERED_AHEAD
    assert at_rows == [0]  # the rows' step builds no widget
    assert len(at_layout) == 1
    widgets, main_thread_renders = at_layout[0]
    assert widgets >= 1  # the last part, on screen
    assert main_thread_renders == 0  # its Markdown was rendered ahead, in the worker
    assert any(name != threading.main_thread().name for name in renders)
    bar = transcript.verticalScrollBar()
    qtbot.waitUntil(lambda: not transcript._deferred, timeout=5000)
    assert bar.value() == bar.maximum()
    stepped = _shown(window)

    # The same session drawn in one step, everything rendered on the window's thread.
    transcript.replay(window.session.replay_events())
    assert _shown(window) == stepped
    text = "".join(part.body.toPlainText() for part in [row, *row.segments])
    assert text.count("log line 0042") == HUGE.count("log line 0042")


def test_rows_on_screen_are_measured_once_when_the_scroll_bar_appears(
    qtbot: Any, make_window: Any, server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Content growing past the view shows the scroll bar: the rows on screen are measured at
    the narrower width at once, not first at the old width and again a turn later."""
    window = make_window()
    transcript = window.transcript
    assert transcript.verticalScrollBar().maximum() == 0
    measured: list[tuple[int, int]] = []
    create = transcript.create_row_widget

    def counting(row: Any) -> Any:
        widget = create(row)
        real = widget.height_for
        widget.height_for = lambda width: (measured.append((id(row), width)), real(width))[1]
        return widget

    monkeypatch.setattr(transcript, "create_row_widget", counting)
    with transcript.hold():
        for number in range(40):
            transcript.add_message("assistant", f"message {number}\n\n" + LOG * 3, f"m{number}")
    qtbot.waitUntil(lambda: not transcript._deferred, timeout=5000)
    QApplication.processEvents()  # the scroll bar's own queued show, had it been left to Qt
    assert transcript.verticalScrollBar().isVisible()
    width = transcript.viewport().width() - 24
    assert measured and {w for _row, w in measured} == {width}
    assert len({row for row, _w in measured}) == len(measured)  # each row once


def test_a_message_view_shown_at_its_measured_width_is_not_laid_out_again(qapp: Any) -> None:
    parent = QWidget()
    parent.resize(800, 600)
    parent.show()
    view = RichTextView(parent)
    view.setPlainText("word " * 4000)
    layouts: list[object] = []
    view.document().documentLayout().update.connect(lambda *_rect: layouts.append(None))
    height = view.heightForWidth(500)
    assert len(layouts) == 1
    view.setGeometry(0, 0, 500, height)
    view.show()
    QApplication.processEvents()
    assert len(layouts) == 1  # shown at the width it was laid out at
    assert view.document().textWidth() == view.viewport().width() == 500
    view.setGeometry(0, 0, 400, height)  # another width: laid out again, at it
    QApplication.processEvents()
    assert len(layouts) == 2 and view.document().textWidth() == 400
    assert view.heightForWidth(400) > height
    parent.close()
