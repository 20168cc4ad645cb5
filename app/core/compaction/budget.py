"""How much room a compaction must leave, and how it shares that room (spec section 9).

Codex sizes a compaction with fixed numbers (20 000 tokens of kept user messages, a summary of
any length) that suit windows of 200k tokens and more. On a 16k window they leave the context
nearly full, so it compacts again on every turn; on a 4k window the summary has no room to be
written at all. Coco derives every figure from the window instead:

- the **target**: after any compaction the next request (instructions, tool definitions and
  history) holds at most half of the auto-compact limit, so the conversation has the other half
  to grow before the next one;
- the **summary budget**: a share of the history's room, passed as the compaction request's
  output limit, and reserved in the window before that request is sent;
- the **kept-message budget**: what the room holds beside the summary, with Codex's 20 000
  tokens as the ceiling for large windows.

When neither a window nor a limit is known there is nothing to derive from: Codex's rules apply.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# Codex's budget for user messages carried over verbatim: now a ceiling, not a fixed size.
KEPT_USER_MESSAGE_CEILING = 20_000
# After a compaction the next request is at most this share of the auto-compact limit.
TARGET_SHARE_OF_LIMIT = 0.5
# The summary gets this share of the history's room after the target...
SUMMARY_SHARE_OF_ROOM = 1 / 3
# ...within these bounds: a summary needs some room to say anything, and past a few thousand
# tokens a handoff note stops being a summary.
SUMMARY_FLOOR = 96
SUMMARY_CEILING = 4_000
# The kept messages' budget never falls below this: the newest user message always survives a
# compaction, middle-truncated if it must be (on a window too small for the target).
KEPT_FLOOR = 64
# The carried notes (the user's facts, files and commands, :mod:`carryover`) may take this
# share of the history's room, within these bounds; the kept messages get what they leave.
NOTES_SHARE_OF_ROOM = 0.3
NOTES_FLOOR = 96
NOTES_CEILING = 4_000
# Slack kept free in the window when deciding whether a request fits: the server's tokenizer is
# not Coco's (Gemma's counts ran up to 9 % above tiktoken's on English text).
FIT_MARGIN_SHARE = 0.06
FIT_MARGIN_FLOOR = 48
# A summary cut at the output limit shorter than this, or than a quarter of its budget, is a
# fragment ("Your"), not a summary.
MIN_SUMMARY_TOKENS = 16


@dataclass(frozen=True)
class CompactionBudget:
    """The figures one compaction works with. ``None`` where the window is unknown."""

    window: int | None
    limit: int | None
    target: int | None  # the most instructions, tools and the compacted history may hold
    overhead: int  # instructions + tool definitions: in every request, whatever the history
    summary: int | None  # the summary's output limit
    kept_ceiling: int  # the most the kept user messages may take

    @property
    def history_room(self) -> int | None:
        """What the rebuilt history (kept messages, context blocks, summary) may take."""
        if self.target is None:
            return None
        return max(0, self.target - self.overhead)

    def kept_budget(self, summary_tokens: int, context_tokens: int = 0) -> int:
        """What the kept user messages may take once the summary's real size is known."""
        room = self.history_room
        if room is None:
            return self.kept_ceiling
        # Never nothing: the user's last words reach the model, shortened if they must be.
        return max(KEPT_FLOOR, min(self.kept_ceiling, room - summary_tokens - context_tokens))

    def notes_budget(self) -> int:
        """The most the carried-notes block may take: a share of the history's room (so the
        half-limit target holds whatever the notes hold), the ceiling when no window is known."""
        room = self.history_room
        if room is None:
            return NOTES_CEILING
        return min(NOTES_CEILING, max(NOTES_FLOOR, int(room * NOTES_SHARE_OF_ROOM)))

    def fit_margin(self) -> int:
        if self.window is None:
            return 0
        return max(FIT_MARGIN_FLOOR, math.ceil(self.window * FIT_MARGIN_SHARE))


def compaction_budget(
    window: int | None, limit: int | None, overhead: int, incoming: int = 0
) -> CompactionBudget:
    """The budget for one compaction.

    ``overhead``: tokens of the instructions and tool definitions. ``incoming``: a message that
    will be sent right after the compaction (pre-turn shape); the target shrinks by its size, so
    that the next request with it stays within half the limit whenever the message leaves room.
    """
    if limit is None and window is None:
        return CompactionBudget(None, None, None, overhead, None, KEPT_USER_MESSAGE_CEILING)
    base = limit if limit is not None else window
    assert base is not None
    # The incoming message is part of the next request: the history gets what it leaves, and
    # at least the room for a minimal summary and the user's last words.
    target = max(
        int(base * TARGET_SHARE_OF_LIMIT) - incoming, overhead + SUMMARY_FLOOR + KEPT_FLOOR
    )
    room = max(0, target - overhead)
    summary = min(SUMMARY_CEILING, max(SUMMARY_FLOOR, int(room * SUMMARY_SHARE_OF_ROOM)))
    kept_ceiling = min(KEPT_USER_MESSAGE_CEILING, max(0, room - summary))
    return CompactionBudget(window, limit, target, overhead, summary, kept_ceiling)


def request_room(budget: CompactionBudget, output_limit: int | None) -> int | None:
    """How many tokens a compaction request's input may take so that the window still holds
    the answer: the window, less the output limit, less the fit margin."""
    if budget.window is None:
        return None
    return max(0, budget.window - budget.fit_margin() - (output_limit or 0))


def is_fragment(summary_tokens: int, output_limit: int | None, cut_at_limit: bool) -> bool:
    """Whether a summary is too short to stand for the conversation: empty, or cut at the
    output limit well before the limit itself (the window stopped it, not the budget). A short
    summary the model ended by itself is its answer, not a fragment."""
    if summary_tokens == 0:
        return True
    if not cut_at_limit:
        return False
    if output_limit is None:
        return summary_tokens < MIN_SUMMARY_TOKENS
    return summary_tokens < max(MIN_SUMMARY_TOKENS, output_limit // 4)
