"""Checking a server before it is used: the settings panel's "Test connection" and the local
server's own context window, asked through the core's providers.

A front end calls :func:`check_connection` with the config it would save and shows the
:class:`ConnectionReport` it gets back: whether the server answered, what happened in words,
the models it lists and, for a local server, what the server says about itself (its context
window and whether its chat template renders tools). :func:`detect_server` asks only the
latter, in the background while the user types. Neither ever raises for a server that fails,
and the API key never appears in what they return.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from .config import CoreConfig
from .providers.base import ProviderError
from .providers.probe import PROBE_TIMEOUT, ServerInfo, ServerKind, probe_server
from .system.secrets import redact_url

__all__ = ["ConnectionReport", "ServerInfo", "check_connection", "detect_server"]

log = logging.getLogger(__name__)

# The settings' providers whose server may say its window through its own API, and which of
# the known servers to ask first (None: any of them, the custom provider may be any of them).
LOCAL_SERVER_KINDS: dict[str, ServerKind | None] = {
    "llamacpp": "llama.cpp",
    "ollama": "ollama",
    "lmstudio": "lmstudio",
    "custom": None,
}
SHOWN_MODELS = 5
MIN_KEY_CHARS = 8


@dataclass(frozen=True)
class ConnectionReport:
    """The outcome of a connection test, in words and in figures."""

    ok: bool
    message: str  # what happened, for the user (never the API key)
    models: tuple[str, ...] = ()
    model_listed: bool | None = None  # whether the configured model is among ``models``
    status: int | None = None  # the HTTP status of a failure, when there was one
    server: ServerInfo = field(default_factory=ServerInfo)  # what a local server said


async def detect_server(
    base_url: str, model: str, *, provider: str, api_key: str = "", timeout: float = PROBE_TIMEOUT
) -> ServerInfo:
    """Ask the local server at ``base_url`` for its window and tool support. An empty report
    when ``provider`` is not a local one, or the server said nothing (never raises)."""
    if provider not in LOCAL_SERVER_KINDS or not base_url.strip():
        return ServerInfo()
    prefer = LOCAL_SERVER_KINDS[provider]
    try:
        return await probe_server(base_url, model, api_key=api_key, prefer=prefer, timeout=timeout)
    except Exception:  # the probe answers failures itself; anything else only drops the hint
        log.debug("Probing %s failed", redact_url(base_url, [api_key]), exc_info=True)
        return ServerInfo()


def _models_text(config: CoreConfig, models: list[str]) -> tuple[str, bool | None]:
    if not models:
        return "Connected. The server lists no models.", None
    if config.model in models:
        return (
            f"Connected. {len(models)} model(s) available, including {config.model}.",
            True,
        )
    shown = ", ".join(models[:SHOWN_MODELS]) + ("…" if len(models) > SHOWN_MODELS else "")
    return f"Connected, but the server does not list {config.model!r}. Available: {shown}", False


def _clean(text: str, config: CoreConfig) -> str:
    # A server may echo what it was sent; a key long enough to be one never reaches the user.
    key = config.api_key.get_secret_value()
    return text.replace(key, "•••") if len(key) >= MIN_KEY_CHARS else text


async def check_connection(config: CoreConfig, *, provider: str = "custom") -> ConnectionReport:
    """Ask the server for its models with the provider ``config`` makes (a real request) and,
    for a local ``provider``, what it says about its window and tools."""
    from .providers.factory import make_provider  # the SDKs load when a test is asked for

    client = None
    try:
        client = make_provider(config)
        models = await client.list_models()
    except ProviderError as error:
        status = f" (HTTP {error.status})" if error.status else ""
        message = _clean(f"Connection failed{status}: {error.message}", config)
        return ConnectionReport(False, message, status=error.status)
    except Exception as exc:  # noqa: BLE001 - any failure is reported, never raised
        return ConnectionReport(False, _clean(f"Connection failed: {exc}", config))
    finally:
        if client is not None:
            try:
                await client.close()
            except Exception:
                log.debug("Closing the test provider failed", exc_info=True)
    message, listed = _models_text(config, models)
    server = await detect_server(
        config.base_url,
        config.model,
        provider=provider,
        api_key=config.api_key.get_secret_value(),
    )
    if about := server.describe():
        message = f"{message} {about}"
    return ConnectionReport(True, _clean(message, config), tuple(models), listed, None, server)
