"""When automatic compaction fires (spec section 5)."""

from __future__ import annotations

from typing import Literal

from ..config import CoreConfig

AUTO_COMPACT_FRACTION = 0.9

# Context windows of well-known models, used when the settings do not give one.
_KNOWN_WINDOWS: tuple[tuple[str, int], ...] = (
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4", 8_192),
    ("gpt-3.5-turbo", 16_385),
    ("gpt-5", 400_000),
    ("o4-mini", 200_000),
    ("o3", 200_000),
    ("o1", 200_000),
    ("codex-mini", 200_000),
)


def context_window(config: CoreConfig, model: str | None = None) -> int | None:
    """The configured window, else the known window of the model, else unknown."""
    if config.context_window:
        return config.context_window
    name = (model or config.model).lower()
    for prefix, window in _KNOWN_WINDOWS:
        if name.startswith(prefix):
            return window
    return None


def auto_compact_limit(config: CoreConfig, model: str | None = None) -> int | None:
    """min(configured limit, 90 % of the window); 90 % when none is configured; None when
    neither the window nor a limit is known. A configured value above 90 % is clamped."""
    window = context_window(config, model)
    configured = config.auto_compact_token_limit
    if window is None:
        return configured
    ceiling = int(window * AUTO_COMPACT_FRACTION)
    if configured is None:
        return ceiling
    return min(configured, ceiling)


# ------------------------------------------------------------------ automatic decisions
# Pure functions: the session gathers the figures, these say what to do (spec section 5).


def grown_back(usage: int, limit: int, post_compaction: int | None) -> bool:
    """The loop guard: automatic compaction fires again only once the conversation has grown
    back over the limit from where the last compaction left it. A compaction that could not
    bring the history under the limit (a huge kept message) needs half a limit of new growth
    before the next one, so a conversation never compacts on every turn."""
    if post_compaction is None or post_compaction < limit:
        return usage >= limit
    return usage >= post_compaction + limit // 2


def should_compact_before_turn(
    *,
    auto: bool,
    history_len: int,
    usage: int,
    incoming: int,
    limit: int | None,
    unchanged_since_compaction: bool,
    post_compaction: int | None,
) -> bool:
    """Pre-turn: compact when the history plus the incoming message reaches the limit."""
    if not auto or history_len == 0 or limit is None or unchanged_since_compaction:
        return False
    return grown_back(usage + incoming, limit, post_compaction)


def should_compact_mid_turn(
    *,
    auto: bool,
    usage: int,
    limit: int | None,
    unchanged_since_compaction: bool,
    post_compaction: int | None,
) -> bool:
    """Mid-turn (tool calls pending, a follow-up request to make): compact when past the limit.
    A final answer never compacts mid-turn: the turn ends, then compacts (``should_compact_after
    _turn``), and the next turn compacts before it starts if that did not happen."""
    if not auto or limit is None or unchanged_since_compaction:
        return False
    return grown_back(usage, limit, post_compaction)


def should_compact_after_turn(
    *,
    auto: bool,
    usage: int,
    limit: int | None,
    unchanged_since_compaction: bool,
    post_compaction: int | None,
) -> bool:
    """A turn ended with the history past the limit: compact at once, while the person reads
    and types, rather than before the next message (which then goes straight to the model)."""
    if not auto or limit is None or unchanged_since_compaction:
        return False
    return grown_back(usage, limit, post_compaction)


OverflowAction = Literal["compact", "auto_off", "give_up"]


def on_overflow(*, auto: bool, already_retried: bool) -> OverflowAction:
    """A request overflowed the window: compact and retry once; auto compaction off is honoured."""
    if not auto:
        return "auto_off"
    if already_retried:
        return "give_up"
    return "compact"


def compaction_model_for_switch(
    previous_model: str | None, current_model: str, old_window: int | None, new_window: int | None
) -> str | None:
    """After a switch to a model with a smaller window, compact with the old one (it could read
    the whole history); None otherwise."""
    if not previous_model or previous_model == current_model:
        return None
    if old_window and new_window and new_window < old_window:
        return previous_model
    return None


def message_room(limit: int | None, overhead: int) -> int | None:
    """The largest message the model can be sent: with the instructions and tool definitions it
    must stay within the auto-compact limit, so the rest of the window is left for the answer."""
    if limit is None:
        return None
    return max(0, limit - overhead)
