"""An MCP tool's result in words for the model: text as it is, images and audio named with their
type and size (an image's bytes are kept beside the words, sent to models that take images), embedded resources with their text,
links by their address, structured content as JSON when nothing else says it."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from mcp import types

from ..calls import ToolResult


def result_text(result: types.CallToolResult) -> ToolResult:
    """The tool's output as the model reads it, and whether the server called it a success."""
    parts: list[str] = []
    images: list[tuple[str, bytes]] = []
    for block in result.content:
        parts.append(block_text(block))
        if isinstance(block, types.ImageContent) and (data := _decoded(block.data)):
            images.append((block.mime_type, data))
    if result.structured_content is not None and not any(parts):
        parts.append(_json(result.structured_content))
    text = "\n".join(part for part in parts if part)
    if result.is_error:
        return ToolResult(f"The tool reported an error: {text or '(no details given)'}", ok=False)
    return ToolResult(text or "(the tool returned nothing)", ok=True, images=tuple(images))


def block_text(block: Any) -> str:
    """One content block in words."""
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.ImageContent | types.AudioContent):
        kind = "image" if isinstance(block, types.ImageContent) else "audio"
        return f"[{kind}: {block.mime_type}, {_size(len(block.data) * 3 // 4)}]"
    if isinstance(block, types.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, types.TextResourceContents):
            return f"[resource {resource.uri}]\n{resource.text}"
        mime = resource.mime_type or "binary"
        return f"[resource {resource.uri}: {mime}, {_size(len(resource.blob) * 3 // 4)}]"
    if isinstance(block, types.ResourceLink):
        about = f" — {block.description}" if block.description else ""
        return f"[resource link {block.name}: {block.uri}{about}]"
    return f"[{getattr(block, 'type', 'unknown')} content]"


def _decoded(data: str) -> bytes | None:
    """An image block's bytes (``None`` when its base64 is broken: it is only named)."""
    try:
        return base64.b64decode(data, validate=True) or None
    except (binascii.Error, ValueError):
        return None


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, indent=1)
    except (TypeError, ValueError):
        return str(value)


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} bytes"
    if count < 1024 * 1024:
        return f"{count / 1024:.0f} KB"
    return f"{count / (1024 * 1024):.1f} MB"
