"""The request a Chat Completions server is sent: items as chat messages, tools in chat shape."""

from __future__ import annotations

import copy
from typing import Any

from app.core.providers.chat_request import (
    chat_messages,
    items_to_messages,
    messages_text,
    normalize_messages,
    tools_to_chat,
)


def _message(role: str, text: str) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def _call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments}


def test_developer_text_is_sent_as_system_and_encrypted_items_are_left_out() -> None:
    items = [
        _message("developer", "be brief"),
        {"type": "reasoning", "encrypted_content": "opaque"},
        {"type": "compaction", "encrypted_content": "opaque"},
        _message("user", "hi"),
    ]
    assert items_to_messages("", items) == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hi"},
    ]


def test_a_tool_output_given_as_parts_is_sent_as_its_text() -> None:
    items = [
        _call("c1", "read_file", '{"path": "a"}'),
        {
            "type": "function_call_output",
            "call_id": "c1",
            "output": [{"type": "input_text", "text": "line 1\n"}, {"type": "text", "text": "2"}],
        },
        {"type": "function_call_output", "call_id": "c2", "output": {"rows": 3}},
    ]
    messages = items_to_messages("", items)
    assert messages[0]["tool_calls"][0]["function"] == {
        "name": "read_file", "arguments": '{"path": "a"}'
    }
    assert messages[1] == {"role": "tool", "tool_call_id": "c1", "content": "line 1\n2"}
    assert messages[2]["content"] == '{"rows": 3}'  # no text parts: the JSON itself


def test_normalising_merges_only_what_strict_templates_refuse() -> None:
    messages = [
        {"role": "user", "content": "environment"},
        {"role": "system", "content": "late instructions"},
        {"role": "user", "content": "question"},
        {"role": "assistant", "content": "half a reply"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]},
        {"role": "tool", "tool_call_id": "c1", "content": "out"},
    ]
    before = copy.deepcopy(messages)
    assert normalize_messages(messages) == [
        {"role": "system", "content": "late instructions"},
        {"role": "user", "content": "environment\n\nquestion"},
        {"role": "assistant", "content": "half a reply", "tool_calls": [{"id": "c1"}]},
        {"role": "tool", "tool_call_id": "c1", "content": "out"},
    ]
    assert messages == before  # the input is not modified


def test_chat_messages_puts_the_instructions_first_and_alternates() -> None:
    messages = chat_messages("sys", [_message("user", "a"), _message("user", "b")])
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[1]["content"] == "a\n\nb"


def test_only_function_tools_are_sent_nested_under_function() -> None:
    flat = {"type": "function", "name": "grep", "description": "search"}
    nested = {"type": "function", "function": {"name": "ls", "parameters": {}}}
    converted = tools_to_chat([flat, {"type": "web_search"}, nested])
    assert converted == [
        {
            "type": "function",
            "function": {
                "name": "grep",
                "description": "search",
                "parameters": {"type": "object", "properties": {}},
            },
        },
        nested,
    ]


def test_the_estimated_text_holds_every_text_and_tool_call() -> None:
    messages = [
        {"role": "user", "content": "hello "},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c", "function": {"name": "grep", "arguments": '{"q": 1}'}}
        ]},
    ]
    assert messages_text(messages) == 'hello grep{"q": 1}'
