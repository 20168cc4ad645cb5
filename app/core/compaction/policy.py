"""When automatic compaction fires (spec section 5)."""

from __future__ import annotations

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
