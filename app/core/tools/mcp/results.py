"""An MCP tool's result in words for the model: text as it is, images and audio named with their
type and size (the picture itself stays in the transcript), embedded resources with their text,
links by their address, structured content as JSON when nothing else says it."""

from __future__ import annotations

import json
from typing import Any

from mcp import types

from ..calls import ToolResult


def result_text(result: types.CallToolResult) -> ToolResult:
    """The tool's output as the model reads it, and whether the server called it a success."""
    parts: list[str] = []
    for block in result.content:
        parts.append(block_text(block))
    if result.structured_content is not None and not any(parts):
        parts.append(_json(result.structured_content))
    text = "\n".join(part for part in parts if part)
    if result.is_error:
        return ToolResult(f"The tool reported an error: {text or '(no details given)'}", ok=False)
    return ToolResult(text or "(the tool returned nothing)", ok=True)


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
