"""The room a message's attachments take, known from the event alone (no Qt, nothing read):
a row estimates its height before it has a widget, and a thumbnail's box is the right size
before its image is decoded, so nothing moves when it arrives."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

THUMB_HEIGHT = 96  # a thumbnail's height at most, in a message row
THUMB_MAX_WIDTH = 240
CHIP_HEIGHT = 28  # a file's chip
SPACING = 6


def fit(width: int, height: int, box_width: int, box_height: int) -> tuple[int, int]:
    """``width`` x ``height`` scaled to fit the box, keeping its shape, never enlarged."""
    scale = min(1.0, box_width / max(1, width), box_height / max(1, height))
    return max(1, round(width * scale)), max(1, round(height * scale))


def thumb_size(shown: Mapping[str, Any]) -> tuple[int, int]:
    """The thumbnail's size of an image attachment as the event shows it (its ``width`` and
    ``height``); a square when the event does not say."""
    width, height = int(shown.get("width") or 0), int(shown.get("height") or 0)
    if width <= 0 or height <= 0:
        return THUMB_HEIGHT, THUMB_HEIGHT
    return fit(width, height, THUMB_MAX_WIDTH, THUMB_HEIGHT)


def is_image(shown: Mapping[str, Any]) -> bool:
    return shown.get("kind") == "image"


def strip_height(attachments: Sequence[Mapping[str, Any]], width: int) -> int:
    """About the height the attachments take in a row ``width`` pixels wide: the thumbnails
    flowed in lines, then the file chips flowed in lines."""
    if not attachments:
        return 0
    usable = max(1, width - 24)
    height = 0
    images = [thumb_size(a)[0] for a in attachments if is_image(a)]
    files = [8 * (len(str(a.get("name", ""))) + 12) for a in attachments if not is_image(a)]
    for widths, line in ((images, THUMB_HEIGHT), (files, CHIP_HEIGHT)):
        lines, used = 0, usable + 1
        for item in widths:
            if used + SPACING + item > usable:
                lines, used = lines + 1, item
            else:
                used += SPACING + item
        height += lines * (line + SPACING)
    return height
