"""The events of a turn: its start and end, the items it streams (text deltas, tool calls and
outputs), context usage, stalls and retries of the stream, a message not sent, a retry offer."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .base import _Event

TurnKind = Literal["regular", "compact"]


class TurnItem(BaseModel):
    """What a started/completed item is, for display. ``kind`` names it; ``data`` carries the
    fields that kind needs (text, tool name and arguments, output, …)."""

    model_config = ConfigDict(frozen=True)

    id: str
    kind: Literal[
        "user_message",
        "agent_message",
        "reasoning",
        "function_call",
        "function_call_output",
        "context_compaction",
    ]
    data: dict[str, Any] = Field(default_factory=dict)


class TurnStarted(_Event):
    type: Literal["turn_started"] = "turn_started"
    turn_id: str
    kind: TurnKind = "regular"
    context_window: int | None = None


class ItemStarted(_Event):
    type: Literal["item_started"] = "item_started"
    turn_id: str
    item: TurnItem


class ItemCompleted(_Event):
    type: Literal["item_completed"] = "item_completed"
    turn_id: str
    item: TurnItem


class AgentMessageDelta(_Event):
    type: Literal["agent_message_delta"] = "agent_message_delta"
    turn_id: str
    item_id: str
    delta: str


class AgentMessage(_Event):
    type: Literal["agent_message"] = "agent_message"
    turn_id: str
    item_id: str
    text: str


class TokenCount(_Event):
    """Context usage. ``total`` is what the next request will hold, as far as the core knows."""

    type: Literal["token_count"] = "token_count"
    total: int
    input: int = 0
    output: int = 0
    cached: int = 0
    reasoning: int = 0
    context_window: int | None = None
    auto_compact_limit: int | None = None
    approximate: bool = False
    source: Literal["api", "estimate"] = "api"


class StreamError(_Event):
    type: Literal["stream_error"] = "stream_error"
    turn_id: str | None = None
    message: str
    attempt: int
    max_attempts: int
    details: str = ""
    # Why Coco retries, in words, and how long it waits before the next attempt (a server's
    # Retry-After is capped at a minute; ``requested_seconds`` is what the server asked for).
    reason: str = ""
    wait_seconds: float | None = None
    requested_seconds: float | None = None


class StreamWaiting(_Event):
    """The server has sent nothing for ``since_seconds`` while a reply was awaited (a stall):
    the window counts on from there. ``timeout_seconds`` is the request timeout after which
    Coco gives up on the attempt. ``stalled=False``: data flows again, the wait is over."""

    type: Literal["stream_waiting"] = "stream_waiting"
    turn_id: str
    since_seconds: float
    timeout_seconds: float | None = None
    stalled: bool = True


class MessageNotSent(_Event):
    """The user's message did not reach the model (too large for the window, or it could not
    be made to fit): the window puts ``text`` back in the composer. ``reason`` says why."""

    type: Literal["message_not_sent"] = "message_not_sent"
    turn_id: str
    text: str
    reason: str
    attachments: list[str] = Field(default_factory=list)  # the files it carried, for the window to attach again


class ReplyReplaced(_Event):
    """A reply the server's failure cut off (shown as an ``agent_message`` item with
    ``cut_off`` in its data) was replaced by the answer of the retry: its row goes."""

    type: Literal["reply_replaced"] = "reply_replaced"
    turn_id: str
    item_id: str


class TurnComplete(_Event):
    type: Literal["turn_complete"] = "turn_complete"
    turn_id: str
    kind: TurnKind = "regular"
    status: Literal["completed", "aborted", "failed"] = "completed"
    last_agent_message: str | None = None


class RetryAvailable(_Event):
    """Whether ``RetryTurn`` would do something now: after a turn ends, when a turn or a
    compaction starts. ``turn_id`` is the failed turn a retry would run again (its error is
    where the window offers Retry); None when nothing can be retried, ``reason`` says why."""

    type: Literal["retry_available"] = "retry_available"
    turn_id: str | None = None
    reason: str = ""
