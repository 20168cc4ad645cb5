"""What a test queues on the scripted server: replies, compaction replies and faults.

Each queued item answers exactly one request to its endpoint, in FIFO order. The server renders
an item in the wire format of the endpoint that consumes it (Responses SSE, Chat Completions
chunks, or a unary JSON body), so one ``Reply`` works on every endpoint.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

FaultKind = Literal["status", "overflow", "cut", "malformed", "inband_error", "hang"]


@dataclass(frozen=True)
class ToolCall:
    """One function call the model makes; dict ``arguments`` are JSON-encoded."""

    name: str
    arguments: str | dict[str, Any] = "{}"
    call_id: str | None = None

    @property
    def arguments_json(self) -> str:
        """The arguments exactly as they go on the wire (a JSON string)."""
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments)


@dataclass(frozen=True)
class Reply:
    """A successful model answer.

    ``reasoning`` becomes a reasoning item (emitted first) whose ``encrypted_content`` is that
    string. ``usage`` overrides the computed figures (keys ``input_tokens``, ``output_tokens``,
    ``total_tokens``, ``cached_tokens``, ``reasoning_tokens``). ``include_usage`` lets a chat
    stream omit its usage chunk even when the client asked for it. ``status`` other than
    ``"completed"`` ends a Responses stream with ``response.incomplete`` / ``response.failed``.
    ``compaction`` streams a ``compaction`` item first (Responses only).
    """

    text: str | None = None
    function_calls: list[ToolCall] = field(default_factory=list)
    reasoning: str | None = None
    usage: dict[str, int] | None = None
    include_usage: bool = True
    chunk_size: int = 8
    delay_per_chunk: float = 0.0
    initial_delay: float = 0.0
    status: str = "completed"
    # A ``compaction`` output item with this ``encrypted_content``, streamed first: the answer
    # to a compaction trigger, or a server compacting inside a turn's response.
    compaction: str | None = None
    # Stop after streaming this many output items and hold the stream open until the client
    # leaves: a test can act at a known point of a reply.
    pause_after_items: int | None = None


@dataclass(frozen=True)
class CompactReply:
    """An answer to ``POST /responses/compact``.

    With ``output=None`` the server answers the user messages of the request input followed by
    one compaction item carrying ``encrypted_content``; otherwise ``output`` is sent verbatim.
    """

    encrypted_content: str = "scripted-compaction"
    output: list[dict[str, Any]] | None = None
    usage: dict[str, int] | None = None


@dataclass(frozen=True)
class Fault:
    """A failure to inject; build one with the class methods (``Fault.status(429)``, …)."""

    kind: FaultKind
    http_status: int = 500
    message: str | None = None
    error_code: str | None = None
    retry_after: float | None = None
    mid_stream: bool = False
    after_chunks: int = 2
    text: str = ""
    seconds: float = 0.0

    @classmethod
    def status(
        cls,
        code: int,
        message: str | None = None,
        error_code: str | None = None,
        retry_after: float | None = None,
    ) -> Fault:
        """An HTTP error with an OpenAI error body (and ``Retry-After`` when given)."""
        return cls(
            "status",
            http_status=code,
            message=message,
            error_code=error_code,
            retry_after=retry_after,
        )

    @classmethod
    def overflow(cls, mid_stream: bool = False) -> Fault:
        """``context_length_exceeded``: a 400 before the stream, or a failure inside it."""
        return cls("overflow", http_status=400, mid_stream=mid_stream)

    @classmethod
    def cut(cls, after_chunks: int = 2, text: str = "partial answer ") -> Fault:
        """Start streaming ``text`` in ``after_chunks`` deltas, then drop the connection."""
        return cls("cut", after_chunks=max(0, after_chunks), text=text)

    @classmethod
    def malformed(cls) -> Fault:
        """HTTP 200 whose body (or first SSE event) is not valid JSON."""
        return cls("malformed", http_status=200)

    @classmethod
    def inband_error(cls, message: str, code: str | None = None) -> Fault:
        """An error delivered inside a 200 stream (SSE ``error`` event / chat error chunk)."""
        return cls("inband_error", message=message, error_code=code)

    @classmethod
    def hang(cls, seconds: float) -> Fault:
        """Start the stream, then send nothing for ``seconds`` and drop the connection."""
        return cls("hang", seconds=seconds)


ScriptItem = Reply | Fault | CompactReply
