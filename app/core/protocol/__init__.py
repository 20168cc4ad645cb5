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
from .attachments import AttachmentInfo, AttachmentsInspected
from .branches import (
    BranchReason,
    BranchSummaryCarried,
    BranchSummaryUndone,
    BranchSwitched,
    ConversationTree,
    SessionForked,
    TreeNode,
    TurnBranches,
)
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
    EditTurn,
    FindInConversation,
    ForkSession,
    InspectAttachments,
    Interrupt,
    Op,
    PinItem,
    RegenerateTurn,
    RetryTurn,
    Shutdown,
    SwitchBranch,
    UndoBranchSummary,
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
    ReplyReplaced,
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
    | ReplyReplaced
    | UndoAvailable
    | TurnComplete
    | ShutdownComplete
    | RetryAvailable
    | ItemPinned
    | SummaryEdited
    | ConversationMatches
    | BranchSwitched
    | BranchSummaryCarried
    | BranchSummaryUndone
    | TurnBranches
    | SessionForked
    | AttachmentsInspected
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
    "AttachmentInfo",
    "AttachmentsInspected",
    "Background",
    "BranchReason",
    "BranchSummaryCarried",
    "BranchSummaryUndone",
    "BranchSwitched",
    "Compact",
    "CompactionEnded",
    "CompactionMarker",
    "CompactionProgress",
    "CompactionUndone",
    "ContextCompacted",
    "ContextEntry",
    "ConversationMatch",
    "ConversationMatches",
    "ConversationTree",
    "CoreConfig",
    "EditSummary",
    "EditTurn",
    "Error",
    "ErrorKind",
    "Event",
    "FindInConversation",
    "ForkSession",
    "InspectAttachments",
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
    "RegenerateTurn",
    "ReplyReplaced",
    "RetryAvailable",
    "RetryTurn",
    "SessionConfigured",
    "SessionForked",
    "Shutdown",
    "ShutdownComplete",
    "Strategy",
    "StreamError",
    "StreamWaiting",
    "SummaryEdited",
    "SwitchBranch",
    "TokenCount",
    "ToolApprovalRequested",
    "ToolApprovalResolved",
    "TreeNode",
    "Trigger",
    "TurnBranches",
    "TurnComplete",
    "TurnItem",
    "TurnKind",
    "TurnStarted",
    "UndoAvailable",
    "UndoBranchSummary",
    "UndoCompaction",
    "UndoSummaryEdit",
    "UpdateConfig",
    "UserTurn",
    "Warning",
]
