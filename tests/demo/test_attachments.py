"""The demo model says what it was sent: an image's format and size, a file's name and lines."""

from __future__ import annotations

import base64

from app.demo.attachments import describe_image, split_attachments
from app.demo.conversation import read_conversation
from app.demo.model.demo_model import DemoModel
from tests.attachment_files import png_bytes


def _url(data: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(data).decode()


def test_responses_parts_are_described() -> None:
    content = [
        {"type": "input_text", "text": "what are these?"},
        {"type": "input_text", "text": '<file name="notes.md">\nline one\nline two\n</file>'},
        {"type": "input_image", "image_url": _url(png_bytes(320, 200)), "detail": "high"},
    ]
    text, seen = split_attachments(content)
    assert text == "what are these?"
    assert seen[0] == "a file, **notes.md** (2 lines)"
    assert seen[1].startswith("an image, PNG 320x200 pixels")


def test_chat_image_url_parts_are_described_and_answered() -> None:
    items = [{
        "type": "message", "role": "user",
        "content": [
            {"type": "text", "text": "look"},
            {"type": "image_url", "image_url": {"url": _url(png_bytes(64, 48))}},
        ],
    }]
    reply = DemoModel().respond(read_conversation("", items, set()))
    assert reply.text is not None
    assert "PNG 64x48 pixels" in reply.text and "look" in reply.text


def test_an_unreadable_image_is_said_so() -> None:
    assert describe_image("data:image/png;base64,AAAA").startswith("an image I could not read")
    assert "by address" in describe_image("https://example.com/a.png")
