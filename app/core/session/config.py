"""The settings in force for one session: its ``CoreConfig``, the tools built from it and the
provider connected with it, replaced together when the front end updates the settings."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from ..providers.factory import make_provider
from ..recall import SessionTools
from .config_change import describe_config_change

if TYPE_CHECKING:
    from ..config import CoreConfig
    from ..conversation.history import ContextHistory
    from ..providers.base import ModelProvider
    from ..recall import RecallTool


class SessionConfig:
    """The configuration, tools and provider one session uses now."""

    def __init__(self, config: CoreConfig, recall: RecallTool, history: ContextHistory) -> None:
        self.config = config
        self._recall = recall
        self._history = history
        self.tools = SessionTools(config, recall)
        history.set_tools(self.tools.specs())
        self._provider: ModelProvider | None = None

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
        if SessionTools.changed(old, config):
            self.tools = SessionTools(config, self._recall)
            self._history.set_tools(self.tools.specs())
        if old.instructions != config.instructions:
            self._history.set_instructions(config.instructions)
        return describe_config_change(old, config, started=len(self._history) > 0)

    async def close(self) -> None:
        """Close the provider's connections, if one was made."""
        if self._provider is not None:
            await self._provider.close()
