"""Another branch drawn in slices (``sliced_replay``): the window takes input between them,
the old branch stays on screen until the new one is in, and what is drawn is what a drawing
in one step shows. Against the real core and the scripted server."""

from __future__ import annotations

from typing import Any

import shiboken6

from app.core import ops
from app.demo import Reply
from app.ui.transcript.view import sliced_replay
from app.ui.transcript.view.sliced_replay import SlicedReplay

from ..helpers import type_and_send, wait_idle

TURNS = 12


def chat(qtbot: Any, window: Any, server: Any, turns: int) -> None:
    for n in range(turns):
        server.enqueue(Reply(text=f"answer {n}"))
        type_and_send(qtbot, window, f"question {n}")
        wait_idle(qtbot, window)


def drawn(window: Any, count: int) -> bool:
    redraw = window.controller.redraw
    return redraw is not None and redraw.drawn >= count and not redraw.holding


def rows_shown(view: Any) -> list[tuple[str, str]]:
    return [(row.role, row.text) for row in view.message_rows()]


def test_another_branch_is_drawn_in_slices_with_the_old_one_on_screen_until_it_is_in(
    qtbot: Any, make_window: Any, server: Any, monkeypatch: Any
) -> None:
    # A slice makes the rows of four events (the clock is always past its deadline here).
    monkeypatch.setattr(sliced_replay, "SLICE_S", -1.0)
    monkeypatch.setattr(sliced_replay, "_CHECK_EVERY", 4)
    old_widgets: list[Any] = []
    seen_mid_way: list[bool] = []
    slice_once = SlicedReplay._slice

    def watched(self: SlicedReplay) -> None:
        if self.running and self.slices >= 1:  # a slice has run: the next is due later
            seen_mid_way.append(
                all(shiboken6.isValid(w) and w.isVisible() for w in old_widgets)
            )
        slice_once(self)

    monkeypatch.setattr(SlicedReplay, "_slice", watched)  # before the view makes its own
    window = make_window()
    chat(qtbot, window, server, TURNS)
    view = window.transcript
    first = window.controller.session.tree().nodes[0].turn_id
    newest = window.controller.session.tree().nodes[-1].turn_id

    server.enqueue(Reply(text="another answer"))
    window.controller.submit(ops.EditTurn(turn_id=first, text="question zero"))
    qtbot.waitUntil(lambda: drawn(window, 1), timeout=5000)
    wait_idle(qtbot, window)
    assert rows_shown(view) == [("user", "question zero"), ("assistant", "another answer")]
    qtbot.waitUntil(lambda: not view.settling, timeout=5000)
    old_widgets += [row._widget for row in view.message_rows() if row._widget is not None]
    assert old_widgets and all(widget.isVisible() for widget in old_widgets)

    seen_mid_way.clear()
    window.controller.submit(ops.SwitchBranch(turn_id=newest))
    qtbot.waitUntil(lambda: drawn(window, 2), timeout=5000)

    slices = view._slices.slices
    assert slices > 5  # 12 turns' events, 4 a slice
    assert len(seen_mid_way) == slices - 1 and all(seen_mid_way)
    assert not any(shiboken6.isValid(w) and w.isVisible() for w in old_widgets)
    expected = [
        (role, text)
        for n in range(TURNS)
        for role, text in (("user", f"question {n}"), ("assistant", f"answer {n}"))
    ]
    assert rows_shown(view) == expected
    # The same rows as the window draws in one step when the session is opened.
    events = window.controller.session.replay_events()
    view.replay(events)
    assert rows_shown(view) == expected
    # The rows on screen get their widgets and the view follows the end.
    qtbot.waitUntil(lambda: not view.settling, timeout=5000)
    last = view.message_rows()[-1]
    qtbot.waitUntil(lambda: last._widget is not None and last._widget.isVisible(), timeout=5000)


def test_clearing_the_view_stops_a_replay_in_slices(
    qtbot: Any, make_window: Any, server: Any, monkeypatch: Any
) -> None:
    window = make_window()
    chat(qtbot, window, server, 4)
    view = window.transcript
    events = window.controller.session.replay_events()
    monkeypatch.setattr(sliced_replay, "SLICE_S", -1.0)
    told: list[bool] = []

    view.replay_in_slices(events, lambda: told.append(True))
    assert view._slices.running
    view.clear()  # another session is being shown

    assert told == [True]
    assert not view._slices.running and not view._slices._timer.isActive()
    assert view.rows == []


def test_a_replays_end_has_a_pass_of_its_own_and_its_events_are_freed_in_steps(
    qtbot: Any, make_window: Any, server: Any, monkeypatch: Any
) -> None:
    from app.ui.controller import branch_redraw

    freed: list[tuple[list[Any], int]] = []
    free = branch_redraw.free_in_steps

    def noted_free(items: list[Any]) -> None:
        freed.append((items, len(items)))
        free(items)

    monkeypatch.setattr(branch_redraw, "free_in_steps", noted_free)
    drawings: list[Any] = []
    make_drawing = branch_redraw.BranchDrawing.__init__

    def noted(self: Any, *args: Any) -> None:
        make_drawing(self, *args)
        drawings.append(self)

    monkeypatch.setattr(branch_redraw.BranchDrawing, "__init__", noted)
    handled_by_slice: list[tuple[int, bool]] = []  # (events handled, the replay ended)
    slice_once = SlicedReplay._slice

    def watched(self: SlicedReplay) -> None:
        handled = []
        handle = self._view.handle_event
        self._view.handle_event = lambda event: (handled.append(event), handle(event))
        try:
            slice_once(self)
        finally:
            del self._view.handle_event
        handled_by_slice.append((len(handled), not self.running))

    monkeypatch.setattr(SlicedReplay, "_slice", watched)
    window = make_window()
    chat(qtbot, window, server, 4)
    newest = window.controller.session.tree().nodes[-1].turn_id
    first = window.controller.session.tree().nodes[0].turn_id
    server.enqueue(Reply(text="another answer"))
    window.controller.submit(ops.EditTurn(turn_id=first, text="question zero"))
    qtbot.waitUntil(lambda: drawn(window, 1), timeout=5000)
    wait_idle(qtbot, window)
    handled_by_slice.clear()
    window.controller.submit(ops.SwitchBranch(turn_id=newest))
    qtbot.waitUntil(lambda: drawn(window, 2), timeout=5000)
    # The slices made rows; the one that ended the replay (its layout, the old widgets gone)
    # made none.
    assert handled_by_slice[-1] == (0, True)
    assert sum(n for n, _ in handled_by_slice) > 0
    assert not any(ended for _, ended in handled_by_slice[:-1])
    # The branch's events, once drawn, are let go in steps (``free_in_steps``), not at once
    # when the redraw ends.
    events, count = freed[-1]
    assert events is drawings[-1].events and count > 8
    qtbot.waitUntil(lambda: not events, timeout=5000)


async def test_free_in_steps_lets_a_list_go_a_step_per_pass_of_the_loop(
    monkeypatch: Any,
) -> None:
    import asyncio

    from app.ui.controller import branch_redraw

    monkeypatch.setattr(branch_redraw, "FREED_PER_STEP", 3)
    items = list(range(8))
    branch_redraw.free_in_steps(items)
    assert items == [0, 1, 2, 3, 4]  # the first step at once, from the end
    await asyncio.sleep(0)
    assert items == [0, 1]
    await asyncio.sleep(0)
    assert items == []
