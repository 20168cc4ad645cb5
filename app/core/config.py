"""Core configuration: what one session needs to talk to a model and compact its history."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from .mcp_config import McpServerSpec
from .system.dirs import (  # noqa: F401 - re-exported: the folders are part of the config's API
    APP_NAME,
    default_cache_dir,
    default_config_dir,
    default_data_dir,
    default_log_dir,
)


class CoreConfig(BaseModel):
    """Everything a session needs. The API key is a ``SecretStr`` so it never prints."""

    model_config = ConfigDict(frozen=True, validate_assignment=True)

    base_url: str = "https://api.openai.com/v1"
    api_key: SecretStr = SecretStr("")
    model: str = "gpt-4.1"
    wire_api: Literal["responses", "chat"] = "responses"
    instructions: str = "You are Coco, a helpful assistant."
    context_window: int | None = None
    auto_compact_token_limit: int | None = None
    auto_compact: bool = True
    remote_compaction: bool = False
    remote_fallback_to_local: bool = True
    # Automatic compaction first tries replacing old tool outputs with stubs (no model call).
    prune_tool_outputs: bool = True
    # Every compaction carries the user's facts, files and commands over.
    carry_notes: bool = True
    # Responses wire, remote compaction on: every turn asks the server to compact inside the
    # response past the auto-compact limit (``context_management``, spec section 4 form c).
    server_side_compaction: bool = False
    # The offline demo model: requests carry ``x-coco-request-kind`` so it knows a compaction
    # request without guessing. Never sent to any other server.
    demo_hints: bool = False
    # Whose server this is, for the window's status line ("llama.cpp", "OpenAI"); empty
    # for a custom server or the demo.
    provider_name: str = ""
    compact_prompt: str | None = None
    compaction_model: str | None = None
    summary_style: Literal["handoff", "checkpoint"] = "handoff"
    # Whether an edit or a switch carries a short summary of the branch left behind when the
    # op does not say (``ask``: the front end asks and says).
    branch_summary: Literal["never", "ask", "always"] = "never"
    workspace: Path | None = None
    data_dir: Path = Field(default_factory=default_data_dir)
    # Where tiktoken's BPE files are looked for; None means the app's cache directory.
    tokenizer_cache_dir: Path | None = None
    # Whether tiktoken may try to download its file (off the UI path, never waited on).
    tokenizer_download: bool = True
    # Reasoning models get ``include: ["reasoning.encrypted_content"]`` and a reasoning block.
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = None
    max_retries: int = 5
    retry_base_delay: float = 0.2  # seconds; backoff is base × 2^(n-1) × jitter [0.9, 1.1)
    request_timeout: float = 600.0
    tool_output_budget: int = 10_000  # tokens; longer tool output is middle-truncated
    # The model may search the whole conversation with the recall tool.
    recall: bool = True
    # Whether the model reads images, where its server does not say (llama.cpp's /props,
    # LM Studio and Ollama do): a message with an image to a model that does not is refused.
    accepts_images: bool = True
    # Tools from MCP servers: the servers, the reasons of entries that do not read,
    # and whether tools that declare themselves read-only run without asking.
    mcp_servers: tuple[McpServerSpec, ...] = ()
    mcp_errors: tuple[tuple[str, str], ...] = ()
    mcp_allow_read_only: bool = True

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        value = value.strip().rstrip("/")
        if not value.startswith(("http://", "https://")):
            raise ValueError("base URL must start with http:// or https://")
        return value

    @field_validator("context_window", "auto_compact_token_limit")
    @classmethod
    def _positive(cls, value: int | None) -> int | None:
        if value is not None and value <= 0:
            raise ValueError("must be a positive number of tokens")
        return value

    @property
    def is_reasoning_model(self) -> bool:
        name = self.model.lower()
        return self.reasoning_effort is not None or name.startswith(("o1", "o3", "o4", "gpt-5"))

    @property
    def sessions_dir(self) -> Path:
        return self.data_dir / "sessions"
