"""Choosing the provider a configuration asks for."""

from __future__ import annotations

from ..config import CoreConfig
from .base import ModelProvider
from .chat import ChatCompletionsProvider
from .responses import ResponsesProvider


def make_provider(config: CoreConfig) -> ModelProvider:
    """The provider for ``config.wire_api`` (``responses`` or ``chat``) at ``config.base_url``."""
    api_key = config.api_key.get_secret_value()
    if config.wire_api == "chat":
        return ChatCompletionsProvider(config.base_url, api_key, timeout=config.request_timeout)
    return ResponsesProvider(config.base_url, api_key, timeout=config.request_timeout)
