"""Coco's real window for a display test, in a process of its own on the test's X server,
with a probe that tells the test where a control is on the screen and what the transcript
shows. The test moves the pointer, clicks and types with xdotool (real input events); the
probe never clicks or types. The model is the scripted demo server, answering in order.

Run as ``python -m tests.display.window_probe <folder> <answer>...``; the test writes a
question to ``<folder>/ask-<n>`` (``where <control> <message text>`` or ``rows``) and reads the
answer from ``<folder>/answer-<n>`` (JSON). An answer ``CALL <tool> <JSON arguments>`` is the
model calling that tool; with ``<folder>/mcp``, Coco's example MCP server is configured (its
notes written under ``<folder>/notes``) and the approval card's buttons can be asked for
(``where approval once``, ``deny``)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import qasync
from PySide6.QtCore import QPoint, QTimer
from PySide6.QtWidgets import QApplication


def rows(window: Any) -> list[dict[str, Any]]:
    return [
        {"role": row.role, "text": row.text, "editing": row.editing,
         "branches": None if row.branches is None else [row.branches.index,
                                                        len(row.branches.siblings)],
         "attachments": [str(a.get("name")) for a in row.attachments]}
        for row in window.transcript.message_rows()
    ]


def chips(window: Any) -> list[dict[str, Any]]:
    """The composer's attachment chips: file name, label, whether the core has read it."""
    return [
        {"name": Path(chip.path).name, "label": chip.label.text(), "ready": chip.ready,
         "error": chip.error}
        for chip in window.composer.attachments.chips
    ]


def tools(window: Any) -> list[dict[str, Any]]:
    """The transcript's tool calls: name and output (None while it runs)."""
    from app.ui.transcript.row_models import ToolRow

    return [{"name": row.name, "output": row.output}
            for row in window.transcript.rows if isinstance(row, ToolRow)]


def card(window: Any) -> dict[str, Any]:
    """The approval card: whether it shows, and what it says."""
    shown = window.approval_card
    return {"visible": shown.isVisible(), "title": shown.title.text(),
            "enabled": shown.allow_once.isEnabled()}


def where(window: Any, control: str, text: str) -> list[int] | None:
    """The screen position of ``control`` (edit, previous, next) of the message ``text``, of
    the composer's text box or the transcript (``composer``, ``transcript``), or of the
    approval card's button ``text`` (``approval``: once, always, deny)."""
    if control == "approval":
        shown = window.approval_card
        button = {"once": shown.allow_once, "always": shown.allow_always,
                  "deny": shown.deny}[text]
        if not (shown.isVisible() and button.isVisible() and button.isEnabled()):
            return None
        point = button.mapToGlobal(QPoint(button.width() // 2, button.height() // 2))
        return [point.x(), point.y()]
    if control in ("composer", "transcript"):
        widget = window.composer.edit if control == "composer" else window.transcript
        point = widget.mapToGlobal(QPoint(widget.width() // 2, widget.height() // 2))
        return [point.x(), point.y()]
    row = next((r for r in window.transcript.message_rows() if r.text == text), None)
    if row is None or row._widget is None:
        return None
    widget = getattr(row.widget.branch, "action" if control == "edit" else control)
    if not widget.isVisible():
        return None
    point = widget.mapToGlobal(QPoint(widget.width() // 2, widget.height() // 2))
    return [point.x(), point.y()]


def main(folder: Path, answers: list[str]) -> None:
    from app.core.settings import AppSettings, SettingsStore
    from app.core.system.secrets import SecretStore
    from app.demo import ModelServer, Reply, ToolCall
    from app.ui.window.app_context import AppContext
    from app.ui.window.main_window import MainWindow

    app = QApplication([])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    server = ModelServer(mode="scripted").start()
    for n, answer in enumerate(answers):
        if answer.startswith("CALL "):
            _call, tool, arguments = answer.split(" ", 2)
            server.enqueue(Reply(function_calls=[ToolCall(tool, json.loads(arguments), f"c{n}")]))
        else:
            server.enqueue(Reply(text=answer))
    config = folder / "config"
    servers = {}
    if (folder / "mcp").exists():
        servers = {"coco-example": {
            "command": sys.executable,
            "args": ["-m", "app.demo.mcp_example", "--notes-dir", str(folder / "notes")],
        }}
    SettingsStore(config).save(AppSettings(
        provider="custom", base_url=server.url, model="scripted", context_window=100_000,
        mcpServers=servers,
    ))
    secrets = SecretStore(config, use_keyring=False)
    secrets.set_api_key(server.url, "sk-test-not-a-real-key")
    context = AppContext(
        config_dir=config, data_dir=folder / "data", secrets=secrets, env={},
        start_demo=lambda: server.url, config_overrides={"tokenizer_download": False},
    )
    window = MainWindow(context)
    window.resize(1000, 700)
    window.show()
    asked = 0

    def poll() -> None:
        nonlocal asked
        question = folder / f"ask-{asked}"
        if not question.exists():
            return
        words = question.read_text(encoding="utf-8").split(" ", 2)
        if words[0] == "rows":
            answer: Any = {"rows": rows(window), "busy": window.busy, "chips": chips(window),
                           "tools": tools(window), "card": card(window),
                           "servers": [s.state for s in window.controller.state.mcp_servers]}
        else:
            answer = where(window, words[1], words[2])
        (folder / f"answer-{asked}.tmp").write_text(json.dumps(answer), encoding="utf-8")
        (folder / f"answer-{asked}.tmp").rename(folder / f"answer-{asked}")
        asked += 1

    timer = QTimer()
    timer.timeout.connect(poll)
    timer.start(50)
    closed = loop.create_future()
    window.closed.connect(lambda: closed.done() or closed.set_result(None))

    async def serve() -> None:
        # One run of the loop for the window's whole life, as the app runs it: a task started
        # in ``run_until_complete`` then left to a ``run_forever`` never spawned its process
        # (an MCP server's) under qasync.
        await window.open_session(None)
        (folder / "ready").write_text("", encoding="utf-8")
        await closed

    with loop:
        loop.run_until_complete(serve())
    server.stop()


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2:])
