"""Choosing the provider a configuration asks for."""

from __future__ import annotations

from ..config import CoreConfig
from .base import ModelProvider


def make_provider(config: CoreConfig) -> ModelProvider:
    """The provider for ``config.wire_api`` (``responses`` or ``chat``) at ``config.base_url``.

    The provider modules (and with them the ``openai`` package, about 0.4 s to import) load
    on first use, not when the app starts.
    """
    api_key = config.api_key.get_secret_value()
    if config.wire_api == "chat":
        from ..tokens.calibration import calibration_store
        from .chat import ChatCompletionsProvider

        return ChatCompletionsProvider(
            config.base_url,
            api_key,
            timeout=config.request_timeout,
            calibration=calibration_store(config.data_dir),
        )
    from .responses import ResponsesProvider

    return ResponsesProvider(config.base_url, api_key, timeout=config.request_timeout)
