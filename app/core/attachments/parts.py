"""An attachment as a user message's part (``items.ATTACHMENT``): what it is (name, kind,
size, an image's dimensions, a file's lines and pages), where its bytes are stored, and the
short text that stands for it once it leaves the model's view."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..items import ATTACHMENT, Item, attachment_parts, message_text
from .errors import size_words

Part = dict[str, Any]

KIND_WORDS = {"text": "text file", "pdf": "PDF", "image": "image"}


def attachment_message(text: str, parts: list[Part]) -> Item:
    """A user message: its text, then its attachments (a message may be attachments only)."""
    content: list[Part] = [{"type": "input_text", "text": text}] if text or not parts else []
    return {"type": "message", "role": "user", "content": [*content, *parts]}


def retexted(item: Item, text: str, keep: list[str] | None = None) -> Item:
    """A user message with ``text`` in place of its own, its attachments kept (an edit): all
    of them, or those whose stored file ``keep`` names."""
    parts = attachment_parts(item)
    if keep is not None:
        parts = [part for part in parts if part.get("file") in keep]
    return attachment_message(text, parts)


def describe(part: Part) -> str:
    """What an attachment is, in a few words ("shot.png, PNG image 3840x2160, 1.2 MB")."""
    name = str(part.get("name", "attachment"))
    kind = str(part.get("kind", ""))
    size = size_words(int(part.get("size") or 0))
    if kind == "image":
        fmt = str(part.get("mime", "image/")).split("/")[-1].upper()
        return f"{name}, {fmt} image {part.get('width')}x{part.get('height')}, {size}"
    if kind == "pdf":
        return f"{name}, PDF, {part.get('pages')} pages, {size}"
    return f"{name}, text file, {part.get('lines')} lines, {size}"


def sent_description(part: Part) -> str:
    """What the model is sent for an attachment, in words (the Model view)."""
    if part.get("kind") == "image":
        fmt = str(part.get("sent_mime", "image/")).split("/")[-1].upper()
        return (
            f"{part.get('name')}: sent as an image, {fmt} {part.get('sent_width')}x"
            f"{part.get('sent_height')} (from {part.get('width')}x{part.get('height')}), "
            f"about {int(part.get('tokens') or 0):,} tokens"
        )
    what = f"{part.get('pages')} pages of text" if part.get("kind") == "pdf" else "its text"
    return f"{part.get('name')}: sent as {what} in a block naming the file, " \
        f"{part.get('lines')} lines"


def stand_in(part: Part) -> str:
    """The text an attachment is replaced by once it leaves the model's view (a compaction,
    the summary request, prune): it names it, so the model knows it existed."""
    return f"[Attached {KIND_WORDS.get(str(part.get('kind')), 'file')} no longer shown: " \
        f"{describe(part)}]"


def with_stand_ins(item: Item) -> Item:
    """``item`` with its attachments as their stand-in texts (a new dict; the same item when
    it has none)."""
    if not attachment_parts(item):
        return item
    content = [
        {"type": "input_text", "text": stand_in(part)}
        if isinstance(part, dict) and part.get("type") == ATTACHMENT else part
        for part in item.get("content") or []
    ]
    return {**item, "content": content}


def text_with_stand_ins(item: Item) -> str:
    """A message's text followed by its attachments' stand-ins (what a compaction keeps of a
    user message)."""
    text = message_text(item)
    names = [stand_in(part) for part in attachment_parts(item)]
    return "\n\n".join([text, *names]) if names and text else "\n\n".join(names) or text


def display(part: Part, folder: Path | None) -> dict[str, Any]:
    """An attachment as the window shows it: name, kind, size, dimensions, its tokens, the
    stored file's path, and whether that file is missing (moved, deleted or damaged)."""
    shown = {key: value for key, value in part.items() if key not in ("type", "text")}
    shown["description"] = describe(part)
    path = folder / str(part.get("file")) if folder is not None and part.get("file") else None
    shown["path"] = str(path) if path is not None else ""
    shown["missing"] = path is None or not path.is_file()
    return shown


def message_display(item: Item, folder: Path | None) -> list[dict[str, Any]]:
    return [display(part, folder) for part in attachment_parts(item)]
