"""Carried notes in the window (issue 23): the marker says what was carried over and lists it
when expanded, live and after reopening; the Model view names the block; the setting in the
panel turns it off."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from app.core.settings import SettingsStore
from app.demo import Reply

from ..helpers import type_and_send, wait_idle

FILLER = "We went on talking about the plan and what to do next for a good while. " * 36
FACT = "The staging gateway listens on port 8443."


def send(qtbot: Any, window: Any, server: Any, text: str, reply: str = "ok") -> None:
    server.enqueue(Reply(text=reply))
    type_and_send(qtbot, window, text)
    wait_idle(qtbot, window)


def compacted_window(qtbot: Any, make_window: Any, server: Any, **settings: Any) -> Any:
    window = make_window(settings={"context_window": 4_096, **settings})
    send(qtbot, window, server, f"{FILLER} {FACT} {FILLER}")
    send(qtbot, window, server, FILLER)
    send(qtbot, window, server, FILLER)
    send(qtbot, window, server, "/compact", reply="Nothing specific.")
    return window


def test_the_marker_says_what_was_carried_and_lists_it(
    qtbot: Any, make_window: Any, server: Any, tmp_path: Path
) -> None:
    window = compacted_window(qtbot, make_window, server)
    marker = window.transcript.compaction_rows()[0]
    assert "1 note carried over" in marker.info_label.text()
    qtbot.mouseClick(marker.summary_button, Qt.MouseButton.LeftButton)
    shown = marker.summary_view.toPlainText()
    assert "Nothing specific." in shown and FACT in shown

    # The Model view names the block where the model reads it.
    window.model_view_action.trigger()
    panel = window.model_view
    qtbot.waitUntil(lambda: any(r["kind"] == "carried notes" for r in panel.rows), timeout=5000)
    block = next(r for r in panel.rows if r["kind"] == "carried notes")
    assert FACT in block["text"]

    # Reopened, the marker says the same (it comes from the recorded marker).
    session_id = window.session.id
    info = marker.info
    reopened = make_window(root=tmp_path, session_id=session_id)
    again = reopened.transcript.compaction_rows()[0]
    assert again.info == info


def test_the_setting_turns_the_notes_off(
    qtbot: Any, make_window: Any, server: Any, tmp_path: Path
) -> None:
    window = make_window()
    dialog = window.open_settings()
    assert dialog.carry_notes.isChecked()  # on by default
    dialog.carry_notes.setChecked(False)
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    saved, _ = SettingsStore(tmp_path / "config").load()
    assert saved.carry_notes is False
    qtbot.waitUntil(lambda: window.session.config.carry_notes is False, timeout=5000)


def test_with_the_setting_off_the_marker_carries_nothing(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = compacted_window(qtbot, make_window, server, carry_notes=False)
    marker = window.transcript.compaction_rows()[0]
    assert "carried over" not in marker.info_label.text()
