"""The ops a front end submits to a session: each a frozen model named by its ``op`` field;
``Op`` is their union."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..config import CoreConfig
from .base import _Op
from .tools import ApproveToolCall


class UserTurn(_Op):
    """Send a user message and run the model until it gives a final answer."""

    op: Literal["user_turn"] = "user_turn"
    text: str
    # Files sent with the message (paths): text files, PDFs, images. Each is read, stored
    # beside the session by content hash and sent in the API's shape; a file that cannot be
    # sent refuses the whole message, in words, before anything is sent.
    attachments: list[str] = Field(default_factory=list)


class InspectAttachments(_Op):
    """Read files the user is about to attach and say what each costs (or why it cannot be
    attached); the core answers with ``AttachmentsInspected``."""

    op: Literal["inspect_attachments"] = "inspect_attachments"
    paths: list[str]


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


class FindInConversation(_Op):
    """Search the whole conversation (what compaction removed from the model's view too); the
    core answers with ``ConversationMatches``."""

    op: Literal["find_in_conversation"] = "find_in_conversation"
    query: str
    limit: int = 50


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


class EditTurn(_Op):
    """Send ``text`` in place of turn ``turn_id``'s message: a new branch from that turn's
    parent, which runs at once; the old branch stays. ``carry_summary``: a short summary of the
    branch left behind goes with it (``None``: the ``branch_summary`` setting decides)."""

    op: Literal["edit_turn"] = "edit_turn"
    turn_id: str
    text: str
    carry_summary: bool | None = None
    # The original's attachments the edit keeps, by their stored file names (``None``: all).
    keep_attachments: list[str] | None = None


class RegenerateTurn(_Op):
    """Answer turn ``turn_id``'s message again, on a new branch from the same parent, with the
    input that turn was sent; the earlier answer stays as its sibling."""

    op: Literal["regenerate_turn"] = "regenerate_turn"
    turn_id: str


class SwitchBranch(_Op):
    """Make active the branch that holds turn ``turn_id`` (its newest turn); the model then
    sees exactly what it saw there. ``carry_summary`` as for ``EditTurn``."""

    op: Literal["switch_branch"] = "switch_branch"
    turn_id: str
    carry_summary: bool | None = None


class ForkSession(_Op):
    """A new session holding the path up to and including turn ``turn_id``; answered by
    ``SessionForked``. The original is untouched."""

    op: Literal["fork_session"] = "fork_session"
    turn_id: str


class UndoBranchSummary(_Op):
    """Take the summary of a branch left behind, carried into turn ``turn_id`` by an edit or a
    switch, out of the model's view again; answered by ``BranchSummaryUndone``."""

    op: Literal["undo_branch_summary"] = "undo_branch_summary"
    turn_id: str


Op = (
    UserTurn | Compact | Interrupt | UndoCompaction | UpdateConfig | Shutdown | RetryTurn
    | PinItem | EditSummary | UndoSummaryEdit | FindInConversation | EditTurn | RegenerateTurn
    | SwitchBranch | ForkSession | UndoBranchSummary | InspectAttachments | ApproveToolCall
)
