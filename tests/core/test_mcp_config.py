"""The mcpServers JSON read as other clients write it; secrets kept out of settings.json."""

from __future__ import annotations

import pytest

from app.core.mcp_config import (
    DEFAULT_TIMEOUT,
    SECRET_PLACEHOLDER,
    McpConfigError,
    import_config,
    parse_server,
    parse_servers,
    read_config_text,
    secret_key,
    secret_names,
    split_secrets,
    with_always_allowed,
    with_server_enabled,
    with_tool_enabled,
)
from app.core.settings import AppSettings, SettingsStore, build_core_config

CLAUDE_DESKTOP = """{"mcpServers": {
  "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
  "remote": {"type": "http", "url": "https://mcp.example.com/mcp",
             "headers": {"Authorization": "Bearer sk-secret-123"}},
  "github": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "ghp_abcdef"}, "disabled": true}
}}"""


def test_a_claude_desktop_config_reads_with_both_transports() -> None:
    servers = read_config_text(CLAUDE_DESKTOP)
    specs, errors = parse_servers(servers)
    assert errors == {}
    files, remote, github = specs
    assert (files.transport, files.command, files.args[0]) == ("stdio", "npx", "-y")
    assert remote.transport == "http" and remote.header_values()["Authorization"].endswith("123")
    assert not github.enabled and files.timeout == DEFAULT_TIMEOUT
    assert "sk-secret-123" not in repr(remote) and "ghp_abcdef" not in repr(github)


def test_bare_and_vs_code_shapes_read_and_bad_text_is_refused_in_words() -> None:
    assert list(read_config_text('{"servers": {"a": {"command": "x"}}}')) == ["a"]
    assert list(read_config_text('{"a": {"url": "http://h/mcp"}}')) == ["a"]
    with pytest.raises(ValueError, match="Not valid JSON"):
        read_config_text("{nope")
    with pytest.raises(ValueError, match="No MCP servers"):
        read_config_text('{"mcpServers": {}}')


@pytest.mark.parametrize(("entry", "words"), [
    ({}, "needs a command"),
    ({"command": "x", "url": "http://h"}, "not both"),
    ({"url": "ftp://h"}, "http://"),
    ({"type": "sse", "url": "http://h/sse"}, "SSE"),
    ({"command": "x", "args": "-y"}, "args"),
    ({"command": "x", "timeout": 0}, "timeout"),
    ([], "JSON object"),
])
def test_a_bad_entry_is_refused_in_words_and_never_hides_the_others(entry, words) -> None:
    with pytest.raises(ValueError, match=words):
        parse_server("bad", entry)
    specs, errors = parse_servers({"bad": entry, "good": {"command": "x"}})
    assert [s.name for s in specs] == ["good"] and words.split()[0] in errors["bad"]


def test_secrets_go_to_the_key_store_and_settings_json_holds_a_placeholder(tmp_path) -> None:
    servers = read_config_text(CLAUDE_DESKTOP)
    clean, secrets = split_secrets(servers)
    assert secrets == {
        secret_key("remote", "headers", "Authorization"): "Bearer sk-secret-123",
        secret_key("github", "env", "GITHUB_TOKEN"): "ghp_abcdef",
    }
    assert clean["remote"]["headers"] == {"Authorization": SECRET_PLACEHOLDER}
    store = SettingsStore(tmp_path)
    store.save(AppSettings(mcp_servers=clean))
    text = store.path.read_text()
    assert '"mcpServers"' in text and "sk-secret" not in text and "ghp_" not in text
    loaded, warnings = store.load()
    assert warnings == [] and loaded.mcp_servers == clean
    config = build_core_config(loaded, api_key="", data_dir=tmp_path, env={},
                               demo_url="http://127.0.0.1:1/v1", secret=secrets.get)
    remote = next(s for s in config.mcp_servers if s.name == "remote")
    assert remote.header_values() == {"Authorization": "Bearer sk-secret-123"}
    assert "sk-secret" not in repr(config) and "sk-secret" not in config.model_dump_json()


def test_edits_turn_servers_and_tools_on_and_off_and_keep_every_other_key() -> None:
    servers = {"files": {"command": "npx", "args": ["a"], "x-other": 1}}
    off = with_server_enabled(servers, "files", False)
    assert off["files"] == {"command": "npx", "args": ["a"], "x-other": 1, "disabled": True}
    assert servers["files"].get("disabled") is None  # the given object is left alone
    assert not parse_server("files", off["files"]).enabled
    assert with_server_enabled(off, "files", True) == servers
    tools = with_tool_enabled(with_tool_enabled(servers, "files", "w", False), "files", "r", False)
    assert parse_server("files", tools["files"]).disabled_tools == {"w", "r"}
    assert with_tool_enabled(tools, "files", "w", True)["files"]["disabledTools"] == ["r"]
    allowed = with_always_allowed(servers, "files", "read", True)
    assert with_always_allowed(allowed, "files", "read", True) == allowed  # never twice
    assert allowed["files"]["alwaysAllow"] == ["read"]
    assert with_always_allowed(allowed, "files", "read", False) == servers
    with pytest.raises(McpConfigError, match="No MCP server 'nope'"):
        with_server_enabled(servers, "nope", True)


def test_an_import_adds_replaces_and_names_what_it_left_out() -> None:
    existing = {"files": {"command": "old"}, "mine": {"command": "keep"}}
    merged, said = import_config(existing, CLAUDE_DESKTOP.replace(
        '"github"', '"broken": {"args": []}, "github"'))
    assert merged["mine"] == {"command": "keep"}
    assert merged["files"]["command"] == "npx" and "broken" not in merged
    assert set(merged) == {"files", "mine", "remote", "github"}
    assert said.startswith("Added 'remote', 'github'. Replaced 'files'. Left out:")
    assert "'broken': needs a command" in said
    with pytest.raises(McpConfigError, match="Nothing imported"):
        import_config(existing, '{"mcpServers": {"x": {"url": "ftp://a"}}}')
    with pytest.raises(McpConfigError, match="Not valid JSON"):
        import_config(existing, "{nope")


def test_secret_names_are_the_key_store_names_of_every_env_and_header_value() -> None:
    servers = read_config_text(CLAUDE_DESKTOP)
    assert secret_names(servers) == {
        secret_key("remote", "headers", "Authorization"), secret_key("github", "env", "GITHUB_TOKEN")
    }
    assert secret_names({"bad": "not an object", "none": {"env": None}}) == set()
