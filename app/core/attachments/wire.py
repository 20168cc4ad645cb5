"""Attachments in the shape a request sends them (Responses terms; the Chat Completions
provider translates ``input_image`` to an ``image_url`` part): a file as a text block naming
it, an image as ``input_image`` with its data URL, or, where the model is not to see it, the
stand-in text naming it. A tool output's images likewise: ``input_image`` parts of its output
for a model that takes images, else described in its text."""

from __future__ import annotations

from collections.abc import Callable

from ..items import ATTACHMENT, TOOL_IMAGES, Item, attachment_block, attachment_parts, tool_images
from .parts import Part, describe, stand_in, with_stand_ins

IMAGE_DETAIL = "high"


def image_part(url: str) -> Part:
    return {"type": "input_image", "image_url": url, "detail": IMAGE_DETAIL}


def sent_part(part: Part, url: Callable[[str], str | None]) -> Part:
    """What the model is sent for one attachment part."""
    if part.get("kind") != "image":
        return {"type": "input_text", "text": attachment_block(part)}
    data = url(str(part.get("sent_file", "")))
    if data is None:  # its file is missing or damaged: the model is told what it was
        return {"type": "input_text", "text": stand_in(part) + " (its file is missing)"}
    return image_part(data)


def wire_items(
    items: list[Item], url: Callable[[str], str | None], images: bool = True
) -> list[Item]:
    """``items`` as sent: every attachment part in its wire shape, a tool output's images as
    ``input_image`` parts after its text (``images``: the model takes them; else each is
    described in the output's text). New dicts; the history's own items are never changed."""
    out: list[Item] = []
    for item in items:
        if tool_images(item):
            out.append(tool_output_sent(item, url, images))
            continue
        if not attachment_parts(item):
            out.append(item)
            continue
        content = [
            sent_part(part, url)
            if isinstance(part, dict) and part.get("type") == ATTACHMENT else part
            for part in item.get("content") or []
        ]
        out.append({**item, "content": content})
    return out


def tool_output_sent(item: Item, url: Callable[[str], str | None], images: bool) -> Item:
    """A tool output with images as sent: its text then the images (``images``), or its text
    followed by what each image is, for a model that does not take them."""
    parts = tool_images(item)
    sent = {key: value for key, value in item.items() if key != TOOL_IMAGES}
    text = str(item.get("output", ""))
    if not images:
        described = [
            f"[The tool returned an image: {describe(part)}. This model does not take images, "
            "so it is described here.]"
            for part in parts
        ]
        sent["output"] = "\n".join([text, *described])
        return sent
    sent["output"] = [{"type": "input_text", "text": text}, *[
        sent_part(part, url) for part in parts
    ]]
    return sent


def stand_in_items(items: list[Item]) -> list[Item]:
    """``items`` with every attachment as its stand-in text (a summary request: the summarizer
    learns what was attached without reading it again; a tool output's text already names its
    images)."""
    return [
        {k: v for k, v in item.items() if k != TOOL_IMAGES} if tool_images(item)
        else with_stand_ins(item)
        for item in items
    ]


def image_files(items: list[Item]) -> list[tuple[str, str]]:
    """The stored files (name, type) of the images in ``items``, to load before sending."""
    return [
        (str(part.get("sent_file", "")), str(part.get("sent_mime", "")))
        for item in items
        for part in [*attachment_parts(item), *tool_images(item)]
        if part.get("kind") == "image"
    ]
