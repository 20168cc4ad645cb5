"""The events of a session outside any one stream: configured and shut down, warnings,
errors (with the closed set of their kinds) and background notes."""

from __future__ import annotations

from typing import Literal

from .base import _Event

ErrorKind = Literal[
    "auth",
    "rate_limit",
    "server",
    "connection",
    "stream",
    "context_overflow",
    "bad_request",
    "not_found",
    "malformed",
    "compaction",
    "invalid_op",
    "message_too_large",
    "attachment",  # a file that cannot be attached, or a model that cannot see an image
    "storage",
    "tool",
    "internal",
]


class SessionConfigured(_Event):
    type: Literal["session_configured"] = "session_configured"
    session_id: str
    model: str
    resumed: bool = False
    rollout_path: str = ""


class Background(_Event):
    type: Literal["background"] = "background"
    turn_id: str | None = None
    message: str


class Warning(_Event):
    type: Literal["warning"] = "warning"
    message: str
    # The compaction the warning is about ("" for none): once it is undone, the warning no
    # longer holds (the window takes it away).
    compaction_id: str = ""


class Error(_Event):
    type: Literal["error"] = "error"
    message: str
    kind: ErrorKind = "internal"
    turn_id: str | None = None
    # The technical detail behind ``message`` (status line, server text, parser error), for a
    # "Details" view; never a secret.
    details: str = ""


class ShutdownComplete(_Event):
    type: Literal["shutdown_complete"] = "shutdown_complete"
