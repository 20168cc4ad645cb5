"""Asking a local model server what it runs with: its context window and whether tools work.

Local servers do not say their window through the OpenAI API, but each says it in its own:

- llama.cpp: ``GET /props`` → ``default_generation_settings.n_ctx`` (the window it was started
  with) and ``chat_template_caps.supports_tools``: ``false`` means the chat template does not
  render tool definitions, so the model never sees them;
- LM Studio: ``GET /api/v0/models`` → per model ``loaded_context_length`` (else
  ``max_context_length``), and ``capabilities`` (``tool_use``);
- Ollama: ``POST /api/show`` → ``parameters`` (``num_ctx`` when the model sets one, which is what
  it runs with) else ``model_info["<arch>.context_length"]``, and ``capabilities`` (``tools``).

These endpoints sit at the server's root, not under ``/v1``. :func:`probe_server` tries them in
turn (the preset's own first) with a short timeout and never raises: a server that answers none
of them gives an empty :class:`ServerInfo`. The API key, when there is one, is sent as a bearer
token and never appears in what is returned.
"""

from __future__ import annotations

import asyncio
import re
import ssl
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import httpx2

from ..config import CoreConfig

ServerKind = Literal["llama.cpp", "lmstudio", "ollama"]
PROBE_TIMEOUT = 5.0
_ORDER: tuple[ServerKind, ...] = ("llama.cpp", "lmstudio", "ollama")
# Each server's name in words, for messages.
SERVER_NAMES: dict[str, str] = {
    "llama.cpp": "llama.cpp",
    "lmstudio": "LM Studio",
    "ollama": "Ollama",
}
_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class ServerInfo:
    """What a server told about itself; ``None`` where it said nothing."""

    kind: ServerKind | None = None
    context_window: int | None = None
    supports_tools: bool | None = None
    # Whether the loaded model reads images (llama.cpp's ``modalities``, LM Studio's model
    # type, Ollama's capabilities); None when the server did not say.
    supports_vision: bool | None = None

    @property
    def name(self) -> str:
        """The server's name in words ("llama.cpp", "Ollama", "LM Studio", "The server")."""
        return SERVER_NAMES.get(self.kind or "", "The server")

    def describe(self) -> str:
        """One sentence on the window and tools, for the user ("" when it said nothing)."""
        parts: list[str] = []
        if self.context_window is not None:
            parts.append(f"reports a context window of {self.context_window:,} tokens")
        if self.supports_tools is False:
            parts.append(
                "says this model's chat template has no tool support, so it has no tool calls: "
                f"{NEEDS_TOOL_CALLS} need them and are not offered to it (the carried notes "
                "keep your facts through compactions without them)"
            )
        elif self.supports_tools:
            parts.append("supports tools")
        return f"{self.name} " + " and ".join(parts) + "." if parts else ""


def server_root(base_url: str) -> str:
    """The server's root for its native endpoints: the base URL without a final ``/v1``."""
    root = base_url.strip().rstrip("/")
    return root.removesuffix("/v1")


def _positive(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value) if value > 0 else None


def parse_llama_props(props: object) -> ServerInfo | None:
    """A ``ServerInfo`` from llama.cpp's ``/props`` JSON (``None`` when it is not that)."""
    if not isinstance(props, Mapping):
        return None
    settings = props.get("default_generation_settings")
    window = _positive(settings.get("n_ctx")) if isinstance(settings, Mapping) else None
    caps = props.get("chat_template_caps")
    tools = caps.get("supports_tools") if isinstance(caps, Mapping) else None
    if window is None and not isinstance(tools, bool):
        return None
    modalities = props.get("modalities")
    vision = modalities.get("vision") if isinstance(modalities, Mapping) else None
    return ServerInfo(
        "llama.cpp", window, tools if isinstance(tools, bool) else None,
        vision if isinstance(vision, bool) else None,
    )


def _capability(capabilities: object, names: tuple[str, ...]) -> bool | None:
    if not isinstance(capabilities, list):
        return None
    return any(name in capabilities for name in names)


def parse_lmstudio_models(payload: object, model: str) -> ServerInfo | None:
    """A ``ServerInfo`` for ``model`` from LM Studio's ``/api/v0/models`` JSON."""
    rows = payload.get("data") if isinstance(payload, Mapping) else None
    if not isinstance(rows, list):
        return None
    for row in rows:
        if isinstance(row, Mapping) and row.get("id") == model:
            window = _positive(row.get("loaded_context_length")) or _positive(
                row.get("max_context_length")
            )
            kind = row.get("type")
            return ServerInfo(
                "lmstudio", window, _capability(row.get("capabilities"), ("tool_use", "tools")),
                kind == "vlm" if isinstance(kind, str) else None,
            )
    return ServerInfo("lmstudio")  # the server answered, but does not know the model


def parse_ollama_show(payload: object) -> ServerInfo | None:
    """A ``ServerInfo`` from Ollama's ``/api/show`` JSON."""
    if not isinstance(payload, Mapping):
        return None
    window: int | None = None
    parameters = payload.get("parameters")
    if isinstance(parameters, str):
        match = _NUM_CTX.search(parameters)
        if match:
            window = _positive(int(match.group(1)))
    info = payload.get("model_info")
    if window is None and isinstance(info, Mapping):
        for key, value in info.items():
            if str(key).endswith(".context_length"):
                window = _positive(value)
                break
    if window is None and "model_info" not in payload and "capabilities" not in payload:
        return None
    capabilities = payload.get("capabilities")
    return ServerInfo(
        "ollama", window, _capability(capabilities, ("tools",)),
        _capability(capabilities, ("vision",)),
    )


async def _ask(
    client: httpx2.AsyncClient, kind: ServerKind, root: str, model: str
) -> ServerInfo | None:
    try:
        if kind == "llama.cpp":
            response = await client.get(f"{root}/props")
        elif kind == "lmstudio":
            response = await client.get(f"{root}/api/v0/models")
        else:
            response = await client.post(f"{root}/api/show", json={"model": model})
        if response.status_code != 200:
            return None
        payload: Any = response.json()
    except (httpx2.HTTPError, ValueError):
        return None
    if kind == "llama.cpp":
        return parse_llama_props(payload)
    if kind == "lmstudio":
        return parse_lmstudio_models(payload, model)
    return parse_ollama_show(payload)


async def probe_server(
    base_url: str,
    model: str,
    *,
    api_key: str = "",
    prefer: ServerKind | None = None,
    timeout: float = PROBE_TIMEOUT,
    http_client: httpx2.AsyncClient | None = None,
) -> ServerInfo:
    """Ask the server at ``base_url`` for its window and tool support (``prefer``'s endpoint
    first). Never raises: an unreachable or unknown server gives ``ServerInfo()``."""
    root = server_root(base_url)
    order = _ORDER if prefer is None else (prefer, *(k for k in _ORDER if k != prefer))
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    if http_client is None:  # the TLS context loads certificates: built (once) off the loop
        tls = await asyncio.to_thread(_tls_context)
        client = httpx2.AsyncClient(timeout=timeout, headers=headers, verify=tls)
    else:
        client = http_client
    try:
        for kind in order:
            info = await _ask(client, kind, root, model)
            if info is not None:
                return info
            if not await _reachable(client, root):
                break  # nothing listens there: the other endpoints would fail the same way
    finally:
        if http_client is None:
            await client.aclose()
    return ServerInfo()


def _tls_context() -> ssl.SSLContext:
    from .openai_client import shared_tls_context  # here: it imports the SDK

    return shared_tls_context()


async def _reachable(client: httpx2.AsyncClient, root: str) -> bool:
    try:
        await client.get(root + "/")
    except httpx2.HTTPError:
        return False
    return True


# The features that work only through the model's tool calls.
NEEDS_TOOL_CALLS = (
    "recall (the model searching the whole conversation), the workspace tools (reading your "
    "files) and MCP tools"
)


def tools_warning(info: ServerInfo, base_url: str) -> str | None:
    """The one-time warning when the server drops tool definitions, else ``None``."""
    if info.supports_tools is not False:
        return None
    where = info.name
    return (
        f"{where} at {base_url} reports that this model's chat template has no tool support: "
        f"the model cannot call tools, so {NEEDS_TOOL_CALLS} are not offered to it. The "
        "carried notes still keep what you said through compactions. For tools, use a model "
        "(or a chat template, llama.cpp's --jinja / --chat-template-file) that supports them."
    )


# What a server said of a model, kept this long (seconds) for the sessions that follow: each
# new conversation asked it again on its first turn (several requests, up to a timeout each
# for a server that is not one of those asked). Test connection always asks afresh.
PROBE_KEPT_S = 300.0
_probed: dict[tuple[str, str], tuple[float, ServerInfo]] = {}
_clock = time.monotonic  # (a test's own clock)


async def local_tools_warning(config: CoreConfig) -> str | None:
    """For the session, once per conversation: the warning to show when the configured local
    server (Chat Completions wire) drops tool definitions, else ``None``. The server's answer
    is kept for :data:`PROBE_KEPT_S` (per address and model)."""
    if config.wire_api != "chat":
        return None
    key = (config.base_url, config.model)
    kept = _probed.get(key)
    now = _clock()
    if kept is not None and now - kept[0] < PROBE_KEPT_S:
        info = kept[1]
    else:
        info = await probe_server(
            config.base_url, config.model, api_key=config.api_key.get_secret_value()
        )
        _probed[key] = (now, info)
    return tools_warning(info, config.base_url)
