"""What a streaming reply costs the window: bounded by what is on screen, never by what
arrived since the last frame nor by the length of the reply. (The time itself is measured in
bench/bench_streaming.py and bench/bench_long_lines.py, not here.)"""

from __future__ import annotations

import random
import time
from typing import Any

import pytest

from app.core import protocol as p
from app.ui.text.long_text import (
    LONG_RUN,
    RUN,
    SEGMENT_CHARS,
    _break_html_runs,
    break_runs_html,
    segment_text,
    strip_breaks,
)
from app.ui.transcript.row_widgets import MessageRowWidget, SegmentWidget
from app.ui.transcript.view import TranscriptView
from app.ui.transcript.view.streaming import FRAME_MS, MAX_FRAME_MS, STREAM_PACE


@pytest.fixture
def view(qtbot: Any) -> TranscriptView:
    transcript = TranscriptView()
    qtbot.addWidget(transcript)
    transcript.resize(700, 500)
    transcript.show()
    qtbot.waitExposed(transcript)
    return transcript


def test_a_part_built_between_two_frames_shows_the_text_of_the_last_frame(
    view: TranscriptView,
) -> None:
    row = view.add_message("assistant", "", "reply")
    row.set_streaming(True)
    line = "".join(chr(ord("a") + i % 26) for i in range(3 * SEGMENT_CHARS + 500))
    row.append(line)
    row.render_markdown()
    last = row.segments[-1]
    assert row.shown_end == len(line)
    # A fast stream: far more than a part arrives before the next frame renders it.
    row.append("0123456789" * 10_000)
    view.drop_all_widgets()  # the parts on screen are built again before that frame
    shown = strip_breaks(last.body.toPlainText())
    assert shown == segment_text(line, row.cuts, last.number)
    assert len(shown) <= SEGMENT_CHARS
    # The next frame shows the new text, in parts of the usual size.
    row.render_markdown()
    assert row.shown_end == len(row.text)
    tail = row.segments[-1]
    assert strip_breaks(tail.body.toPlainText()) == tail.shown_text
    assert max(len(part.shown_text) for part in row.segments) <= SEGMENT_CHARS
    assert "".join([row.text[: row.cuts[0].offset], *(p.shown_text for p in row.segments)]) == (
        row.text
    )


def test_html_without_a_long_run_is_passed_through_and_with_one_broken_as_before() -> None:
    """The quick check that skips ``break_runs_html``'s token-by-token pass never skips HTML
    that pass would change (random HTML of text, entities, inline and block tags)."""
    rng = random.Random(22)
    pieces = ["<span style=\"color: #aa0000\">", "</span>", "<p>", "</p>", "<b>", "</b>",
              "<br />", "<pre>", "&amp;", "&#39;", "&lt;", " ", "\n", "<", "&", "-",
              *("abcdefghij" * 12)]
    changed = 0
    for _ in range(2_000):
        html = "".join(rng.choices(pieces, k=rng.randint(0, 200)))
        slow = _break_html_runs(html, LONG_RUN, RUN)
        assert break_runs_html(html) == slow
        changed += slow != html
    assert changed > 100  # both kinds were tried
    prose = "<p>" + "word " * 2_000 + "</p>"
    assert break_runs_html(prose) is prose  # nothing to break: the same string, not a copy


class _Clock:
    """A clock that moves on by ``step`` seconds each time it is read."""

    def __init__(self, step: float) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_a_stream_that_costs_more_to_render_is_rendered_less_often(
    view: TranscriptView,
) -> None:
    view.append_delta("reply", "Hello")
    view.work_clock = _Clock(0.001)  # rendering takes 1 ms: every frame is rendered
    view.flush()
    assert view.render_interval_ms == FRAME_MS
    view.append_delta("reply", " there")
    view.work_clock = _Clock(0.010)  # 10 ms: the window keeps most of its time
    view.flush()
    assert view.render_interval_ms == 10 * STREAM_PACE
    view.append_delta("reply", " again")
    view.work_clock = _Clock(0.5)  # however slow, the text still moves on
    view.flush()
    assert view.render_interval_ms == MAX_FRAME_MS
    assert view.message_rows("assistant")[0].body.toPlainText() == "Hello there again"


def widgets_built(view: TranscriptView) -> list[Any]:
    """The rows ``view`` builds a widget for from now on, in order."""
    built: list[Any] = []
    original = view.create_row_widget
    view.create_row_widget = lambda r: built.append(r) or original(r)  # type: ignore[method-assign]
    return built


def test_following_a_fast_stream_builds_one_part_per_pass_and_none_above_the_screen(
    qtbot: Any, view: TranscriptView
) -> None:
    row = view.add_message("assistant", "", "reply")
    view.append_delta("reply", "Start.\n\n")
    view.flush()
    built = widgets_built(view)
    # One frame brings several screens of text.
    view.append_delta("reply", "".join(f"Paragraph {i}: " + "words " * 60 + "\n\n"
                                       for i in range(60)))
    view.flush()
    assert len(row.segments) > 10
    assert len(built) <= 1  # the frame's own pass: one part at most
    qtbot.waitUntil(lambda: all(r._widget is not None for r in view._visible_rows(
        view.verticalScrollBar().value())))
    bar = view.verticalScrollBar()
    assert bar.value() == bar.maximum()  # still following the end
    # Only the parts on screen were built: none of those the text pushed above it.
    on_screen = view._visible_rows(bar.value())
    assert set(map(id, built)) == set(map(id, on_screen)) - {id(row)}
    assert all(view._tops[r.index] + r.height > bar.value() for r in built)
    view.handle_event(p.TurnComplete(turn_id="t", kind="regular", status="completed"))
    assert row.text.endswith("words \n\n") and not row.streaming


def test_a_part_the_stream_pushes_off_screen_is_rendered_only_when_it_comes_back(
    qtbot: Any, view: TranscriptView, monkeypatch: Any
) -> None:
    row = view.add_message("assistant", "", "reply")
    paragraph = "words " * 60 + "\n\n"
    view.append_delta("reply", "".join(f"Paragraph {i}: {paragraph}" for i in range(8)))
    view.flush()
    bar = view.verticalScrollBar()
    qtbot.waitUntil(lambda: all(r._widget is not None for r in view._visible_rows(bar.value())))
    open_part = row.segments[-1]  # on screen, still growing
    assert open_part._widget is not None
    rendered: list[Any] = []
    for cls in (MessageRowWidget, SegmentWidget):
        original = cls.render_text
        monkeypatch.setattr(
            cls, "render_text",
            lambda self, original=original: rendered.append(self.row) or original(self),
        )
    # One frame completes the open part and brings several screens of text below it.
    view.append_delta("reply", "".join(f"More {i}: {paragraph}" for i in range(60)))
    view.flush()
    qtbot.waitUntil(lambda: all(r._widget is not None for r in view._visible_rows(bar.value())))
    assert view._tops[open_part.index] + open_part.height < bar.value()  # pushed off screen
    assert open_part not in rendered  # its widget was not rendered for nothing
    # Scrolled back to, it shows all of its text.
    view.follow_bottom = False
    bar.setValue(view._tops[open_part.index])
    qtbot.waitUntil(lambda: open_part.measured_width == view._row_width())
    assert open_part.body.toPlainText().split() == open_part.shown_text.split()
    assert not open_part.stale


def test_the_final_text_of_a_followed_stream_builds_one_part_in_its_own_pass(
    qtbot: Any, view: TranscriptView
) -> None:
    row = view.add_message("assistant", "", "reply")
    view.append_delta("reply", "Start.\n\n")
    view.flush()
    built = widgets_built(view)
    # The reply ends with several screens of text that no frame has rendered yet.
    final = "Start.\n\n" + "".join(f"Part {i}: " + "words " * 60 + "\n\n" for i in range(60))
    item = p.TurnItem(id="reply", kind="agent_message", data={"text": final})
    view.handle_event(p.ItemCompleted(turn_id="t", item=item))
    assert len(built) <= 1  # like a frame of the stream: the rest in the passes after
    bar = view.verticalScrollBar()
    qtbot.waitUntil(lambda: all(r._widget is not None and r.measured_width == view._row_width()
                                for r in view._visible_rows(bar.value())))
    assert bar.value() == bar.maximum()
    assert row.text == final and not row.streaming and len(row.segments) > 10


def on_screen(view: TranscriptView) -> list[Any]:
    """The rows in the viewport (not those built ahead above or below it)."""
    top = view.verticalScrollBar().value()
    bottom = top + view.viewport().height()
    return [r for r in view.rows if view._tops[r.index] < bottom
            and view._tops[r.index] + r.height > top]


def settled(view: TranscriptView) -> bool:
    """Every row on screen has its widget, showing the current text, measured at its width,
    and no layout pass is due (the rows just off screen have theirs too)."""
    view._update_tops()
    width = view._row_width()
    return not view._deferred and all(
        r._widget is not None and r.measured_width == width and not r.stale
        for r in on_screen(view)
    )


def test_a_frame_and_a_long_message_build_no_part_in_their_own_block(
    qtbot: Any, view: TranscriptView
) -> None:
    # The parts a frame's render changed, and those of a long message that arrives, are built
    # and measured by the passes after (a turn of the event loop later), never in the block
    # that rendered the frame or received the message; they end as a layout made at once.
    row = view.add_message("assistant", "", "reply")
    view.append_delta("reply", "Start.\n\n")
    view.flush()
    qtbot.waitUntil(lambda: settled(view))
    built = widgets_built(view)
    view.append_delta("reply", "".join(f"Paragraph {i}: " + "words " * 60 + "\n\n"
                                       for i in range(20)))
    view.flush()
    assert built == [] and row.segments
    qtbot.waitUntil(lambda: settled(view))
    assert built  # the parts on screen, in the passes after
    view.handle_event(p.TurnComplete(turn_id="t", kind="regular", status="completed"))
    qtbot.waitUntil(lambda: settled(view))
    message = "".join(random.Random(3).choices("0123456789abcdef", k=5 * SEGMENT_CHARS))
    built.clear()
    user = view.add_message("user", message, "u1")
    assert built == [] and len(user.segments) == 4
    qtbot.waitUntil(lambda: settled(view))
    assert built
    bar = view.verticalScrollBar()
    assert bar.value() == bar.maximum()  # the view still ends at the bottom
    # The lazy layout is the eager one: every row on screen at the height its widget needs,
    # the same heights as a view that laid the same texts out at once (rows off screen keep
    # their estimates in both, measured or not depending on what was on screen when).
    width = view._row_width()
    for r in on_screen(view):
        assert r.height == max(1, int(r._widget.height_for(width)))
    eager = TranscriptView()
    qtbot.addWidget(eager)
    eager.resize(view.size())
    eager.show()
    with eager.hold():
        eager.add_message("assistant", row.text, "reply")
        eager.add_message("user", message, "u1")
    eager_bar = eager.verticalScrollBar()
    qtbot.waitExposed(eager)
    qtbot.waitUntil(lambda: settled(eager))
    assert [r.height for r in on_screen(eager)] == [r.height for r in on_screen(view)]
    assert eager_bar.value() == eager_bar.maximum()


def test_a_later_layout_pass_lets_the_timers_due_before_it_run_first(
    qtbot: Any, view: TranscriptView
) -> None:
    # The pass after one that left parts for later waits one more turn of the event loop:
    # when something outlasted the pass's timer (painting what the pass placed), the timers
    # that came due meanwhile (input, the stream's reading) run before the next pass.
    from PySide6.QtCore import QTimer

    message = "".join(random.Random(5).choices("0123456789abcdef", k=5 * SEGMENT_CHARS))
    view.add_message("user", message, "u1")
    qtbot.waitUntil(lambda: settled(view))  # (the scroll bar is shown: no more resizing)
    order: list[str] = []
    view.add_message("user", message, "u2")  # its parts are left for the passes after
    assert view._deferred
    original = view.create_row_widget
    view.create_row_widget = (  # type: ignore[method-assign]
        lambda r: order.append("pass") or original(r)
    )
    QTimer.singleShot(1, lambda: order.append("timer"))  # due after the pass's timer
    started = time.perf_counter()
    while time.perf_counter() - started < 0.005:  # both due: the thread was busy (a paint)
        pass
    qtbot.waitUntil(lambda: "pass" in order and "timer" in order)
    assert order.index("timer") < order.index("pass")


def test_a_resize_during_a_layout_over_several_passes_joins_it(
    qtbot: Any, view: TranscriptView
) -> None:
    # The scroll bar appearing as a long message first fills the view resizes it while the
    # message's parts are still being laid out: the new width is laid out by the passes
    # after, not in the resize's block, and ends as laid out at once.
    message = "".join(random.Random(7).choices("0123456789abcdef", k=5 * SEGMENT_CHARS))
    view.add_message("user", message, "u1")
    qtbot.waitUntil(lambda: settled(view))
    built = widgets_built(view)
    view.add_message("user", message, "u2")
    assert view._deferred
    view.resize(view.width() - 60, view.height())
    assert built == []
    qtbot.waitUntil(lambda: settled(view))
    width = view._row_width()
    assert all(r.height == max(1, int(r._widget.height_for(width))) for r in on_screen(view))
    # A resize with no layout under way measures in its own block, as before.
    assert not view._deferred
    view.resize(view.width() + 60, view.height())
    assert any(r.measured_width == view._row_width() for r in on_screen(view))
