"""Ops a front end submits to a session (``await session.submit(ops.UserTurn(text=...))``)."""

from .protocol import (
    Compact,
    EditSummary,
    FindInConversation,
    InspectAttachments,
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
    "Compact",
    "EditSummary",
    "FindInConversation",
    "InspectAttachments",
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
