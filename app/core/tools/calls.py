"""The contract of a function tool: its declaration for the Responses API, its JSON arguments
read and checked, and what a call gives back to the model (a result, or a failure in words)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ToolResult:
    """What a tool call returns to the model: its text output (which names any image), whether
    it succeeded, and the images it returned (type, bytes), sent to models that take them."""

    output: str
    ok: bool
    images: tuple[tuple[str, bytes], ...] = ()


class ToolError(Exception):
    """A tool failure whose message is meant for the model."""


def function_spec(
    name: str, description: str, properties: dict[str, Any], required: list[str]
) -> dict[str, Any]:
    return {
        "type": "function",
        "name": name,
        "description": description,
        "parameters": {
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": False,
        },
        "strict": False,
    }


def parse_arguments(name: str, arguments: str) -> dict[str, Any]:
    if not arguments.strip():  # some models send "" for a call without arguments
        return {}
    try:
        parsed = json.loads(arguments)
    except json.JSONDecodeError as exc:
        raise ToolError(f"invalid JSON arguments for {name}: {exc}") from exc
    if not isinstance(parsed, dict):
        raise ToolError(f"arguments for {name} must be a JSON object")
    return parsed


def str_arg(args: dict[str, Any], key: str, default: str | None = None) -> str:
    value = args.get(key)
    if value is None:
        if default is None:
            raise ToolError(f"missing required argument: {key}")
        return default
    if not isinstance(value, str):
        raise ToolError(f"argument {key} must be a string")
    return value


def int_arg(args: dict[str, Any], key: str, minimum: int) -> int | None:
    value = args.get(key)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolError(f"argument {key} must be an integer")
    if value < minimum:
        raise ToolError(f"argument {key} must be at least {minimum}")
    return value

