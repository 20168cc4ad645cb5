"""The function-tool contract: declarations, arguments read and checked with messages for the
model, and results."""

from __future__ import annotations

import dataclasses

import pytest

from app.core.tools.calls import (
    ToolError,
    ToolResult,
    function_spec,
    int_arg,
    parse_arguments,
    str_arg,
)


def test_a_declaration_is_a_closed_responses_api_function() -> None:
    spec = function_spec("look", "Look things up.", {"q": {"type": "string"}}, required=["q"])
    assert spec == {
        "type": "function",
        "name": "look",
        "description": "Look things up.",
        "parameters": {
            "type": "object",
            "properties": {"q": {"type": "string"}},
            "required": ["q"],
            "additionalProperties": False,
        },
        "strict": False,
    }


def test_arguments_are_a_json_object_or_a_message_says_why_not() -> None:
    assert parse_arguments("look", "") == {}  # a call without arguments
    assert parse_arguments("look", ' {"q": "x"} ') == {"q": "x"}
    with pytest.raises(ToolError, match=r"^invalid JSON arguments for look: "):
        parse_arguments("look", "{q: x}")
    with pytest.raises(ToolError, match=r"^arguments for look must be a JSON object$"):
        parse_arguments("look", "[1]")


def test_string_arguments() -> None:
    assert str_arg({"path": "a.txt"}, "path") == "a.txt"
    assert str_arg({}, "path", default=".") == "."
    with pytest.raises(ToolError, match="^missing required argument: path$"):
        str_arg({"path": None}, "path")
    with pytest.raises(ToolError, match="^argument path must be a string$"):
        str_arg({"path": 3}, "path")


def test_integer_arguments() -> None:
    assert int_arg({}, "n", minimum=1) is None
    assert int_arg({"n": 4}, "n", minimum=1) == 4
    assert int_arg({"n": 4.0}, "n", minimum=1) == 4  # some models send 4.0
    for bad in (True, 4.5, "4"):
        with pytest.raises(ToolError, match="^argument n must be an integer$"):
            int_arg({"n": bad}, "n", minimum=1)
    with pytest.raises(ToolError, match="^argument n must be at least 1$"):
        int_arg({"n": 0}, "n", minimum=1)


def test_a_result_is_a_value() -> None:
    result = ToolResult("done", ok=True)
    assert result == ToolResult("done", True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.ok = False  # type: ignore[misc]
