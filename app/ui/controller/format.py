"""Short texts the window shows: token figures, the context gauge, compaction progress."""

from __future__ import annotations

import math

STAGE_TEXT = {
    "remote": "Compacting remotely…",
    "local": "Summarising locally…",
    "prune": "Removing old tool outputs…",
    "retrying": "Retrying…",
    "trimming": "Trimming older items…",
}

TRIGGER_TEXT = {
    "manual": "manual",
    "auto": "automatic",
    "overflow": "automatic (context overflow)",
    "server": "by the server",
}

STRATEGY_TEXT = {
    "local": "local summary",
    "remote": "remote",
    "remote_then_local": "remote failed → local summary",
    "prune": "old tool outputs removed",
}
# Which remote form ran (the core's ``remote_form``).
REMOTE_FORM_TEXT = {
    "trigger": "remote (compaction trigger)",
    "standalone": "remote (/responses/compact)",
    "server": "inside the turn",
}


def format_tokens(n: int) -> str:
    """``182000`` → ``182k``; ``1500`` → ``1.5k``; ``950`` → ``950``; ``2_300_000`` → ``2.3M``."""
    if n < 1000:
        return str(n)
    if n < 10_000:
        return f"{n / 1000:.1f}".rstrip("0").rstrip(".") + "k"
    if n < 1_000_000:
        return f"{round(n / 1000)}k"
    return f"{n / 1_000_000:.1f}".rstrip("0").rstrip(".") + "M"


def format_duration(ms: int) -> str:
    """``2100`` → ``2.1 s``; ``95000`` → ``1 min 35 s``."""
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes} min {rest} s"


def gauge_percent(total: int, context_window: int | None) -> int | None:
    """Share of the window in use, 0–100 (clamped), or None when the window is unknown."""
    if not context_window or context_window <= 0:
        return None
    return max(0, min(100, math.floor(total * 100 / context_window)))


def gauge_text(
    total: int,
    context_window: int | None,
    auto_compact_limit: int | None,
    approximate: bool,
    auto_compact: bool = True,
) -> str:
    """The status-bar line, e.g. ``41 % of context used · auto-compact at 90 %``."""
    approx = "≈" if approximate else ""
    percent = gauge_percent(total, context_window)
    if percent is None:
        head = f"{approx}{format_tokens(total)} tokens in context"
    else:
        head = f"{approx}{percent} % of context used"
    if not auto_compact:
        return f"{head} · auto-compact off"
    if auto_compact_limit and context_window:
        limit_percent = round(auto_compact_limit * 100 / context_window)
        return f"{head} · auto-compact at {limit_percent} %"
    if auto_compact_limit:
        return f"{head} · auto-compact at {format_tokens(auto_compact_limit)} tokens"
    return head


def gauge_level(total: int, context_window: int | None, auto_compact_limit: int | None) -> str:
    """``ok``, ``near`` (within 15 points of the limit) or ``over`` (at/after the limit)."""
    limit = auto_compact_limit or (int(context_window * 0.9) if context_window else None)
    if not limit:
        return "ok"
    if total >= limit:
        return "over"
    if context_window and total >= limit - context_window * 0.15:
        return "near"
    if not context_window and total >= limit * 0.8:
        return "near"
    return "ok"


def progress_text(
    stage: str, elapsed_s: float, trimmed: int = 0, automatic: bool = False, message: str = ""
) -> str:
    """The spinner's line, e.g. ``Compacting remotely (compaction trigger)… 2.1 s``: the core's
    own words for the stage (``message``) when it gave them, else a text for the stage."""
    if message:
        text = message
    elif stage in ("retrying", "trimming") and trimmed:
        noun = "item" if trimmed == 1 else "items"
        text = f"Retrying (trimmed {trimmed} {noun})…"
    else:
        text = STAGE_TEXT.get(stage, "Compacting…")
    prefix = "Auto-compacting · " if automatic else ""
    return f"{prefix}{text} {elapsed_s:.1f} s"


def model_text(model: str, base_url: str, demo: bool = False, provider: str = "") -> str:
    """The status bar's model line: ``llama.cpp · gemma-3 · http://127.0.0.1:8080/v1`` (the
    provider named when it is a known one); the offline demo model only when the session
    really runs on it (not whenever a model is so named)."""
    if demo:
        return f"{model} · offline demo model"
    return " · ".join(part for part in (provider, model, base_url) if part)


def retry_text(message: str, attempt: int, max_attempts: int) -> str:
    """A reconnect notice with its attempt count once: the core's message may carry it
    already ("Reconnecting... 2/5"), else it is added ("Rate limited (2/5)")."""
    count = f"{attempt}/{max_attempts}"
    return message if count in message else f"{message} ({count})"


def retry_detail(
    text: str, reason: str, wait_seconds: float | None, requested_seconds: float | None
) -> str:
    """The reconnect line with why the core retries and how long it waits, in its words:
    ``Reconnecting... 2/5 · the server is rate limiting requests · next try in 60 s (the
    server asked for 3600 s)``."""
    parts = [text]
    if reason:
        parts.append(reason)
    if wait_seconds is not None and wait_seconds >= 1:
        wait = f"next try in {wait_seconds:.0f} s"
        if requested_seconds is not None and requested_seconds > wait_seconds + 0.5:
            wait += f" (the server asked for {requested_seconds:.0f} s)"
        parts.append(wait)
    return " · ".join(parts)


def compacted_text(tokens_before: int, tokens_after: int) -> str:
    """``Context compacted 182k → 21k tokens``."""
    return f"Context compacted {format_tokens(tokens_before)} → {format_tokens(tokens_after)} tokens"
