"""What every model provider gives the core: a normalised stream of events, typed errors."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from ..items import Item

ErrorCategory = Literal[
    "auth",  # 401/403: never retried
    "rate_limit",  # 429: retried, honours Retry-After
    "server",  # 5xx: retried
    "connection",  # refused / reset / timeout: retried
    "stream",  # stream cut before response.completed: retried
    "context_overflow",  # the input does not fit the model's window: never retried as is
    "bad_request",  # other 4xx: not retried
    "not_found",  # 404 (endpoint or model missing): not retried
    "malformed",  # unparsable payload: retried
    # The server could not parse what the model generated (llama.cpp: a malformed tool call).
    # The same input gives the same output: never retried.
    "model_output",
]

RETRYABLE: frozenset[str] = frozenset({"rate_limit", "server", "connection", "stream", "malformed"})


@dataclass(frozen=True)
class RetryWait:
    """What a retry notice needs to show: how long before the next attempt, and why.

    ``requested`` is the server's own Retry-After when it sent one (it may exceed ``seconds``,
    which is capped at ``app.core.providers.sampling.MAX_SERVER_WAIT``)."""

    seconds: float
    reason: str
    requested: float | None = None

    @property
    def capped(self) -> bool:
        """True when the server asked for a longer wait than Coco waits."""
        return self.requested is not None and self.requested > self.seconds


class ProviderError(Exception):
    """A failed model request, classified. ``str()`` never contains the API key."""

    def __init__(
        self,
        category: ErrorCategory,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        code: str | None = None,
        details: str | None = None,
    ) -> None:
        super().__init__(message)
        self.category: ErrorCategory = category
        self.message = message
        self.status = status
        self.retry_after = retry_after
        self.code = code
        # The technical detail behind ``message`` (raw status line, page excerpt, parser
        # error), for a "details" view; like ``message``, it never contains the key.
        self.details = details
        # Set by the retry loop just before it announces a retry: the delay in seconds and
        # the reason in words.
        self.retry_wait: RetryWait | None = None

    @property
    def retryable(self) -> bool:
        return self.category in RETRYABLE


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    estimated: bool = False  # True when the server reported none and the provider estimated


@dataclass(frozen=True)
class TextDelta:
    item_id: str
    delta: str


@dataclass(frozen=True)
class OutputItemDone:
    """One completed output item, as the dict to store in history (byte-faithful)."""

    item: Item


# Why a response ended early, when it did: the output limit was reached ("length"), so the
# text is cut short. ``None`` for an ordinary end.
StopReason = Literal["length"]


@dataclass(frozen=True)
class Completed:
    response_id: str
    usage: Usage | None
    stop_reason: StopReason | None = None


StreamEvent = TextDelta | OutputItemDone | Completed


@dataclass(frozen=True)
class ModelRequest:
    """One sampling request, in Responses-API terms; chat providers translate it."""

    model: str
    instructions: str
    input: list[Item]
    tools: list[dict[str, Any]] = field(default_factory=list)
    prompt_cache_key: str | None = None
    reasoning_effort: str | None = None
    include_encrypted_reasoning: bool = False
    # The most the reply may hold (``max_output_tokens`` / ``max_tokens`` on the wire); None
    # leaves it to the server. Compaction sets it to the summary's budget.
    max_output_tokens: int | None = None
    # Responses wire: "tools": [], "tool_choice": "auto", "parallel_tool_calls": false when
    # there are no tools (what Codex 0.169.0 sends on a compaction request) instead of omitting
    # them.
    send_empty_tools: bool = False
    # Responses wire: server-side compaction inside the response (spec section 4, form c).
    context_management: list[dict[str, Any]] | None = None


@dataclass(frozen=True)
class CompactResult:
    """What ``/responses/compact`` returned: raw output items (JSON-faithful) and usage."""

    output: list[Item]
    usage: Usage | None


class ModelProvider(Protocol):
    """A model endpoint. ``stream`` raises ``ProviderError`` on failure, before or mid-stream."""

    supports_remote_compaction: bool

    def stream(
        self, request: ModelRequest, *, extra_headers: dict[str, str] | None = None
    ) -> AsyncIterator[StreamEvent]: ...

    async def compact(
        self, request: ModelRequest, *, extra_headers: dict[str, str] | None = None
    ) -> CompactResult: ...

    async def list_models(self) -> list[str]: ...

    async def close(self) -> None: ...
