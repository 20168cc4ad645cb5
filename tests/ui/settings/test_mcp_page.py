"""The settings panel's MCP page in the real window: the core against the loopback model server
and Coco's example MCP server (app/demo/mcp_example.py) started by the session. The page shows
the states the core reports, turns servers and tools on and off, adds a server (secrets masked,
kept in the key store), imports a config by paste or file, and shows and revokes the tools the
approval card allowed always (written to settings.json, held after a restart)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QLineEdit

from app.core.mcp_config import SECRET_PLACEHOLDER, secret_key
from app.core.settings import SettingsStore
from app.demo import Reply, ToolCall

from ..helpers import type_and_send, wait_idle

ROOT = Path(__file__).parents[3]


def example_entry(tmp_path: Path) -> dict[str, Any]:
    return {"command": sys.executable, "args": ["-m", "app.demo.mcp_example"],
            "cwd": str(tmp_path), "env": {"PYTHONPATH": str(ROOT)}}


def saved(tmp_path: Path) -> dict[str, Any]:
    settings, warnings = SettingsStore(tmp_path / "config").load()
    assert warnings == []
    return settings.mcp_servers


def server_row(dialog: Any, name: str) -> Any:
    tree = dialog.mcp_tree
    rows = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
    return next(row for row in rows if row.text(0) == name)


def tool_row(dialog: Any, server: str, tool: str) -> Any:
    row = server_row(dialog, server)
    return next(row.child(i) for i in range(row.childCount()) if row.child(i).text(0) == tool)


def state(dialog: Any, name: str) -> str:
    try:
        return str(server_row(dialog, name).text(1))
    except StopIteration:
        return ""


def core_state(window: Any, name: str) -> Any:
    return next((s for s in window.controller.state.mcp_servers if s.name == name), None)


def test_the_page_shows_live_states_and_turns_servers_and_tools_on_and_off(
    qtbot: Any, make_window: Any, tmp_path: Path
) -> None:
    window = make_window(settings={"mcp_servers": {"coco-example": example_entry(tmp_path),
                                                   "bad": {"args": ["x"]}}})
    dialog = window.open_settings()
    qtbot.waitUntil(lambda: state(dialog, "coco-example") == "ready · 3 tools", timeout=30_000)
    assert state(dialog, "bad").startswith("not valid: MCP server 'bad': needs a command")
    server_row(dialog, "coco-example").setExpanded(True)
    write = tool_row(dialog, "coco-example", "write_note")
    assert write.checkState(0) == Qt.CheckState.Checked
    assert "asks first" in write.text(1)
    assert tool_row(dialog, "coco-example", "word_count").text(1) == "read-only"

    write.setCheckState(0, Qt.CheckState.Unchecked)
    assert "applies on Apply or Save" in state(dialog, "coco-example")
    # The ticked item is changed in place, never replaced while Qt is still changing it
    # (replacing it in the handler of its own change crashed the app now and then).
    assert tool_row(dialog, "coco-example", "write_note") is write
    dialog.apply_button.click()
    assert saved(tmp_path)["coco-example"]["disabledTools"] == ["write_note"]
    qtbot.waitUntil(lambda: not {t.name: t.enabled for t in core_state(
        window, "coco-example").tools}["write_note"], timeout=10_000)
    assert state(dialog, "coco-example") == "ready · 3 tools"
    assert server_row(dialog, "coco-example").isExpanded()  # the new states kept it open

    server_row(dialog, "coco-example").setCheckState(0, Qt.CheckState.Unchecked)
    dialog.apply_button.click()
    assert saved(tmp_path)["coco-example"]["disabled"] is True
    qtbot.waitUntil(lambda: state(dialog, "coco-example") == "off", timeout=10_000)
    assert core_state(window, "coco-example").state == "disabled"

    server_row(dialog, "coco-example").setCheckState(0, Qt.CheckState.Checked)
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert "disabled" not in saved(tmp_path)["coco-example"]
    qtbot.waitUntil(lambda: getattr(core_state(window, "coco-example"), "state", "") == "ready",
                    timeout=30_000)


def test_a_server_added_by_hand_keeps_its_secret_masked_and_shows_why_it_failed(
    qtbot: Any, make_window: Any, tmp_path: Path
) -> None:
    window = make_window()
    dialog = window.open_settings()
    dialog.mcp_add.click()
    editor = dialog.mcp_editor
    assert not editor.ok_button.isEnabled()  # no name, no command
    editor.name.setText("broken")
    editor.command.setText(sys.executable)
    editor.args.setText("-c \"import sys; sys.stderr.write('missing the TOKEN variable\\n'); "
                        "sys.exit(3)\"")
    editor.env.add_button.click()
    key, value = editor.env.rows[0]
    key.setText("TOKEN")
    value.setText("s3cret-value-77")
    assert value.echoMode() == QLineEdit.EchoMode.Password
    assert editor.ok_button.isEnabled(), editor.problem.text()
    editor.ok_button.click()
    assert state(dialog, "broken").startswith("not started yet")
    dialog.apply_button.click()

    raw = (tmp_path / "config" / "settings.json").read_text(encoding="utf-8")
    assert "s3cret-value-77" not in raw
    assert saved(tmp_path)["broken"]["env"] == {"TOKEN": SECRET_PLACEHOLDER}
    assert window.context.secrets.get_secret(secret_key("broken", "env", "TOKEN")) == (
        "s3cret-value-77")
    qtbot.waitUntil(lambda: state(dialog, "broken").startswith("failed"), timeout=30_000)
    dialog.mcp_tree.setCurrentItem(server_row(dialog, "broken"))
    details = dialog.mcp_details.text()
    assert "missing the TOKEN variable" in details and "TOKEN=••••" in details
    assert "s3cret-value-77" not in details

    dialog.mcp_edit.click()  # the kept value reads as an empty box that keeps it
    editor = dialog.mcp_editor
    assert editor.env.rows[0][1].text() == "" and "key store" in (
        editor.env.rows[0][1].placeholderText())
    assert editor.result_entry()["env"] == {"TOKEN": SECRET_PLACEHOLDER}
    editor.reject()
    dialog.mcp_remove.click()
    dialog.apply_button.click()
    assert saved(tmp_path) == {}
    assert window.context.secrets.get_secret(secret_key("broken", "env", "TOKEN")) == ""
    qtbot.waitUntil(lambda: core_state(window, "broken") is None, timeout=10_000)
    dialog.reject()


def test_configs_import_by_paste_and_file_with_problems_in_words(
    qtbot: Any, make_window: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    window = make_window()
    dialog = window.open_settings()
    paste = dialog._mcp_import_from_paste()
    paste.text.setPlainText("{not json")
    paste.import_button.click()
    assert paste.isVisible() and "Not valid JSON" in paste.problem.text()
    paste.text.setPlainText(json.dumps({"mcpServers": {
        "notes": example_entry(tmp_path), "broken": {"args": ["x"]}}}))
    paste.import_button.click()
    assert not paste.isVisible()
    said = dialog.mcp_message.text()
    assert said.startswith("Added 'notes'.") and "'broken': needs a command" in said
    dialog.apply_button.click()
    assert set(saved(tmp_path)) == {"notes"}
    qtbot.waitUntil(lambda: state(dialog, "notes") == "ready · 3 tools", timeout=30_000)

    claude = tmp_path / "claude_desktop_config.json"
    claude.write_text(json.dumps({"mcpServers": {"remote": {
        "type": "http", "url": "https://mcp.example.com/mcp",
        "headers": {"Authorization": "Bearer sk-imported-1"}}}}), encoding="utf-8")
    monkeypatch.setattr(QFileDialog, "getOpenFileName",
                        staticmethod(lambda *_a, **_k: (str(claude), "")))
    dialog.mcp_import_file.click()
    assert dialog.mcp_message.text().startswith("Added 'remote'.")
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert saved(tmp_path)["remote"]["headers"] == {"Authorization": SECRET_PLACEHOLDER}
    assert "sk-imported-1" not in (tmp_path / "config" / "settings.json").read_text()

    claude.write_bytes(b"\xff\xfe not text")
    dialog = window.open_settings()
    dialog.mcp_import_file.click()
    assert "not UTF-8 text" in dialog.mcp_message.text()
    dialog.reject()


def test_always_allow_is_saved_holds_after_a_restart_and_is_revoked_on_the_page(
    qtbot: Any, make_window: Any, server: Any, tmp_path: Path
) -> None:
    window = make_window(settings={"mcp_servers": {"coco-example": example_entry(tmp_path)}})
    qtbot.waitUntil(lambda: getattr(core_state(window, "coco-example"), "state", "") == "ready",
                    timeout=30_000)
    dialog = window.open_settings()  # open meanwhile: its later Save keeps the allowance
    call = ToolCall("mcp__coco-example__write_note", {"text": "one"}, "c1")
    server.enqueue(Reply(function_calls=[call]))
    server.enqueue(Reply(text="Noted."))
    type_and_send(qtbot, window, "Write one")
    qtbot.waitUntil(window.approval_card.isVisible, timeout=10_000)
    window.approval_card.allow_always.click()
    wait_idle(qtbot, window)
    assert saved(tmp_path)["coco-example"]["alwaysAllow"] == ["write_note"]
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert saved(tmp_path)["coco-example"]["alwaysAllow"] == ["write_note"]
    window.close()
    qtbot.waitUntil(lambda: window._close_done, timeout=10_000)

    again = make_window(root=tmp_path, configure=False)  # Coco started again
    qtbot.waitUntil(lambda: getattr(core_state(again, "coco-example"), "state", "") == "ready",
                    timeout=30_000)
    server.enqueue(Reply(function_calls=[ToolCall(
        "mcp__coco-example__write_note", {"text": "two"}, "c2")]))
    server.enqueue(Reply(text="Noted."))
    type_and_send(qtbot, again, "Write two")
    wait_idle(qtbot, again)
    assert (tmp_path / "notes.txt").read_text() == "one\ntwo\n"  # ran unasked

    dialog = again.open_settings()
    row = tool_row(dialog, "coco-example", "write_note")
    assert row.text(1) == "always allowed"
    dialog.mcp_tree.setCurrentItem(row)
    assert dialog.mcp_revoke.isEnabled()
    dialog.mcp_revoke.click()
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert "alwaysAllow" not in saved(tmp_path)["coco-example"]
    server.enqueue(Reply(function_calls=[ToolCall(
        "mcp__coco-example__write_note", {"text": "three"}, "c3")]))
    server.enqueue(Reply(text="Not noted."))
    type_and_send(qtbot, again, "Write three")
    qtbot.waitUntil(again.approval_card.isVisible, timeout=10_000)
    again.approval_card.deny.click()
    wait_idle(qtbot, again)
    assert (tmp_path / "notes.txt").read_text() == "one\ntwo\n"
