"""What a front end is told about the conversation as a tree: a branch made active, the
siblings of a turn, a fork, and the tree itself for a panel that draws it."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .base import _Event

BranchReason = Literal["edit", "regenerate", "switch"]


class BranchSwitched(_Event):
    """Another branch is active (``reason``): its newest turn is ``turn_id`` (``""`` for an
    empty branch). The model sees that branch's view from now on; a front end draws the
    conversation again from ``Session.replay_events()``, as when it was opened. ``summary``: the
    branch left behind carried into this one in a few lines, when it was."""

    type: Literal["branch_switched"] = "branch_switched"
    turn_id: str
    reason: BranchReason
    summary: str = ""


class BranchSummaryCarried(_Event):
    """A summary of the branch left behind was carried into turn ``turn_id`` (the model reads
    it there): ``text``, written by the model, or with ``by_model`` false the person's own
    words from that branch. ``undone``: taken out again (``UndoBranchSummary``). Emitted in a
    replay, which draws the conversation again after a branch op."""

    type: Literal["branch_summary_carried"] = "branch_summary_carried"
    turn_id: str
    text: str
    by_model: bool = True
    undone: bool = False


class BranchSummaryUndone(_Event):
    """The summary carried into turn ``turn_id`` is out of the model's view again."""

    type: Literal["branch_summary_undone"] = "branch_summary_undone"
    turn_id: str


class TurnBranches(_Event):
    """Turn ``turn_id`` has siblings (other answers to the same point of the conversation):
    ``siblings`` in the order they were made, ``turn_id`` at ``index`` among them. ``regenerated``:
    all of them answer the same message (the choice belongs to the answer rather than the
    message). Emitted in a replay and when a branch is made."""

    type: Literal["turn_branches"] = "turn_branches"
    turn_id: str
    siblings: list[str]
    index: int
    regenerated: bool = False


class SessionForked(_Event):
    """A fork of this session was written: ``session_id`` holds the path up to and including
    ``turn_id`` of ``source_session_id``, titled ``title``."""

    type: Literal["session_forked"] = "session_forked"
    session_id: str
    source_session_id: str
    turn_id: str
    title: str = ""


class TreeNode(BaseModel):
    """One turn of the conversation tree: the turn it follows, its message (clipped), how many
    compactions ran in it, and whether it is on the active path."""

    model_config = ConfigDict(frozen=True)

    turn_id: str
    parent: str | None
    label: str
    compactions: int = 0
    active: bool = False


class ConversationTree(BaseModel):
    """The whole tree, turns in the order they were made (``Session.tree()``); ``active``: the
    newest turn of the active branch."""

    model_config = ConfigDict(frozen=True)

    nodes: list[TreeNode] = Field(default_factory=list)
    active: str | None = None
