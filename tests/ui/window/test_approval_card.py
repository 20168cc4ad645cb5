"""The approval card in the real window: the core against the loopback server, the model calling
a tool of Coco's example MCP server (app/demo/mcp_example.py, started by the session), the card
showing server, tool and arguments, and its buttons answering the core."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from app.demo import Reply, ToolCall

from ..helpers import type_and_send, wait_idle


def example_server(tmp_path: Any) -> dict[str, Any]:
    return {"coco-example": {"command": sys.executable, "args": ["-m", "app.demo.mcp_example"],
                             "cwd": str(tmp_path),
                             # the checkout's app package, as an installed Coco has it
                             "env": {"PYTHONPATH": str(Path(__file__).parents[3])}}}


def ready(window: Any) -> bool:
    servers = window.controller.state.mcp_servers
    assert not any(s.state == "failed" for s in servers), servers
    return [s.state for s in servers] == ["ready"]


def test_the_card_asks_and_allow_once_runs_the_call(
    qtbot: Any, make_window: Any, server: Any, tmp_path: Any
) -> None:
    window = make_window(settings={"mcp_servers": example_server(tmp_path)})
    qtbot.waitUntil(lambda: ready(window), timeout=30_000)
    server.enqueue(Reply(function_calls=[ToolCall(
        "mcp__coco-example__write_note", {"text": "buy oat milk"}, "call_n")]))
    server.enqueue(Reply(text="Noted it."))
    type_and_send(qtbot, window, "Write down: buy oat milk")
    card = window.approval_card
    qtbot.waitUntil(card.isVisible, timeout=10_000)
    assert "write_note" in card.title.text() and "coco-example" in card.title.text()
    assert "buy oat milk" in card.arguments.toPlainText()
    assert card.warning.isVisible()  # write_note declares itself destructive
    card.allow_once.click()
    wait_idle(qtbot, window)
    assert not card.isVisible()
    assert (tmp_path / "notes.txt").read_text() == "buy oat milk\n"
    sent = server.requests_to("responses")[-1].body["input"][-1]
    assert sent["type"] == "function_call_output" and "appended" in sent["output"]


def test_deny_tells_the_model_and_stop_withdraws_the_card(
    qtbot: Any, make_window: Any, server: Any, tmp_path: Any
) -> None:
    window = make_window(settings={"mcp_servers": example_server(tmp_path)})
    qtbot.waitUntil(lambda: ready(window), timeout=30_000)
    call = ToolCall("mcp__coco-example__write_note", {"text": "x"}, "call_d")
    server.enqueue(Reply(function_calls=[call]))
    server.enqueue(Reply(text="Understood, I will not."))
    type_and_send(qtbot, window, "Write x")
    card = window.approval_card
    qtbot.waitUntil(card.isVisible, timeout=10_000)
    card.deny.click()
    wait_idle(qtbot, window)
    assert not (tmp_path / "notes.txt").exists()
    assert "denied" in server.requests_to("responses")[-1].body["input"][-1]["output"]

    server.enqueue(Reply(function_calls=[ToolCall(
        "mcp__coco-example__write_note", {"text": "y"}, "call_s")]))
    type_and_send(qtbot, window, "Write y")
    qtbot.waitUntil(card.isVisible, timeout=10_000)
    window.stop()
    qtbot.waitUntil(lambda: not card.isVisible(), timeout=10_000)
    wait_idle(qtbot, window)
    assert not (tmp_path / "notes.txt").exists()
