"""What the demo model was sent besides words: images (their size and format, read from the
bytes of the data URL) and files (the blocks naming them: name and lines), so the offline demo
shows attachments arriving as a real model gets them."""

from __future__ import annotations

import base64
import binascii
import io
import re
from typing import Any

_FILE_BLOCK = re.compile(r'<file name="([^"]*)">\n(.*?)\n</file>', re.DOTALL)


def split_attachments(content: Any) -> tuple[str, list[str]]:
    """A user message's own text (file blocks taken out) and what each attachment is."""
    if not isinstance(content, list):
        return (content if isinstance(content, str) else ""), []
    texts: list[str] = []
    seen: list[str] = []
    for part in content:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "input_image":
            seen.append(describe_image(str(part.get("image_url", ""))))
        elif kind == "image_url":
            url = part.get("image_url")
            seen.append(describe_image(str(url.get("url", "") if isinstance(url, dict) else url)))
        elif isinstance(part.get("text"), str):
            text = part["text"]
            for match in _FILE_BLOCK.finditer(text):
                body = match.group(2)
                lines = body.count("\n") + 1 if body else 0
                pages = body.count("--- Page ")
                where = f"{pages} pages, " if pages else ""
                seen.append(f"a file, **{match.group(1)}** ({where}{lines:,} lines)")
            texts.append(_FILE_BLOCK.sub("", text).strip())
    return "\n".join(t for t in texts if t), seen


def describe_image(url: str) -> str:
    """An image as the demo model sees it: its format and size, or why it cannot."""
    header, _, data = url.partition(",")
    if not header.startswith("data:") or ";base64" not in header:
        return "an image given by address (I cannot fetch it offline)"
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return "an image whose data I could not decode"
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(raw)) as image:
            width, height = image.size
            fmt = str(image.format or "unknown")
    except (UnidentifiedImageError, OSError):
        return f"an image I could not read ({len(raw):,} bytes)"
    return f"an image, {fmt} {width}x{height} pixels ({len(raw):,} bytes)"


def attachments_answer(text: str, seen: list[str]) -> str:
    """The demo model's answer to a message with attachments: what arrived."""
    lines = ["Here is what I received with your message:", ""]
    lines += [f"- {what}" for what in seen]
    lines += [
        "",
        "I am the offline demo model, so I can only say what arrived, not read it closely."
        + (f" You asked: \u201c{text[:200]}\u201d." if text else ""),
    ]
    return "\n".join(lines)
