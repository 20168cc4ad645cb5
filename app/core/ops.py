"""Ops a front end submits to a session (``await session.submit(ops.UserTurn(text=...))``)."""

from .protocol import (
    ApproveToolCall,
    Compact,
    EditSummary,
    FindInConversation,
    Interrupt,
    Op,
    PinItem,
    RetryTurn,
    Shutdown,
    UndoCompaction,
    UndoSummaryEdit,
    UpdateConfig,
    UserTurn,
)

__all__ = [
    "ApproveToolCall",
    "Compact",
    "EditSummary",
    "FindInConversation",
    "Interrupt",
    "Op",
    "PinItem",
    "RetryTurn",
    "Shutdown",
    "UndoCompaction",
    "UndoSummaryEdit",
    "UpdateConfig",
    "UserTurn",
]
