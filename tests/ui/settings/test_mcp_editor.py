"""The dialog that adds or edits one MCP server: what it accepts is what the core reads, the keys
it does not edit are kept, secrets are masked and a value kept in the key store stays there (a
renamed server takes it along). The page that opens it is tested against the real core in
test_mcp_page.py."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QLineEdit

from app.core.mcp_config import SECRET_PLACEHOLDER, parse_server, secret_key
from app.ui.settings.mcp_editor import McpServerEditor

KEPT = {secret_key("gh", "env", "GITHUB_TOKEN"): "ghp_kept_value"}


def editor(qtbot: Any, name: str = "", entry: dict[str, Any] | None = None,
           taken: set[str] | None = None) -> McpServerEditor:
    dialog = McpServerEditor(name, entry or {}, taken=taken or set(),
                             secret=lambda key: KEPT.get(key, ""))
    qtbot.addWidget(dialog)
    return dialog


def test_a_local_server_reads_as_the_core_reads_it_and_refuses_in_words(qtbot: Any) -> None:
    dialog = editor(qtbot, taken={"files"})
    assert not dialog.ok_button.isEnabled() and dialog.problem.text() == "Give the server a name."
    dialog.name.setText("files")
    assert "already configured" in dialog.problem.text()
    dialog.name.setText("notes")
    assert "needs a command" in dialog.problem.text()
    dialog.command.setText("npx")
    dialog.args.setText("-y @modelcontextprotocol/server-filesystem '/home/me/my notes'")
    dialog.timeout.setValue(90)
    assert dialog.ok_button.isEnabled()
    entry = dialog.result_entry()
    assert entry == {"command": "npx", "timeout": 90, "args": [
        "-y", "@modelcontextprotocol/server-filesystem", "/home/me/my notes"]}
    spec = parse_server("notes", entry)
    assert spec.args[-1] == "/home/me/my notes" and spec.timeout == 90


def test_an_http_server_with_a_masked_header(qtbot: Any) -> None:
    dialog = editor(qtbot, "remote", {"url": "ftp://x", "alwaysAllow": ["search"], "x-own": 1})
    assert dialog.kind.currentData() == "http"
    assert "must start with http" in dialog.problem.text()
    dialog.url.setText("https://mcp.example.com/mcp")
    dialog.headers.add_button.click()
    name, value = dialog.headers.rows[0]
    name.setText("Authorization")
    value.setText("Bearer sk-1")
    assert value.echoMode() == QLineEdit.EchoMode.Password
    dialog.headers.show_values.setChecked(True)
    assert value.echoMode() == QLineEdit.EchoMode.Normal
    assert dialog.result_entry() == {
        "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer sk-1"},
        "alwaysAllow": ["search"], "x-own": 1,  # kept: this dialog does not edit them
    }


def test_a_kept_secret_stays_in_the_key_store_and_follows_a_rename(qtbot: Any) -> None:
    entry = {"command": "gh-mcp", "env": {"GITHUB_TOKEN": SECRET_PLACEHOLDER}, "disabled": True}
    dialog = editor(qtbot, "gh", entry, taken={"gh"})
    box = dialog.env.rows[0][1]
    assert box.text() == "" and "key store" in box.placeholderText()
    assert dialog.result_entry()["env"] == {"GITHUB_TOKEN": SECRET_PLACEHOLDER}
    assert dialog.ok_button.isEnabled()  # its own name is not "taken"
    dialog.name.setText("github")
    assert dialog.result_entry()["env"] == {"GITHUB_TOKEN": "ghp_kept_value"}
    box.setText("ghp_new")
    assert dialog.result_entry() == {
        "command": "gh-mcp", "env": {"GITHUB_TOKEN": "ghp_new"}, "disabled": True}
