"""The settings in force for one session: its ``CoreConfig``, the tools built from it and the
provider connected with it, replaced together when the front end updates the settings."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from ..providers.factory import make_provider
from ..recall import SessionTools
from ..tools.mcp.servers import McpServers
from .config_change import describe_config_change

if TYPE_CHECKING:
    from ..config import CoreConfig
    from ..conversation.history import ContextHistory
    from ..providers.base import ModelProvider
    from ..recall import RecallTool


class SessionConfig:
    """The configuration, tools and provider one session uses now."""

    def __init__(self, config: CoreConfig, recall: RecallTool, mcp: McpServers) -> None:
        self.config = config
        self._recall = recall
        self._history: ContextHistory | None = None
        self.mcp = mcp
        _configure_mcp(mcp, config)
        self.tools = SessionTools(config, recall, mcp)
        self._provider: ModelProvider | None = None
        # The server and model that said they cannot call tools (None: none said so).
        self._without_tools: tuple[str, str] | None = None

    def attach(self, history: ContextHistory) -> None:
        """``history`` (made with the instructions in force) is the active branch's from now
        on: the tools and later changes of the settings follow into it."""
        self._history = history
        history.set_tools(self.tools.specs())

    def no_tool_calls(self) -> None:
        """The server says this model cannot call tools: none is offered to it from now on
        (another server or model gets them again)."""
        self._without_tools = (self.config.base_url, self.config.model)
        self._rebuild_tools()

    def _rebuild_tools(self) -> None:
        config = self.config
        calls = self._without_tools != (config.base_url, config.model)
        self.tools = SessionTools(config, self._recall, self.mcp, calls_tools=calls)
        if self._history is not None:
            self._history.set_tools(self.tools.specs())

    def provider(self) -> ModelProvider:
        """The provider for the settings in force, made on first use."""
        if self._provider is None:
            self._provider = make_provider(self.config)
        return self._provider

    def apply(self, config: CoreConfig) -> str:
        """Put ``config`` in force: a provider for other connection settings is made afresh
        (the stale one closed), tools and instructions follow. What changed, in words ("" when
        nothing the session uses did)."""
        old = self.config
        self.config = config
        if (old.base_url, old.api_key, old.wire_api, old.request_timeout) != (
            config.base_url,
            config.api_key,
            config.wire_api,
            config.request_timeout,
        ) and self._provider is not None:
            stale = self._provider
            self._provider = None
            asyncio.get_running_loop().create_task(stale.close())
        history = self._history
        if _mcp_settings(old) != _mcp_settings(config):
            _configure_mcp(self.mcp, config)
        if SessionTools.changed(old, config) or (old.base_url, old.model) != (
            config.base_url, config.model
        ):
            self._rebuild_tools()
        if history is not None and old.instructions != config.instructions:
            history.set_instructions(config.instructions)
        started = history is not None and len(history) > 0
        return describe_config_change(old, config, started=started)

    async def close(self) -> None:
        """Stop the MCP servers; close the provider's connections, if one was made."""
        await self.mcp.close()
        if self._provider is not None:
            await self._provider.close()


def _mcp_settings(config: CoreConfig) -> tuple[object, ...]:
    return (config.mcp_servers, config.mcp_errors, config.mcp_allow_read_only)


def _configure_mcp(mcp: McpServers, config: CoreConfig) -> None:
    mcp.configure(config.mcp_servers, dict(config.mcp_errors), config.mcp_allow_read_only)
