"""App settings: what the settings panel edits, stored as JSON, and the CoreConfig built from them.

The API key is not a setting: it lives in :mod:`app.core.system.secrets`. Provider presets fill in
the base URL, model and wire protocol the user left empty.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .config import CoreConfig
from .mcp_config import parse_servers

SETTINGS_FILE = "settings.json"
BACKUP_SUFFIX = ".bak"

Provider = Literal["demo", "openai", "ollama", "lmstudio", "llamacpp", "custom"]
WireApi = Literal["responses", "chat"]

_PRESET_BASE_URLS: dict[str, str] = {
    "openai": "https://api.openai.com/v1",
    "ollama": "http://localhost:11434/v1",
    "lmstudio": "http://localhost:1234/v1",
    "llamacpp": "http://127.0.0.1:8080/v1",  # llama-server's default host and port
}
_PRESET_MODELS: dict[str, str] = {"openai": "gpt-4.1", "demo": "coco-demo"}
_PRESET_WIRE_APIS: dict[str, str] = {
    "demo": "responses",
    "openai": "responses",
    "ollama": "chat",
    "lmstudio": "chat",
    "llamacpp": "chat",
}
_PROVIDER_NAMES: dict[str, str] = {
    "demo": "the demo model",
    "openai": "OpenAI",
    "ollama": "Ollama",
    "lmstudio": "LM Studio",
    "llamacpp": "llama.cpp",
    "custom": "the custom provider",
}
DEMO_MODEL = "coco-demo"
DEMO_API_KEY = "demo"
DEMO_CONTEXT_WINDOW = 16_000
MAX_AUTO_COMPACT_PERCENT = 90
MIN_AUTO_COMPACT_PERCENT = 10
# How long a request may go without a byte from the server before it counts as stalled.
DEFAULT_REQUEST_TIMEOUT = 600
MIN_REQUEST_TIMEOUT = 10
MAX_REQUEST_TIMEOUT = 3600


class AppSettings(BaseModel):
    """Everything the settings panel edits, except the API key."""

    # Unknown keys (from a newer version) are ignored rather than making the file invalid.
    model_config = ConfigDict(validate_assignment=True, extra="ignore", populate_by_name=True)

    provider: Provider = "demo"
    base_url: str = ""  # empty: the provider's preset
    model: str = ""  # empty: the provider's preset
    wire_api: WireApi = "responses"
    context_window: int | None = None
    # The window the server itself reported (a local server's native API, read by the settings
    # panel) for the base URL and model saved with it; used when ``context_window`` is empty.
    detected_context_window: int | None = None
    instructions: str = ""
    auto_compact: bool = True
    auto_compact_percent: int = MAX_AUTO_COMPACT_PERCENT
    remote_compaction: bool = False
    remote_fallback_to_local: bool = True
    prune_tool_outputs: bool = True
    carry_notes: bool = True  # compactions carry the user's facts, files and commands over
    server_side_compaction: bool = False
    compaction_model: str = ""
    summary_style: Literal["handoff", "checkpoint"] = "handoff"
    # Editing an earlier message or switching branch: carry a short summary of the branch left
    # behind into the new one never, when asked (the edit box's checkbox), or always.
    branch_summary: Literal["never", "ask", "always"] = "never"
    compact_prompt: str = ""  # empty: the default prompt
    workspace: str = ""
    # The model may search the whole conversation (the recall tool).
    recall: bool = True
    # Whether the model reads images, where its server does not say (attachments).
    accepts_images: bool = True
    notifications: bool = True
    # The window's colours: follow the system, or always light or dark.
    theme: Literal["system", "light", "dark"] = "system"
    last_session_id: str = ""
    # Seconds without an answer before a request is given up as stalled (then retried).
    request_timeout: int = DEFAULT_REQUEST_TIMEOUT
    # MCP servers in the shape other clients share (``mcp_config``); env and header values are
    # in the key store, a placeholder here. A bad entry is shown as such, never dropped.
    mcp_servers: dict[str, Any] = Field(default_factory=dict, alias="mcpServers")
    mcp_allow_read_only: bool = True  # tools that declare themselves read-only run unasked

    @field_validator("base_url")
    @classmethod
    def _http_url_or_empty(cls, value: str) -> str:
        value = value.strip().rstrip("/")
        if value and not value.startswith(("http://", "https://")):
            raise ValueError("base URL must start with http:// or https://")
        return value

    @field_validator("model", "compaction_model")
    @classmethod
    def _strip(cls, value: str) -> str:
        return value.strip()

    @field_validator("context_window", "detected_context_window")
    @classmethod
    def _positive(cls, value: int | None) -> int | None:
        if value is not None and value <= 0:
            raise ValueError("must be a positive number of tokens")
        return value

    @field_validator("request_timeout")
    @classmethod
    def _timeout(cls, value: int) -> int:
        if not MIN_REQUEST_TIMEOUT <= value <= MAX_REQUEST_TIMEOUT:
            raise ValueError(
                f"must be between {MIN_REQUEST_TIMEOUT} and {MAX_REQUEST_TIMEOUT} seconds"
            )
        return value

    @field_validator("auto_compact_percent")
    @classmethod
    def _percent(cls, value: int) -> int:
        # Spec section 5: a configured value above 90 % is clamped, not refused.
        if value < MIN_AUTO_COMPACT_PERCENT:
            raise ValueError(f"must be at least {MIN_AUTO_COMPACT_PERCENT} %")
        return min(value, MAX_AUTO_COMPACT_PERCENT)


def _describe_validation_error(error: ValidationError) -> str:
    # Name fields and reasons only: pydantic's own text repeats the (possibly long) input.
    parts = []
    for detail in error.errors():
        location = ".".join(str(part) for part in detail["loc"]) or "settings"
        parts.append(f"{location}: {detail['msg']}")
    return "; ".join(parts)


def _atomic_write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temp_name, path)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise


class SettingsStore:
    """Loads and saves :class:`AppSettings` as ``config_dir/settings.json``."""

    def __init__(self, config_dir: Path) -> None:
        self.config_dir = config_dir
        self.path = config_dir / SETTINGS_FILE
        self.backup_path = config_dir / (SETTINGS_FILE + BACKUP_SUFFIX)

    def load(self) -> tuple[AppSettings, list[str]]:
        """The saved settings and any warnings.

        A missing file gives the defaults silently. An unreadable or invalid file gives the
        defaults, is kept as ``settings.json.bak`` (``.bak.1``, ``.bak.2``… when that exists)
        and produces one warning.
        """
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return AppSettings(), []
        except OSError as exc:
            return AppSettings(), [self._keep_bad_file(exc.strerror or type(exc).__name__)]
        try:
            data: Any = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            return AppSettings(), [self._keep_bad_file("not UTF-8 text")]
        except json.JSONDecodeError as exc:
            reason = f"invalid JSON at line {exc.lineno}, column {exc.colno}"
            return AppSettings(), [self._keep_bad_file(reason)]
        if not isinstance(data, dict):
            return AppSettings(), [self._keep_bad_file("not a JSON object")]
        try:
            return AppSettings.model_validate(data), []
        except ValidationError as exc:
            return AppSettings(), [self._keep_bad_file(_describe_validation_error(exc))]

    def _free_backup_path(self) -> Path:
        """``settings.json.bak``, or ``.bak.1``, ``.bak.2``… when earlier backups exist: a
        second corruption never overwrites the first one's file."""
        candidate = self.backup_path
        number = 0
        while candidate.exists():
            number += 1
            candidate = self.backup_path.with_name(f"{self.backup_path.name}.{number}")
        return candidate

    def _keep_bad_file(self, reason: str) -> str:
        """Rename the bad file to a new backup (never delete it) and word the warning."""
        backup = self._free_backup_path()
        try:
            os.replace(self.path, backup)
        except OSError as exc:
            return (
                f"Settings file was unreadable ({reason}); using defaults. "
                f"The old file could not be kept as {backup.name} "
                f"({exc.strerror or type(exc).__name__}) and is still at {self.path.name}."
            )
        return (
            f"Settings file was unreadable ({reason}); using defaults. "
            f"The old file was kept as {backup.name}."
        )

    def save(self, settings: AppSettings) -> None:
        """Write the settings atomically (a crash leaves the old file or the new, never half)."""
        _atomic_write_text(self.path, settings.model_dump_json(indent=2, by_alias=True) + "\n")


def preset_base_url(provider: str) -> str:
    """The provider's default base URL ("" for demo and custom, which have none)."""
    return _PRESET_BASE_URLS.get(provider, "")


def preset_model(provider: str) -> str:
    """The provider's default model ("" where there is no sensible default)."""
    return _PRESET_MODELS.get(provider, "")


def preset_wire_api(provider: str, configured: str = "responses") -> str:
    """Wire protocol for a provider: OpenAI and demo speak Responses, local servers Chat
    Completions; a custom provider uses what the user ``configured``."""
    return _PRESET_WIRE_APIS.get(provider, configured)


def default_compact_prompt(style: str) -> str:
    """The built-in compaction prompt for ``style``: what an empty ``compact_prompt`` means
    ("" when Coco's prompt file cannot be read)."""
    from .compaction.prompts import default_prompt  # read when the settings panel shows it

    try:
        return default_prompt(style)
    except OSError:
        return ""


def _env_value(env: Mapping[str, str], name: str) -> str:
    return env.get(name, "").strip()


def _resolve_base_url(settings: AppSettings, env: Mapping[str, str]) -> str:
    if settings.base_url:
        return settings.base_url
    if settings.provider in ("openai", "custom"):
        from_env = _env_value(env, "OPENAI_BASE_URL")
        if from_env:
            return from_env
    return preset_base_url(settings.provider)


def _resolve_api_key(
    api_key: str, settings: AppSettings, base_url: str, env: Mapping[str, str]
) -> str:
    """The saved key, else ``OPENAI_API_KEY`` — but the environment's OpenAI key only goes to
    OpenAI, or to a server the environment itself named (``OPENAI_BASE_URL``), never to a
    local or custom server the user typed in."""
    if api_key.strip():
        return api_key.strip()
    env_url = _env_value(env, "OPENAI_BASE_URL").rstrip("/")
    goes_to_openai = settings.provider == "openai" and (
        not settings.base_url or "api.openai.com" in base_url
    )
    named_by_env = bool(env_url) and base_url.rstrip("/") == env_url
    if goes_to_openai or named_by_env:
        return _env_value(env, "OPENAI_API_KEY")
    return ""


def build_core_config(
    settings: AppSettings,
    *,
    api_key: str,
    data_dir: Path,
    env: Mapping[str, str] | None = None,
    demo_url: str | None = None,
    secret: Callable[[str], str] | None = None,
) -> CoreConfig:
    """The :class:`CoreConfig` a session runs with, presets and environment applied.

    ``env`` defaults to ``os.environ``: ``OPENAI_API_KEY`` stands in for an empty key, and
    ``OPENAI_BASE_URL`` for an empty base URL of the openai/custom providers. Raises
    ``ValueError`` with a user-facing message when a base URL or model is missing; the message
    never contains the key. ``secret`` reads the MCP servers' env and header values from the key
    store.
    """
    env = os.environ if env is None else env
    mcp_servers, mcp_errors = parse_servers(settings.mcp_servers, secret or (lambda _key: ""))
    if settings.provider == "demo" and not settings.mcp_servers:
        # The demo shows an MCP tool with nothing configured; the settings stay as they are.
        from .tools.mcp.example import example_server

        mcp_servers = [example_server(data_dir)]
    fields: dict[str, Any] = {
        "auto_compact": settings.auto_compact,
        "remote_compaction": settings.remote_compaction,
        "remote_fallback_to_local": settings.remote_fallback_to_local,
        "prune_tool_outputs": settings.prune_tool_outputs,
        "carry_notes": settings.carry_notes,
        "server_side_compaction": settings.server_side_compaction,
        "demo_hints": settings.provider == "demo",
        "provider_name": (
            "" if settings.provider in ("demo", "custom") else _PROVIDER_NAMES[settings.provider]
        ),
        "summary_style": settings.summary_style,
        "branch_summary": settings.branch_summary,
        "compaction_model": settings.compaction_model or None,
        "compact_prompt": settings.compact_prompt or None,
        "workspace": Path(settings.workspace) if settings.workspace.strip() else None,
        "recall": settings.recall,
        "accepts_images": settings.accepts_images,
        "data_dir": data_dir,
        "request_timeout": float(settings.request_timeout),
        "mcp_servers": tuple(mcp_servers),
        "mcp_errors": tuple(mcp_errors.items()),
        "mcp_allow_read_only": settings.mcp_allow_read_only,
    }
    if settings.instructions.strip():
        fields["instructions"] = settings.instructions
    context_window = settings.context_window
    if settings.provider == "demo":
        if not demo_url:
            raise ValueError("The demo model is not running (no demo server address).")
        fields.update(  # offline: not even the tokenizer file is fetched (counts estimate)
            base_url=demo_url, model=DEMO_MODEL, api_key=DEMO_API_KEY, wire_api="responses",
            tokenizer_download=False,
        )
        if context_window is None:
            context_window = DEMO_CONTEXT_WINDOW
    else:
        name = _PROVIDER_NAMES[settings.provider]
        base_url = _resolve_base_url(settings, env)
        if not base_url:
            raise ValueError(f"No base URL is set for {name}; enter one in Settings.")
        model = settings.model or preset_model(settings.provider)
        if not model:
            raise ValueError(f"No model is chosen for {name}; enter one in Settings.")
        if context_window is None:
            context_window = settings.detected_context_window
        fields.update(
            base_url=base_url,
            model=model,
            api_key=_resolve_api_key(api_key, settings, base_url, env),
            wire_api=preset_wire_api(settings.provider, settings.wire_api),
        )
    fields["context_window"] = context_window
    fields["auto_compact_token_limit"] = (
        context_window * settings.auto_compact_percent // 100 if context_window else None
    )
    try:
        return CoreConfig(**fields)
    except ValidationError as exc:
        # Re-word without pydantic's input echo, which would include the key for api_key.
        raise ValueError(f"Invalid settings: {_describe_validation_error(exc)}") from None


def is_configured(
    settings: AppSettings, api_key: str, env: Mapping[str, str] | None = None
) -> bool:
    """Whether a real provider can be used; ``False`` means the app should start the demo.

    OpenAI needs a key (saved or ``OPENAI_API_KEY``); every real provider needs a base URL and
    a model, from the settings, the presets or the environment. Local servers need no key.
    """
    env = os.environ if env is None else env
    if settings.provider == "demo":
        return False
    if not _resolve_base_url(settings, env):
        return False
    if not (settings.model or preset_model(settings.provider)):
        return False
    base_url = _resolve_base_url(settings, env)
    return settings.provider != "openai" or bool(
        _resolve_api_key(api_key, settings, base_url, env)
    )
