"""Checking what a compaction freed (spec section 9): the share of the context it freed, and
what is said when it freed little, made the context larger or came back cut short."""

from __future__ import annotations

from dataclasses import dataclass

from .junk_summary import Junk, junk_words
from .paths.path import PathResult

LOCAL_COMPACTION_WARNING = (
    "Heads up: long conversations and repeated compactions make the model less accurate. "
    "Start a new conversation when you can."
)
# A compaction that frees less than this share of the context is reported as a warning.
LITTLE_FREED_SHARE = 0.2


@dataclass(frozen=True)
class RoomCheck:
    """What one compaction freed, and the warnings it gives."""

    freed_share: float
    freed_little: bool
    warnings: tuple[str, ...]
    # The once-a-session "long conversations" warning is among ``warnings``.
    warned_local: bool


def freed(before: int, after: int) -> tuple[float, bool]:
    """The share of ``before`` a compaction freed, and whether that is little."""
    share = (before - after) / before if before > 0 else 0.0
    return share, before > 0 and share < LITTLE_FREED_SHARE


def check_room(result: PathResult, before: int, after: int, *, warned: bool) -> RoomCheck:
    """Check ``result`` that took the context from ``before`` to ``after`` tokens; ``warned``:
    the session has said the long-conversations warning already."""
    freed_share, little = freed(before, after)
    texts: list[str] = []
    if result.summary_unusable is not None:
        texts.append(unusable_warning(result.summary_unusable, result.kept_previous_summary))
    elif result.cut_short and result.kept_previous_summary:
        texts.append(
            "The model's summary came back cut short, so the earlier summary was kept "
            "beside it. Nothing it held was lost."
        )
    elif result.cut_short:
        texts.append(
            "The model's summary came back cut short; your recent messages were kept "
            "verbatim. Try /compact again, or a compaction model with a larger window."
        )
    if before > 0 and after > before:
        texts.append(
            f"This compaction made the context larger ({before:,} → {after:,} tokens): "
            "the conversation is still short, so the summary outweighs what it replaced. "
            "Undo puts it back; compacting pays off once the conversation is longer."
        )
    elif before > 0 and freed_share < LITTLE_FREED_SHARE:
        texts.append(
            f"This compaction freed little room ({before:,} → {after:,} tokens, "
            f"{max(0, round(freed_share * 100))} %). Most of what is left is recent; "
            "start a new conversation if the model struggles."
        )
    warned_local = result.strategy not in ("remote", "prune") and not warned
    if warned_local:
        texts.append(LOCAL_COMPACTION_WARNING)
    return RoomCheck(
        freed_share=freed_share,
        freed_little=little,
        warnings=tuple(texts),
        warned_local=warned_local,
    )


def unusable_warning(junk: Junk, kept_previous: bool) -> str:
    """What is said when the model's summary was junk even after a retry."""
    if kept_previous:
        return (
            f"The model's summary was unusable ({junk_words(junk)}), so the earlier summary "
            "was kept. Nothing it held was lost."
        )
    return (
        f"The model's summary was unusable ({junk_words(junk)}), so none was installed: your "
        "recent messages, pins and carried notes carry the conversation. Try /compact again, "
        "or a stronger compaction model."
    )
