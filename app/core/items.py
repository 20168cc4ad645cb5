"""Responses-API items as plain JSON dicts, and the small predicates the core needs.

History items are kept as the exact dicts sent on the wire (``input`` of a Responses request),
so encrypted reasoning and compaction items replay byte for byte. These helpers build and read
them without ever mutating one in place.
"""

from __future__ import annotations

from typing import Any

Item = dict[str, Any]

# Opening tags of context blocks Coco injects itself; such user messages are not "real" user
# messages: compaction never keeps them and titles never use them.
ENVIRONMENT_CONTEXT_OPEN = "<environment_context>"
# ``<branch_summary>``: a branch left behind, carried into another (session/branch_summary/summary.py).
INJECTED_PREFIXES = (ENVIRONMENT_CONTEXT_OPEN, "<user_instructions>", "<branch_summary>")
# A user message's part naming an attachment (``app.core.attachments``); never sent as is.
ATTACHMENT = "coco_attachment"
# A tool output's key holding the images it returned, as ``ATTACHMENT`` parts; never sent as is.
TOOL_IMAGES = "coco_images"


def new_id(prefix: str) -> str:
    """A fresh id in the style the API uses (``msg_…``, ``fc_…``)."""
    import uuid  # here: the window imports this module before its first paint, ids come later

    return f"{prefix}_{uuid.uuid4().hex[:24]}"


def user_message(text: str) -> Item:
    """A user message input item with one ``input_text`` part."""
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def developer_message(text: str) -> Item:
    return {
        "type": "message",
        "role": "developer",
        "content": [{"type": "input_text", "text": text}],
    }


def assistant_message(text: str, item_id: str | None = None) -> Item:
    item: Item = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    if item_id:
        item["id"] = item_id
    return item


def function_call(name: str, arguments: str, call_id: str, item_id: str | None = None) -> Item:
    item: Item = {
        "type": "function_call",
        "name": name,
        "arguments": arguments,
        "call_id": call_id,
    }
    if item_id:
        item["id"] = item_id
    return item


def function_call_output(call_id: str, output: str) -> Item:
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def item_type(item: Item) -> str:
    return str(item.get("type", "message" if "role" in item else ""))


def is_message(item: Item, role: str | None = None) -> bool:
    if item_type(item) != "message":
        return False
    return role is None or item.get("role") == role


def message_text(item: Item) -> str:
    """All text parts of a message joined (``input_text``, ``output_text``, plain strings)."""
    content = item.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for part in content:
        if isinstance(part, dict) and part.get("type") in ("input_text", "output_text", "text"):
            parts.append(str(part.get("text", "")))
        elif isinstance(part, str):
            parts.append(part)
    return "".join(parts)


def attachment_parts(item: Item) -> list[dict[str, Any]]:
    """The attachments of a user message (``ATTACHMENT`` parts: a file's text or an image's
    stored copy, described by name, kind and size); the wire shape is made when sending."""
    content = item.get("content")
    if not isinstance(content, list):
        return []
    return [p for p in content if isinstance(p, dict) and p.get("type") == ATTACHMENT]


def attachment_block(part: dict[str, Any]) -> str:
    """The text a file attachment is sent as: its text in a block naming the file ("" for an
    image, which is sent as an image)."""
    if part.get("kind") == "image":
        return ""
    name = str(part.get("name", "")).replace('"', "'")
    return f'<file name="{name}">\n{part.get("text", "")}\n</file>'


def tool_images(item: Item) -> list[dict[str, Any]]:
    """The images a tool output returned (``ATTACHMENT`` parts under ``TOOL_IMAGES``)."""
    images = item.get(TOOL_IMAGES) if item_type(item) == "function_call_output" else None
    return [p for p in images if isinstance(p, dict)] if isinstance(images, list) else []


def attachment_tokens(item: Item) -> int:
    """What a message's (or a tool output's) images cost in tokens (their text-free part: the
    image rule's count made when attached)."""
    return sum(
        int(part.get("tokens") or 0)
        for part in [*attachment_parts(item), *tool_images(item)]
        if part.get("kind") == "image"
    )


def is_injected_context(item: Item) -> bool:
    """True for user/developer messages Coco injected (environment block, instructions)."""
    if not is_message(item) or item.get("role") not in ("user", "developer"):
        return False
    return is_injected_text(message_text(item))


def is_injected_text(text: str) -> bool:
    """True for the text of a message Coco injected (see :func:`is_injected_context`)."""
    return text.lstrip().startswith(INJECTED_PREFIXES)


def is_compaction_item(item: Item) -> bool:
    return item_type(item) in ("compaction", "compaction_summary")


def item_count_parts(item: Item) -> tuple[str, str]:
    """The text that stands for an item's size, split into what is readable (tokenised when
    counting) and what is opaque (``encrypted_content``: it still costs context, so its length
    counts, spec section 4; tokenising base64 would be slow and mean nothing)."""
    kind = item_type(item)
    if kind == "message":
        files = [attachment_block(part) for part in attachment_parts(item)]
        text = message_text(item)
        return (text + "\n\n" + "\n\n".join(files) if any(files) else text), ""
    if kind == "function_call":
        return f"{item.get('name', '')}{item.get('arguments', '')}", ""
    if kind == "function_call_output":
        output = item.get("output", "")
        return (output if isinstance(output, str) else str(output)), ""
    if kind == "reasoning":
        summary = item.get("summary") or []
        text = "".join(str(s.get("text", "")) for s in summary if isinstance(s, dict))
        return text, str(item.get("encrypted_content") or "")
    if is_compaction_item(item):
        return "", str(item.get("encrypted_content") or "")
    return str(item), ""


def item_text_for_count(item: Item) -> str:
    """The text whose length stands for an item's size in token estimates (readable and
    opaque parts together, see :func:`item_count_parts`)."""
    readable, opaque = item_count_parts(item)
    return readable + opaque


def last_assistant_text(items: list[Item]) -> str | None:
    """Text of the last assistant message in ``items`` (None if there is none)."""
    for item in reversed(items):
        if is_message(item, "assistant"):
            return message_text(item)
    return None
