"""What a front end is told about the conversation as a whole: the entries of the model's
view, search matches, and pinned messages."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .base import _Event


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
    # What the model is sent for each attachment of a user message, in words.
    attachments: list[str] = []


class ConversationMatch(BaseModel):
    """One place a search found: its turn (1 = the first user message), whose it is ("user",
    "assistant", "tool", "summary"), the tool, when, an excerpt around the match, and how a
    front end finds its row: ``call_id`` for a tool call or output, else ``anchor``, a piece of
    the message's own text."""

    model_config = ConfigDict(frozen=True)

    turn: int
    role: str
    tool: str = ""
    time: str = ""
    excerpt: str
    call_id: str = ""
    anchor: str = ""
    in_view: bool = False
    # The conversation is a tree: the turn the match belongs to, and whether that turn is on
    # the active branch (a match on another branch is shown there after ``SwitchBranch``).
    turn_id: str = ""
    on_branch: bool = True


class ConversationMatches(_Event):
    """The answer to ``FindInConversation``, best first; ``message`` says so in words (no
    match, a query without words, a note about the index)."""

    type: Literal["conversation_matches"] = "conversation_matches"
    query: str
    matches: list[ConversationMatch] = Field(default_factory=list)
    message: str = ""


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
