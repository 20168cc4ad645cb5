"""Ops a front end submits to a session (``await session.submit(ops.UserTurn(text=...))``)."""

from .protocol import (
    Compact,
    EditSummary,
    EditTurn,
    FindInConversation,
    ForkSession,
    Interrupt,
    Op,
    PinItem,
    RegenerateTurn,
    RetryTurn,
    Shutdown,
    SwitchBranch,
    UndoCompaction,
    UndoSummaryEdit,
    UpdateConfig,
    UserTurn,
)

__all__ = [
    "Compact",
    "EditSummary",
    "EditTurn",
    "FindInConversation",
    "ForkSession",
    "Interrupt",
    "Op",
    "PinItem",
    "RegenerateTurn",
    "RetryTurn",
    "Shutdown",
    "SwitchBranch",
    "UndoCompaction",
    "UndoSummaryEdit",
    "UpdateConfig",
    "UserTurn",
]
