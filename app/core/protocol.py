"""The submission/event protocol between a front end and the core.

Front ends submit **ops** and render **events**; nothing else crosses the boundary. Every event
has a string field ``type``; the set of types is closed and listed in ``Event``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .config import CoreConfig

# ----------------------------------------------------------------------------------------- ops


class _Op(BaseModel):
    model_config = ConfigDict(frozen=True)


class UserTurn(_Op):
    """Send a user message and run the model until it gives a final answer."""

    op: Literal["user_turn"] = "user_turn"
    text: str


class Compact(_Op):
    """Compact the conversation now; ``focus`` steers what the summary keeps."""

    op: Literal["compact"] = "compact"
    focus: str | None = None


class Interrupt(_Op):
    """Stop the running turn or compaction."""

    op: Literal["interrupt"] = "interrupt"


class UndoCompaction(_Op):
    """Restore the history to what it was before the last compaction (until a turn starts)."""

    op: Literal["undo_compaction"] = "undo_compaction"


class UpdateConfig(_Op):
    """Apply new settings to the open session (model switch, compaction options, …)."""

    op: Literal["update_config"] = "update_config"
    config: CoreConfig


class Shutdown(_Op):
    op: Literal["shutdown"] = "shutdown"


class RetryTurn(_Op):
    """Run the last failed turn again on the history as it is: its user message is already
    there and is not recorded twice. The core refuses it (``Error``, kind ``invalid_op``)
    unless ``RetryAvailable`` last named a turn."""

    op: Literal["retry_turn"] = "retry_turn"


class PinItem(_Op):
    """Pin (``pinned=True``) or unpin a message of the transcript: a pinned message stays
    verbatim in the model's view through every compaction. ``key`` names a pinned message (from
    ``ItemPinned``); to pin, the row is named by its kind (``user_message``, ``agent_message``,
    ``function_call_output``), its id (a tool output's call id) and its text. The core decides,
    and answers with ``ItemPinned`` or an ``Error`` in words."""

    op: Literal["pin_item"] = "pin_item"
    pinned: bool = True
    key: str = ""
    kind: str = ""
    row_id: str = ""
    text: str = ""


class EditSummary(_Op):
    """Replace the summary compaction ``item_id`` left in the model's view with ``text``."""

    op: Literal["edit_summary"] = "edit_summary"
    item_id: str
    text: str


class UndoSummaryEdit(_Op):
    """Put back the summary text compaction ``item_id`` had before its last edit."""

    op: Literal["undo_summary_edit"] = "undo_summary_edit"
    item_id: str


Op = (
    UserTurn | Compact | Interrupt | UndoCompaction | UpdateConfig | Shutdown | RetryTurn
    | PinItem | EditSummary | UndoSummaryEdit
)

# -------------------------------------------------------------------------------------- events

TurnKind = Literal["regular", "compact"]
Trigger = Literal["manual", "auto", "overflow", "server"]
Strategy = Literal["local", "remote", "remote_then_local", "prune"]
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
    "storage",
    "tool",
    "internal",
]


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True)


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


class SessionConfigured(_Event):
    type: Literal["session_configured"] = "session_configured"
    session_id: str
    model: str
    resumed: bool = False
    rollout_path: str = ""


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


class CompactionProgress(_Event):
    """A stage change inside a running compaction, for the status indicator."""

    type: Literal["compaction_progress"] = "compaction_progress"
    turn_id: str
    stage: Literal["remote", "local", "retrying", "trimming", "prune"]
    message: str = ""
    trimmed: int = 0


class CompactionMarker(BaseModel):
    """What one compaction did: the marker the window draws, the figures a ``compacted``
    rollout record keeps and a transcript entry holds. Its fields are named here only; the
    event, the record and the transcript are built from it."""

    model_config = ConfigDict(frozen=True)

    item_id: str
    turn_id: str = ""
    trigger: Trigger = "manual"
    strategy: Strategy = "local"
    tokens_before: int = 0
    tokens_after: int = 0
    duration_ms: int = 0
    kept_user_messages: int = 0
    kept_truncated: bool = False
    trimmed_items: int = 0
    focus: str | None = None
    summary: str = ""
    style: str = "handoff"
    # The most instructions, tools and the compacted history may hold (half the auto-compact
    # limit, less the incoming message); None when the window is unknown.
    target: int | None = None
    # The user's new message, left out of a pre-turn compaction and put back after it: part of
    # ``tokens_after``, not of the compacted history.
    incoming_tokens: int = 0
    freed_share: float = 0.0  # (before - after) / before
    # It freed less than a fifth of the context: shown as a warning, never as a success.
    freed_little: bool = False
    # The model's summary was a fragment even after a retry with more room; with
    # ``kept_previous_summary`` the earlier summary was kept beside it.
    summary_cut_short: bool = False
    kept_previous_summary: bool = False
    pruned_outputs: int = 0  # strategy "prune": how many tool outputs became stubs
    # Strategy "remote" / "remote_then_local": which form the server was asked in ("trigger":
    # a compaction_trigger item on /responses, "standalone": /responses/compact, "server":
    # compaction inside a turn's response); for remote_then_local, the last form tried.
    remote_form: str | None = None
    # What checking the result against the target cut: dropped_messages, truncated_messages,
    # summary_truncated. None when nothing was cut.
    shrunk: dict[str, Any] | None = None
    # The keys of the pinned messages this compaction carried, verbatim, before the summary.
    carried_pins: list[str] = Field(default_factory=list)
    # What the carried-notes block holds after this compaction (issue 23): the user's facts in
    # their own words (oldest first), the files read or changed ("path (changed)") and the
    # commands run, and how many notes its budget forced out this time.
    carried_notes: list[str] = Field(default_factory=list)
    carried_files: list[str] = Field(default_factory=list)
    carried_commands: list[str] = Field(default_factory=list)
    carried_dropped: int = 0

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> CompactionMarker:
        """The marker a ``compacted`` rollout record (or a transcript entry) holds; fields an
        older record lacks or holds as null take their defaults."""
        fields = {
            key: value
            for key, value in record.items()
            if key in _MARKER_FIELDS and value is not None
        }
        fields["item_id"] = str(record.get("item_id") or "")
        return cls.model_validate(fields)

    def record(self) -> dict[str, Any]:
        """The marker's fields as plain data, for a rollout record or a transcript entry."""
        return self.model_dump()


_MARKER_FIELDS = frozenset(CompactionMarker.model_fields)


class ContextCompacted(CompactionMarker):
    """A compaction finished: its marker (this event is one), whether Undo would undo it now, and ``in_view``,
    the user messages the compacted history still holds verbatim (kept, or put back after
    it), whose rows above the marker are still in the model's view."""

    type: Literal["context_compacted"] = "context_compacted"
    undoable: bool = True
    in_view: list[str] = Field(default_factory=list)

    @classmethod
    def of(
        cls, marker: CompactionMarker, *, undoable: bool, in_view: list[str]
    ) -> ContextCompacted:
        return cls(**marker.record(), undoable=undoable, in_view=in_view)


class CompactionUndone(_Event):
    type: Literal["compaction_undone"] = "compaction_undone"
    item_id: str
    tokens: int


class CompactionEnded(_Event):
    """A compaction ended without changing anything: ``failed`` (its error is said beside it)
    or ``stopped`` by the user; ``focus`` is the one it was asked for (to try it again)."""

    type: Literal["compaction_ended"] = "compaction_ended"
    turn_id: str | None = None
    item_id: str
    status: Literal["failed", "stopped"]
    focus: str | None = None


class Background(_Event):
    type: Literal["background"] = "background"
    turn_id: str | None = None
    message: str


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


class Warning(_Event):
    type: Literal["warning"] = "warning"
    message: str


class Error(_Event):
    type: Literal["error"] = "error"
    message: str
    kind: ErrorKind = "internal"
    turn_id: str | None = None
    # The technical detail behind ``message`` (status line, server text, parser error), for a
    # "Details" view; never a secret.
    details: str = ""


class StreamWaiting(_Event):
    """The server has sent nothing for ``since_seconds`` while a reply was awaited (a stall):
    the window counts on from there. ``timeout_seconds`` is the request timeout after which
    Coco gives up on the attempt. ``stalled=False``: data flows again, the wait is over."""

    type: Literal["stream_waiting"] = "stream_waiting"
    turn_id: str
    since_seconds: float
    timeout_seconds: float | None = None
    stalled: bool = True


class UndoAvailable(_Event):
    """Whether ``UndoCompaction`` would do something now: after a turn starts, a compaction,
    an undo or a refusal, and when a session opens. The window shows Undo from this alone."""

    type: Literal["undo_available"] = "undo_available"
    item_id: str | None = None  # the compaction it would undo; None when nothing can be
    reason: str = ""  # why not, in words, when ``item_id`` is None


class ContextEntry(BaseModel):
    """One item of what the model will see next, as the Model view shows it: counted with the
    same counter as the gauge, the summary and injected context blocks named."""

    model_config = ConfigDict(frozen=True)

    role: str  # user / assistant / developer / system, or "" for non-messages
    kind: str  # message, function_call, function_call_output, reasoning, compaction, …
    tokens: int
    is_summary: bool = False
    injected: bool = False  # an environment / instructions block Coco added
    pinned: bool = False  # a message the user pinned (kept verbatim through compactions)
    carried_notes: bool = False  # the block of the user's facts, files and commands
    text: str = ""  # the readable content (messages, tool arguments and outputs)


class MessageNotSent(_Event):
    """The user's message did not reach the model (too large for the window, or it could not
    be made to fit): the window puts ``text`` back in the composer. ``reason`` says why."""

    type: Literal["message_not_sent"] = "message_not_sent"
    turn_id: str
    text: str
    reason: str


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


class ItemPinned(_Event):
    """A message was pinned or unpinned (``pinned``). ``key`` names it from now on; ``kind`` and
    ``row_id`` say which row (as the op named it); ``tokens`` is its size in the model's view;
    ``in_view``: the model sees it now (else from the next compaction); ``message`` says so in
    words."""

    type: Literal["item_pinned"] = "item_pinned"
    key: str
    pinned: bool
    kind: str = ""
    row_id: str = ""
    tokens: int = 0
    in_view: bool = True
    message: str = ""


class SummaryEdited(_Event):
    """The summary compaction ``item_id`` left in the model's view is now ``summary``:
    ``edited`` (it differs from what the model wrote), ``undoable`` (``UndoSummaryEdit`` would
    put back the text before the last edit)."""

    type: Literal["summary_edited"] = "summary_edited"
    item_id: str
    summary: str
    edited: bool = True
    undoable: bool = True
    tokens: int = 0


class ShutdownComplete(_Event):
    type: Literal["shutdown_complete"] = "shutdown_complete"


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
    | SummaryEdited,
    Field(discriminator="type"),
]
