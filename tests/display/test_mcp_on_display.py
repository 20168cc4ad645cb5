"""An MCP tool call on a real display (issue 37): the example server's destructive tool asks
with the approval card; the pointer clicks Allow once and the tool runs, then at the next call
Deny, and the model reads the denial. Real input events, the real window and a real MCP server
on stdio."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .conftest import wait_for

pytestmark = pytest.mark.display

WRITE = "mcp__coco-example__write_note"


def test_the_approval_card_is_answered_with_the_pointer(probe: Any, tmp_path: Path) -> None:
    (tmp_path / "mcp").write_text("", encoding="utf-8")
    app = probe([
        "Hello.",
        f'CALL {WRITE} {{"text": "buy oat milk"}}', "Noted.",
        f'CALL {WRITE} {{"text": "sell the car"}}', "Not written: you said no.",
    ])
    notes = tmp_path / "notes" / "notes.txt"

    def send(text: str) -> None:
        app.key("ctrl+l")  # the composer
        app.type(text)
        app.key("Return")

    # The session's first turn starts its servers; Settings then shows this one ready.
    send("hi")
    wait_for(lambda: app.ask("rows")["servers"] == ["ready"] and app.idle(),
             "the first answer, and the MCP server ready")
    for question, decision in (("note: buy oat milk", "once"), ("note: sell the car", "deny")):
        send(question)
        card = wait_for(lambda: (c := app.ask("rows")["card"])["visible"] and c, "the card")
        assert "'write_note' of the MCP server 'coco-example'" in card["title"]
        app.click("approval", decision)
        wait_for(lambda: not app.ask("rows")["card"]["visible"] and app.idle(),
                 f"the turn after {decision}")
    calls = app.ask("rows")["tools"]
    assert [call["name"] for call in calls] == [WRITE, WRITE]
    assert "appended" in calls[0]["output"] and "denied" in calls[1]["output"].lower()
    assert notes.read_text(encoding="utf-8") == "buy oat milk\n"  # the denied one never ran
    assert [text for role, text in app.rows() if role == "assistant"] == [
        "Hello.", "Noted.", "Not written: you said no.",
    ]
