"""The words for a wait the window shows while a turn runs: the countdown before a retry and
the count of a stall. Rendering only: the figures come from the core's events (``StreamError``
with ``wait_seconds``, ``StreamWaiting``); the window ticks them on locally."""

from __future__ import annotations

import math


def seconds_text(seconds: float) -> str:
    """``42 s``, ``3 min 5 s`` for longer spans, ``1 h`` for a round hour."""
    total = max(0, round(seconds))
    if total < 120:
        return f"{total} s"
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{hours} h"] if hours else []
    if minutes:
        parts.append(f"{minutes} min")
    if secs and not hours:
        parts.append(f"{secs} s")
    return " ".join(parts)


def _capped(wait: float, requested: float | None) -> str:
    if requested is None or requested <= wait + 0.5:
        return ""
    return (
        f"; it asked for {seconds_text(requested)}, Coco waits at most {seconds_text(wait)}"
    )


def countdown_text(
    attempt_text: str, reason: str, remaining: float, wait: float, requested: float | None
) -> str:
    """The reconnect line while the retry waits: ``Reconnecting... 1/5 · Retrying in 42 s —
    the server is rate limiting requests; it asked for 1 h, Coco waits at most 60 s``."""
    left = math.ceil(max(0.0, remaining))
    head = f"Retrying in {seconds_text(left)}" if left > 0 else "Retrying now"
    why = f" — {reason}" if reason else ""
    return f"{attempt_text} · {head}{why}{_capped(wait, requested)}"


def waited_text(
    attempt_text: str, reason: str, wait: float, requested: float | None, stopped: bool = False
) -> str:
    """The reconnect line once the wait is over (or was cut short by Stop)."""
    why = f" · {reason}" if reason else ""
    if stopped:
        return f"{attempt_text}{why} · stopped while waiting to retry"
    return f"{attempt_text}{why} · retried after {seconds_text(wait)}{_capped(wait, requested)}"


def stall_text(seconds: float, timeout: float | None) -> str:
    """``Waiting for the server (12 s)… Coco gives up after 600 s without data``."""
    text = f"Waiting for the server ({seconds_text(math.floor(max(0.0, seconds)))})…"
    if timeout:
        text += f" Coco gives up after {seconds_text(timeout)} without data"
        text += " (the request timeout, in Settings)"
    return text


_OPENING_STAGES = {
    "reading": "Opening session…",
    "counting": "Counting the tokens of long messages…",
    "preparing": "Preparing long messages for display…",
}


def size_text(count: int) -> str:
    """``12 MB`` (bytes and characters alike: what matters is how far along it is)."""
    if count >= 10_000_000:
        return f"{count / 1_000_000:.0f} MB"
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f} MB"
    return f"{count / 1000:.0f} KB"


def opening_text(stage: str, done: int, total: int) -> str:
    """``Opening session… 12 MB of 50 MB`` (the stage's words, then how far it is)."""
    words = _OPENING_STAGES.get(stage, "Opening session…")
    if total <= 0:
        return words
    return f"{words} {size_text(done)} of {size_text(total)}"
