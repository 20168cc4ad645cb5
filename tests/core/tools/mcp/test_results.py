"""An MCP result for the model (app/core/tools/mcp/results.py): text as it is, an image named
in the text with its bytes kept for models that take images, broken image data only named."""

from __future__ import annotations

import base64

from mcp import types

from app.core.tools.mcp.results import result_text

PNG = b"\x89PNG\r\n\x1a\n" + b"0" * 100


def test_an_image_is_named_in_the_text_and_its_bytes_kept() -> None:
    result = result_text(types.CallToolResult(content=[
        types.TextContent(type="text", text="a chart"),
        types.ImageContent(type="image", data=base64.b64encode(PNG).decode(),
                           mime_type="image/png"),
    ]))
    assert result.ok and result.output == "a chart\n[image: image/png, 108 bytes]"
    assert result.images == (("image/png", PNG),)


def test_broken_image_data_is_named_but_not_kept() -> None:
    result = result_text(types.CallToolResult(content=[
        types.ImageContent(type="image", data="not base64!!", mime_type="image/png"),
    ]))
    assert result.output.startswith("[image: image/png, ") and result.images == ()


def test_an_error_result_keeps_no_image() -> None:
    result = result_text(types.CallToolResult(is_error=True, content=[
        types.ImageContent(type="image", data=base64.b64encode(PNG).decode(),
                           mime_type="image/png"),
    ]))
    assert not result.ok and result.images == ()
