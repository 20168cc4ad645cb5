"""The session controller works without any window: it opens a session, gates the controls
from the core's events, turns actions into ops and reports what it refuses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.demo import Reply
from app.ui.controller.commands import COMPACT_STREAMING_REASON
from app.ui.controller.session_controller import SessionController

from ..conftest import build_context, run


def test_the_controller_runs_a_session_without_widgets(
    qtbot: Any, qloop: Any, server: Any, tmp_path: Path
) -> None:
    controller = SessionController(build_context(server, tmp_path))
    events: list[Any] = []
    controls: list[Any] = []
    hints: list[str] = []
    controller.event_received.connect(events.append)
    controller.controls_changed.connect(lambda: controls.append(controller.controls()))
    controller.hint.connect(hints.append)
    opened: list[str] = []
    controller.session_opened.connect(opened.append)
    try:
        assert run(qtbot, controller.open_session()) is True
        assert controller.session is not None and opened == [controller.session.id]
        assert controller.controls().compact_enabled
        assert not controller.controls().undo_enabled  # the core said: nothing to undo
        controls.clear()

        server.enqueue(Reply(text="hello back", chunk_size=2, delay_per_chunk=0.01))
        assert controller.send_message("hello")
        # Busy from the moment the message is sent, before the core starts the turn.
        assert controls[0].busy and not controls[0].compact_enabled
        assert controller.compact() is False
        assert hints == [COMPACT_STREAMING_REASON]
        qtbot.waitUntil(lambda: any(e.type == "turn_complete" for e in events), timeout=10_000)

        kinds = [e.type for e in events]
        assert kinds.index("turn_started") < kinds.index("agent_message") < kinds.index(
            "turn_complete"
        )
        assert not controller.busy
        assert controls[-1].compact_enabled and not controls[-1].busy
        assert [e.text for e in events if e.type == "agent_message"] == ["hello back"]
        assert server.requests_to("compact") == []
    finally:
        run(qtbot, controller.close())
        controller.deleteLater()


def test_the_controller_says_when_no_session_is_open(qtbot: Any, qloop: Any, server: Any,
                                                      tmp_path: Path) -> None:
    controller = SessionController(build_context(server, tmp_path))
    problems: list[str] = []
    controller.problem.connect(problems.append)
    assert controller.send_message("hello") is False
    assert problems == ["No session is open yet."]
    assert not controller.busy
    controller.deleteLater()
