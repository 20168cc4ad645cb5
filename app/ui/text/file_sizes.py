"""A file's size in words ("1.2 MB"), as the composer's chips and the sent messages show it."""

from __future__ import annotations


def size_words(size: int) -> str:
    """``size`` bytes in the largest unit under 1024 of it, one decimal (B, KB, MB, GB)."""
    if size < 1024:
        return f"{size} B"
    value = float(size)
    for unit in ("KB", "MB", "GB"):
        value /= 1024
        if value < 1024 or unit == "GB":
            break
    return f"{value:.1f} {unit}"
