"""What a recall search finds: the passages (hits), where each comes from and whether the
model still sees it, and how the search went."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RecallHit:
    """One passage found: where it comes from, its text, and whether the model still sees the
    item it belongs to."""

    turn: int  # the user message it follows (1 = the first); 0 before any
    role: str  # "user", "assistant", "tool", "summary"
    tool: str  # the tool that was called or answered ("" for messages)
    time: str  # the record's timestamp (ISO-8601 UTC)
    text: str
    in_view: bool
    seq: int  # the rollout record it comes from (0-based, in order)
    call_id: str = ""  # the tool call it made or answered
    all_words: bool = True  # it holds every word of the query (else some of them)


@dataclass(frozen=True)
class RecallResult:
    hits: list[RecallHit]
    all_words: bool  # some passage holds every word (else: the best with some of them)
    note: str = ""  # how the index is kept, when it is not as usual (in memory, rebuilt)
