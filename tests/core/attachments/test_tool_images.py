"""A tool output's images on the wire (app/core/attachments/wire.py, providers/chat_request.py):
``input_image`` parts after the output's text for a model that takes images, described in the
text for one that does not, a missing file named, never the private key; on Chat Completions a
user message of ``image_url`` parts after the run of tool messages."""

from __future__ import annotations

from app.core.attachments.wire import image_files, stand_in_items, wire_items
from app.core.items import TOOL_IMAGES, Item, attachment_tokens, function_call_output
from app.core.providers.chat_request import TOOL_IMAGES_TEXT, items_to_messages

PART = {
    "type": "coco_attachment", "kind": "image", "name": "shot-image-1.png", "size": 2048,
    "mime": "image/png", "width": 640, "height": 480, "sent_width": 640, "sent_height": 480,
    "tokens": 441, "file": "abc.png", "sent_file": "abc.png", "sent_mime": "image/png",
}
URL = "data:image/png;base64,AAAA"


def output_with_image(call_id: str = "c1") -> Item:
    return {**function_call_output(call_id, "a chart\n[image: image/png, 2 KB]"),
            TOOL_IMAGES: [PART]}


def urls(name: str) -> str | None:
    return URL if name == "abc.png" else None


def test_a_model_that_takes_images_gets_them_after_the_text() -> None:
    [sent] = wire_items([output_with_image()], urls, images=True)
    assert sent == {"type": "function_call_output", "call_id": "c1", "output": [
        {"type": "input_text", "text": "a chart\n[image: image/png, 2 KB]"},
        {"type": "input_image", "image_url": URL, "detail": "high"},
    ]}


def test_a_model_that_does_not_gets_each_image_described() -> None:
    [sent] = wire_items([output_with_image()], urls, images=False)
    assert TOOL_IMAGES not in sent
    assert sent["output"] == (
        "a chart\n[image: image/png, 2 KB]\n[The tool returned an image: shot-image-1.png, PNG "
        "image 640x480, 2.0 KB. This model does not take images, so it is described here.]"
    )


def test_a_missing_file_is_named_instead_of_sent() -> None:
    [sent] = wire_items([output_with_image()], lambda _name: None, images=True)
    assert sent["output"][1]["type"] == "input_text"
    assert "no longer shown" in sent["output"][1]["text"]
    assert "its file is missing" in sent["output"][1]["text"]


def test_the_history_item_is_never_changed_and_summaries_drop_the_images() -> None:
    item = output_with_image()
    wire_items([item], urls)
    assert item[TOOL_IMAGES] == [PART] and isinstance(item["output"], str)
    assert stand_in_items([item]) == [function_call_output("c1", item["output"])]


def test_tool_images_are_loaded_before_sending_and_counted() -> None:
    assert image_files([output_with_image()]) == [("abc.png", "image/png")]
    assert attachment_tokens(output_with_image()) == 441
    assert attachment_tokens(function_call_output("c2", "text")) == 0


def test_chat_sends_the_images_after_the_run_of_tool_messages() -> None:
    call = {"type": "function_call", "name": "shot", "call_id": "c1", "arguments": "{}"}
    other = {"type": "function_call", "name": "echo", "call_id": "c2", "arguments": "{}"}
    sent = wire_items([call, other, output_with_image("c1"), function_call_output("c2", "hi")],
                      urls)
    messages = items_to_messages("", sent)
    assert [m["role"] for m in messages] == ["assistant", "tool", "tool", "user"]
    assert messages[1]["content"] == "a chart\n[image: image/png, 2 KB]"
    assert messages[3]["content"] == [
        {"type": "text", "text": TOOL_IMAGES_TEXT},
        {"type": "image_url", "image_url": {"url": URL, "detail": "high"}},
    ]
    # Followed by an answer: the images come before it.
    answer = {"type": "message", "role": "assistant", "content": "ok"}
    roles = [m["role"] for m in items_to_messages("", [*sent, answer])]
    assert roles == ["assistant", "tool", "tool", "user", "assistant"]
