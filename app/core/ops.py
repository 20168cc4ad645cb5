"""Ops a front end submits to a session (``await session.submit(ops.UserTurn(text=...))``)."""

from .protocol import (
    Compact,
    FindInConversation,
    Interrupt,
    Op,
    RetryTurn,
    Shutdown,
    UndoCompaction,
    UpdateConfig,
    UserTurn,
)

__all__ = [
    "Compact",
    "FindInConversation",
    "Interrupt",
    "Op",
    "RetryTurn",
    "Shutdown",
    "UndoCompaction",
    "UpdateConfig",
    "UserTurn",
]
