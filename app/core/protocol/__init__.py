"""The submission/event protocol between a front end and the core.

Front ends submit **ops** and render **events**; nothing else crosses the boundary. Every event
has a string field ``type``; the set of types is closed and listed in ``Event``. The ops and the
events are defined by concept in this package's modules (``ops``, ``turn``, ``compaction``,
``session``, ``conversation``), and every one is importable from here
(``from app.core import protocol as p``).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ..config import CoreConfig
from .compaction import (
    CompactionEnded,
    CompactionMarker,
    CompactionProgress,
    CompactionUndone,
    ContextCompacted,
    Strategy,
    SummaryEdited,
    Trigger,
    UndoAvailable,
)
from .conversation import ContextEntry, ConversationMatch, ConversationMatches, ItemPinned
from .ops import (
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
from .session import (
    Background,
    Error,
    ErrorKind,
    SessionConfigured,
    ShutdownComplete,
    Warning,
)
from .tools import (
    ApprovalDecision,
    ApproveToolCall,
    McpServerInfo,
    McpServers,
    McpToolInfo,
    ToolApprovalRequested,
    ToolApprovalResolved,
)
from .turn import (
    AgentMessage,
    AgentMessageDelta,
    ItemCompleted,
    ItemStarted,
    MessageNotSent,
    RetryAvailable,
    StreamError,
    StreamWaiting,
    TokenCount,
    TurnComplete,
    TurnItem,
    TurnKind,
    TurnStarted,
)

Event = Annotated[
    SessionConfigured
    | TurnStarted
    | ItemStarted
    | ItemCompleted
    | AgentMessageDelta
    | AgentMessage
    | TokenCount
    | CompactionProgress
    | ContextCompacted
    | CompactionUndone
    | CompactionEnded
    | Background
    | StreamError
    | StreamWaiting
    | Warning
    | Error
    | MessageNotSent
    | UndoAvailable
    | TurnComplete
    | ShutdownComplete
    | RetryAvailable
    | ItemPinned
    | SummaryEdited
    | ConversationMatches
    | ToolApprovalRequested
    | ToolApprovalResolved
    | McpServers,
    Field(discriminator="type"),
]

__all__ = [
    "AgentMessage",
    "AgentMessageDelta",
    "ApprovalDecision",
    "ApproveToolCall",
    "Background",
    "Compact",
    "CompactionEnded",
    "CompactionMarker",
    "CompactionProgress",
    "CompactionUndone",
    "ContextCompacted",
    "ContextEntry",
    "ConversationMatch",
    "ConversationMatches",
    "CoreConfig",
    "EditSummary",
    "Error",
    "ErrorKind",
    "Event",
    "FindInConversation",
    "Interrupt",
    "ItemCompleted",
    "ItemPinned",
    "ItemStarted",
    "McpServerInfo",
    "McpServers",
    "McpToolInfo",
    "MessageNotSent",
    "Op",
    "PinItem",
    "RetryAvailable",
    "RetryTurn",
    "SessionConfigured",
    "Shutdown",
    "ShutdownComplete",
    "Strategy",
    "StreamError",
    "StreamWaiting",
    "SummaryEdited",
    "TokenCount",
    "ToolApprovalRequested",
    "ToolApprovalResolved",
    "Trigger",
    "TurnComplete",
    "TurnItem",
    "TurnKind",
    "TurnStarted",
    "UndoAvailable",
    "UndoCompaction",
    "UndoSummaryEdit",
    "UpdateConfig",
    "UserTurn",
    "Warning",
]
