"""The settings in force for a session (``app.core.session.config``): the provider kept while
the connection settings stay, tools and instructions following the settings, the change said."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.core import CoreConfig
from app.core.conversation.history import ContextHistory
from app.core.items import user_message
from app.core.session.config import SessionConfig
from app.core.tokens.counter import TokenCounter
from app.core.tools.mcp.servers import McpServers


def config(tmp_path: Path, **overrides: Any) -> CoreConfig:
    values: dict[str, Any] = {
        "base_url": "http://localhost:1/v1", "api_key": "k", "model": "m",
        "instructions": "Be brief.", "data_dir": tmp_path, "recall": False,
    }
    values.update(overrides)
    return CoreConfig(**values)


def make(tmp_path: Path, **overrides: Any) -> tuple[SessionConfig, ContextHistory]:
    history = ContextHistory(TokenCounter("gpt-4o", allow_download=False), "Be brief.")
    mcp = McpServers(lambda _event: None)
    settings = SessionConfig(config(tmp_path, **overrides), None, mcp)  # type: ignore[arg-type]
    settings.attach(history)
    return settings, history


async def test_the_provider_is_kept_until_the_connection_settings_change(tmp_path: Path) -> None:
    settings, history = make(tmp_path)
    provider = settings.provider()
    assert settings.provider() is provider
    assert settings.apply(config(tmp_path, reasoning_effort="high")) == (
        "Settings applied to this session."
    )
    assert settings.provider() is provider  # a request field, not the connection
    said = settings.apply(config(tmp_path, reasoning_effort="high", model="other"))
    # An empty conversation does not continue (issue 39): it will use the model.
    assert said.startswith("This conversation will use other")
    history.append(user_message("hello"))
    said = settings.apply(config(tmp_path, reasoning_effort="high", model="third"))
    assert said.startswith("This conversation continues with third")
    settings.apply(config(tmp_path, reasoning_effort="high", model="other",
                          base_url="http://localhost:2/v1"))
    assert settings.provider() is not provider
    await settings.close()


def test_tools_and_instructions_follow_the_settings(tmp_path: Path) -> None:
    settings, history = make(tmp_path)
    assert settings.tools.specs() == [] and not settings.tools.enabled
    fixed = history.fixed_tokens
    workspace = tmp_path / "ws"
    workspace.mkdir()
    assert settings.apply(config(tmp_path, workspace=workspace)) == (
        "Settings applied to this session."
    )
    assert settings.tools.enabled and settings.tools.specs()
    with_tools = history.fixed_tokens
    assert with_tools > fixed  # the history counts the tool definitions it is sent with
    settings.apply(config(tmp_path, workspace=workspace, instructions="Be very brief " * 50))
    assert history.fixed_tokens > with_tools
    assert settings.apply(settings.config) == ""  # nothing changed: nothing said
