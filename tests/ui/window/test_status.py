"""The status bar: a passing message (a control's hint) hides the model label for as long as it
shows, even when something shows the label again meanwhile (the bar laid out anew when a
compaction ends drew the hint over the label at 1400×900)."""

from __future__ import annotations

from typing import Any

from ..helpers import type_and_send, wait_idle


def test_a_hint_keeps_the_model_label_hidden_until_it_goes(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    from app.demo import Reply

    window = make_window()
    server.enqueue(Reply(text="Hi."))
    type_and_send(qtbot, window, "hello")
    wait_idle(qtbot, window)
    status, label = window.statusBar(), window.model_label
    qtbot.waitUntil(label.isVisible)
    status.showMessage(window.compact_action.statusTip())
    assert not label.isVisible()
    label.show()  # shown again while the hint is up
    assert not label.isVisible()
    status.clearMessage()
    assert label.isVisible()  # back once the hint went
