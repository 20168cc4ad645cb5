"""The images a tool returned, in the real window: a real MCP server's tool (the fault server's
``picture``, a 24x16 red PNG) called by the model on the loopback server; its thumbnail under
the tool's title (collapsed too), opening at full size, the same on resume, and exported beside
the Markdown and the JSON."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from app.demo import Reply, ToolCall
from app.ui.transcript.row_models import TOOL_IMAGES_INDENT

from ...helpers import type_and_send, wait_idle

FAULT_SERVER = Path(__file__).parents[3] / "core" / "tools" / "mcp" / "fault_server.py"


def _settings(tmp_path: Path) -> dict[str, Any]:
    return {"mcp_servers": {"faulty": {
        "command": sys.executable, "args": [str(FAULT_SERVER)],
        "env": {"MARK_DIR": str(tmp_path)}, "timeout": 30,
    }}}


def _ready(window: Any) -> bool:
    servers = window.controller.state.mcp_servers
    assert not any(s.state == "failed" for s in servers), servers
    return [s.state for s in servers] == ["ready"]


def _strip(qtbot: Any, window: Any) -> Any:
    row = window.transcript.tool_row("c_pic")
    assert row is not None
    window.transcript.scroll_to_row(row)
    qtbot.waitUntil(lambda: row._widget is not None and row.widget.attachments is not None)
    return row.widget.attachments


def _picture_turn(qtbot: Any, window: Any, server: Any) -> None:
    qtbot.waitUntil(lambda: _ready(window), timeout=30_000)
    server.enqueue(Reply(function_calls=[ToolCall("mcp__faulty__picture", {}, "c_pic")]))
    server.enqueue(Reply(text="A red rectangle."))
    type_and_send(qtbot, window, "Draw me something")  # read-only: runs unasked
    qtbot.waitUntil(lambda: window.transcript.message_rows("assistant") != [], timeout=30_000)
    wait_idle(qtbot, window, timeout=30_000)


def test_a_tools_image_shows_under_its_title_and_opens(
    qtbot: Any, make_window: Any, server: Any, tmp_path: Path
) -> None:
    window = make_window(settings=_settings(tmp_path))
    _picture_turn(qtbot, window, server)

    row = window.transcript.tool_row("c_pic")
    assert not row.expanded  # shown without opening the call
    strip = _strip(qtbot, window)
    [thumb] = strip.thumbnails
    assert thumb.shown["name"] == "mcp__faulty__picture-image-1.png"
    assert (thumb.width(), thumb.height()) == (24, 16)  # never enlarged
    assert strip.isVisible() and not row.widget.details.isVisibleTo(row.widget)
    # The row is as tall as its header and thumbnail (they came after the call was shown).
    assert row.widget.height() == row.widget.height_for(row.widget.width())
    assert strip.geometry().bottom() < row.widget.height() and strip.height() >= thumb.height()
    assert strip.geometry().top() >= row.widget.title_label.geometry().bottom()
    assert thumb.geometry().left() >= TOOL_IMAGES_INDENT
    qtbot.waitUntil(lambda: thumb.loaded, timeout=5000)
    assert thumb.icon().pixmap(24, 16).toImage().pixelColor(5, 5).red() > 200

    qtbot.mouseClick(thumb, Qt.MouseButton.LeftButton)
    viewer = strip.viewer
    assert viewer is not None and viewer.windowTitle() == "mcp__faulty__picture-image-1.png"
    qtbot.waitUntil(lambda: viewer.loaded, timeout=5000)
    viewer.close()

    row.set_expanded(True)  # expanded, the thumbnail stays where it was, above the output
    qtbot.waitUntil(lambda: row.widget.details.isVisible())
    assert _strip(qtbot, window).geometry().bottom() <= row.widget.details.geometry().top()


def test_on_resume_the_image_shows_again_and_exports_beside_the_transcript(
    qtbot: Any, make_window: Any, server: Any, tmp_path: Path
) -> None:
    window = make_window(settings=_settings(tmp_path), root=tmp_path / "profile")
    _picture_turn(qtbot, window, server)
    session_id = window.session.id
    window.close()

    reopened = make_window(
        settings=_settings(tmp_path), root=tmp_path / "profile", session_id=session_id
    )
    [thumb] = _strip(qtbot, reopened).thumbnails
    assert (thumb.width(), thumb.height()) == (24, 16)
    qtbot.waitUntil(lambda: thumb.loaded, timeout=5000)
    stored = Path(thumb.shown["path"])

    out = tmp_path / "out"
    out.mkdir()
    reopened.choose_export_path = lambda kind: (out / "trip.md", "markdown")
    reopened.export_md_action.trigger()
    markdown = (out / "trip.md").read_text(encoding="utf-8")
    link = f"![mcp__faulty__picture-image-1.png](<trip.files/{stored.name}>)"
    assert "**Tool output**" in markdown and link in markdown
    assert (out / "trip.files" / stored.name).read_bytes() == stored.read_bytes()

    reopened.choose_export_path = lambda kind: (out / "trip.json", "json")
    reopened.export_json_action.trigger()
    document = json.loads((out / "trip.json").read_text(encoding="utf-8"))
    [output] = [e["item"] for e in document["transcript"]
                if e.get("kind") == "item" and e["item"].get("call_id") == "c_pic"
                and e["item"].get("type") == "function_call_output"]
    [image] = output["coco_images"]
    assert image["export_path"] == f"trip.files/{image['file']}"
    assert (out / image["export_path"]).is_file()
