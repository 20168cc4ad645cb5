"""The request a Chat Completions server is sent: Coco's Responses-API items as chat messages,
normalised for strict chat templates, and its function tools in the chat shape."""

from __future__ import annotations

import json
from typing import Any

from ..items import Item, item_type, message_text, new_id

Message = dict[str, Any]


def _output_text(output: object) -> str:
    """A ``function_call_output`` payload as the plain string a chat ``tool`` message carries."""
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        texts = [
            str(part.get("text", ""))
            for part in output
            if isinstance(part, dict) and part.get("type") in ("input_text", "output_text", "text")
        ]
        if texts:
            return "".join(texts)
    return json.dumps(output, ensure_ascii=False)


def items_to_messages(instructions: str, items: list[Item]) -> list[Message]:
    """Chat messages for a Responses-style request.

    ``developer`` becomes ``system`` (many local servers reject the developer role). Function
    calls join the assistant message just before them, as the chat API returns them; reasoning
    and compaction items are dropped, since their encrypted content means nothing to a chat server.
    """
    messages: list[Message] = []
    if instructions:
        messages.append({"role": "system", "content": instructions})
    # A tool message carries text only: the images of tool outputs follow the run of tool
    # messages, as a user message of ``image_url`` parts.
    images: list[dict[str, Any]] = []
    for item in items:
        kind = item_type(item)
        if kind != "function_call_output" and images:
            messages.append(_tool_images_message(images))
            images = []
        if kind == "message":
            role = item.get("role")
            text = message_text(item)
            if role == "assistant":
                messages.append({"role": "assistant", "content": text})
            elif role in ("developer", "system"):
                messages.append({"role": "system", "content": text})
            else:
                messages.append({"role": "user", "content": _user_content(item, text)})
        elif kind == "function_call":
            call = {
                "id": str(item.get("call_id") or item.get("id") or new_id("call")),
                "type": "function",
                "function": {
                    "name": str(item.get("name", "")),
                    "arguments": str(item.get("arguments") or "{}"),
                },
            }
            last = messages[-1] if messages else None
            if last is not None and last["role"] == "assistant":
                last.setdefault("tool_calls", []).append(call)
                if last.get("content") == "":
                    last["content"] = None
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": str(item.get("call_id", "")),
                    "content": _output_text(item.get("output", "")),
                }
            )
            images.extend(_image_parts(item.get("output")))
        # reasoning, compaction and unknown items have no chat equivalent: skipped.
    if images:
        messages.append(_tool_images_message(images))
    return messages


TOOL_IMAGES_TEXT = "The images the tool calls above returned:"


def _tool_images_message(images: list[dict[str, Any]]) -> Message:
    return {"role": "user", "content": [{"type": "text", "text": TOOL_IMAGES_TEXT}, *images]}


def _image_parts(content: object) -> list[dict[str, Any]]:
    """The ``input_image`` parts of ``content`` as Chat Completions ``image_url`` parts."""
    if not isinstance(content, list):
        return []
    parts: list[dict[str, Any]] = []
    for part in content:
        if isinstance(part, dict) and part.get("type") == "input_image":
            url: dict[str, Any] = {"url": str(part.get("image_url", ""))}
            if part.get("detail"):
                url["detail"] = part["detail"]
            parts.append({"type": "image_url", "image_url": url})
    return parts


def _user_content(item: Item, text: str) -> str | list[dict[str, Any]]:
    """A user message's content: its text, or, when it holds images, its parts in order
    (``text`` parts and ``image_url`` parts, the Chat Completions shape of ``input_image``)."""
    content = item.get("content")
    if not isinstance(content, list) or not any(
        isinstance(part, dict) and part.get("type") == "input_image" for part in content
    ):
        return text
    parts: list[dict[str, Any]] = []
    for part in content:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "input_image":
            parts.extend(_image_parts([part]))
        elif part.get("type") in ("input_text", "text") and part.get("text"):
            parts.append({"type": "text", "text": str(part["text"])})
    return parts


def _as_parts(content: object) -> list[dict[str, Any]]:
    if isinstance(content, list):
        return list(content)
    return [{"type": "text", "text": content}] if isinstance(content, str) and content else []


def _join_user(first: object, second: object) -> object:
    """Two user contents as one: texts joined by a blank line, or, when either holds images,
    their parts one after the other."""
    if isinstance(first, list) or isinstance(second, list):
        return [*_as_parts(first), *_as_parts(second)]
    return _join(first, second) or ""


def _join(first: object, second: object) -> str | None:
    texts = [text for text in (first, second) if isinstance(text, str) and text]
    return "\n\n".join(texts) if texts else None


def normalize_messages(messages: list[Message]) -> list[Message]:
    """``messages`` as strict chat templates accept them. The input is not modified.

    The templates shipped with many open models (Gemma, Mistral, older Llama) accept one
    optional system message first, then roles alternating user / assistant, and refuse anything
    else with HTTP 400 ("Conversation roles must alternate ..."). Coco's history does not
    alternate: the environment block and the first user message are two user messages, a
    compacted history is kept user messages followed by the summary (also a user message), and
    developer messages may sit anywhere. Only what is sent on this wire is rewritten:

    - every system message (the instructions, developer messages) is merged, in order, into
      one system message at the start;
    - consecutive user messages are merged into one, their texts separated by a blank line;
    - consecutive assistant messages are merged when the earlier one has no tool calls (the
      later one's tool calls are kept), so an interrupted reply followed by a new one becomes
      one turn;
    - an assistant message with tool calls and the ``tool`` messages answering it are never
      merged or reordered: each tool result stays tied to its call id.

    The stored history and the Responses wire are untouched. Nothing is dropped: every text is
    sent, in its order within its role (system texts move to the front, where strict templates
    want them), and lenient servers read the merged request the same way.
    """
    system_texts = [
        message["content"]
        for message in messages
        if message.get("role") == "system" and isinstance(message.get("content"), str)
    ]
    result: list[Message] = []
    system_text = "\n\n".join(text for text in system_texts if text)
    if system_text:
        result.append({"role": "system", "content": system_text})
    for message in messages:
        role = message.get("role")
        if role == "system":
            continue
        last = result[-1] if result else None
        if last is not None and role == "user" and last.get("role") == "user":
            last["content"] = _join_user(last.get("content"), message.get("content"))
            continue
        if (
            last is not None
            and role == "assistant"
            and last.get("role") == "assistant"
            and not last.get("tool_calls")
        ):
            merged: Message = {
                "role": "assistant",
                "content": _join(last.get("content"), message.get("content")),
            }
            if message.get("tool_calls"):
                merged["tool_calls"] = list(message["tool_calls"])
            elif merged["content"] is None:
                merged["content"] = ""
            result[-1] = merged
            continue
        result.append(dict(message))
    return result


def chat_messages(instructions: str, items: list[Item]) -> list[Message]:
    """The messages sent for a request: :func:`items_to_messages`, normalised."""
    return normalize_messages(items_to_messages(instructions, items))


def tools_to_chat(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Responses function tools (flat) as chat tools (nested under ``function``)."""
    converted: list[dict[str, Any]] = []
    for tool in tools:
        if tool.get("type") != "function":
            continue  # hosted tools (web search, ...) do not exist on chat servers
        if isinstance(tool.get("function"), dict):
            converted.append(tool)  # already chat-shaped
            continue
        function: dict[str, Any] = {"name": tool.get("name", "")}
        if tool.get("description"):
            function["description"] = tool["description"]
        function["parameters"] = tool.get("parameters") or {"type": "object", "properties": {}}
        converted.append({"type": "function", "function": function})
    return converted


def messages_text(messages: list[Message]) -> str:
    """The texts, tool names and arguments of ``messages`` run together, for a size estimate."""
    parts: list[str] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):  # the text parts (images are not text)
            parts.extend(str(part.get("text", "")) for part in content if isinstance(part, dict))
        for call in message.get("tool_calls") or []:
            parts.append(call["function"]["name"] + call["function"]["arguments"])
    return "".join(parts)
