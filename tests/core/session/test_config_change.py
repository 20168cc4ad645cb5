"""A settings change said in words: the MCP servers' changes named server by server, a tool
always allowed from the approval card said nothing (the card already said it)."""

from __future__ import annotations

from pathlib import Path

from app.core.config import CoreConfig
from app.core.mcp_config import parse_server
from app.core.session.config_change import describe_config_change


def config(tmp_path: Path, **servers: dict[str, object]) -> CoreConfig:
    return CoreConfig(
        base_url="http://127.0.0.1:9/v1", api_key="k", model="m", data_dir=tmp_path,
        mcp_servers=tuple(parse_server(name, entry) for name, entry in servers.items()),
    )


def test_mcp_changes_are_named_server_by_server(tmp_path: Path) -> None:
    old = config(tmp_path, a={"command": "a"}, b={"command": "b"}, c={"command": "c"},
                 d={"command": "d"})
    new = config(tmp_path, a={"command": "a", "disabled": True}, b={"command": "b", "args": ["x"]},
                 c={"command": "c", "disabledTools": ["t"]}, e={"url": "https://e.example/mcp"})
    assert describe_config_change(old, new) == (
        "MCP servers: 'a' turned off, 'b' restarted with its new settings, 'c' offers other "
        "tools, 'e' added, 'd' removed."
    )
    assert describe_config_change(new, old).startswith("MCP servers: 'a' turned on,")


def test_an_always_allowed_tool_needs_no_words_and_other_changes_still_have_them(
    tmp_path: Path,
) -> None:
    old = config(tmp_path, a={"command": "a"})
    allowed = config(tmp_path, a={"command": "a", "alwaysAllow": ["t"]})
    assert describe_config_change(old, allowed) == ""
    assert describe_config_change(allowed, old) == ""
    both = config(tmp_path, a={"command": "a", "alwaysAllow": ["t"]}, b={"command": "b"})
    assert describe_config_change(old, both) == "MCP servers: 'b' added."
    other = both.model_copy(update={"request_timeout": 30.0})
    assert describe_config_change(old, other) == "Settings applied to this session."
