"""Rebuilding the history after a local compaction (spec section 3, steps 6 and 7)."""

from __future__ import annotations

from dataclasses import dataclass

from ..items import Item, is_injected_context, is_message, message_text, user_message
from ..tokens import approx_tokens, truncate_middle
from .prompts import is_summary_message, summary_text

# Codex's budget for user messages carried over verbatim.
KEPT_USER_MESSAGE_TOKENS = 20_000


@dataclass(frozen=True)
class RebuiltHistory:
    items: list[Item]
    kept_user_messages: int
    kept_truncated: bool


def real_user_messages(history: list[Item]) -> list[str]:
    """Texts of the user's own messages: no injected context blocks, no earlier summaries."""
    return [
        message_text(item)
        for item in history
        if is_message(item, "user")
        and not is_injected_context(item)
        and not is_summary_message(item)
    ]


def select_kept_messages(
    messages: list[str], budget: int = KEPT_USER_MESSAGE_TOKENS
) -> tuple[list[str], bool]:
    """Newest first within ``budget`` tokens; the first that does not fit is middle-truncated
    to what remains and the walk stops. Returned in chronological order."""
    kept: list[str] = []
    remaining = budget
    truncated = False
    for text in reversed(messages):
        if remaining <= 0:
            break
        cost = approx_tokens(text)
        if cost <= remaining:
            kept.append(text)
            remaining -= cost
            continue
        shortened, _ = truncate_middle(text, remaining)
        kept.append(shortened)
        truncated = True
        break
    kept.reverse()
    return kept, truncated


def build_compacted_history(
    history: list[Item],
    summary: str,
    *,
    initial_context: list[Item] | None = None,
    budget: int = KEPT_USER_MESSAGE_TOKENS,
) -> RebuiltHistory:
    """Kept user messages + the summary message (a user message, last).

    ``initial_context`` is given for mid-turn compaction only: it goes just before the last
    kept user message, so the summary stays last (spec section 3, step 7).
    """
    kept, truncated = select_kept_messages(real_user_messages(history), budget)
    items: list[Item] = [user_message(text) for text in kept]
    if initial_context:
        position = len(items) - 1 if items else 0
        items[position:position] = list(initial_context)
    items.append(user_message(summary_text(summary)))
    return RebuiltHistory(items=items, kept_user_messages=len(kept), kept_truncated=truncated)


def filter_remote_output(output: list[Item]) -> list[Item]:
    """Keep what the remote compact endpoint returned that belongs in history: user and
    assistant messages and compaction items; drop developer messages, injected context,
    reasoning and tool traffic (spec section 4)."""
    kept: list[Item] = []
    for item in output:
        kind = item.get("type", "message" if "role" in item else "")
        if kind in ("compaction", "compaction_summary") or (
            kind == "message"
            and item.get("role") in ("user", "assistant")
            and not is_injected_context(item)
        ):
            kept.append(item)
    return kept
