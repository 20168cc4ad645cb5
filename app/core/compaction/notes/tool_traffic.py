"""The files read, the files changed and the commands run, read from the tool calls leaving
the model's view (the carried notes' lists)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from ...items import Item, item_type

MAX_PATH_CHARS = 160
MAX_COMMAND_CHARS = 160
_SPACES = re.compile(r"\s+")

_READ_TOOLS = ("read", "open", "view", "cat", "show", "get_file", "fetch_file", "search", "grep",
               "list", "find")
_WRITE_TOOLS = ("write", "edit", "create", "patch", "replace", "insert", "delete", "remove",
                "move", "rename", "append", "save", "update")
_SHELL_TOOLS = ("shell", "exec", "run", "command", "bash", "terminal", "sh")
_PATH_ARGS = ("path", "file", "file_path", "filepath", "filename", "target", "source",
              "destination", "dest")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.MULTILINE)


def _tool_kind(name: str) -> str | None:
    lowered = name.lower()
    if any(word in lowered for word in _WRITE_TOOLS):
        return "changed"
    if any(word in lowered for word in _SHELL_TOOLS) and "search" not in lowered:
        return "command"
    if any(word in lowered for word in _READ_TOOLS):
        return "read"
    return None


def _arguments(item: Item) -> dict[str, object]:
    raw = item.get("arguments") if item_type(item) == "function_call" else item.get("input")
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str):
        return {}
    try:
        parsed = json.loads(raw)
    except ValueError:
        return {"input": raw}
    return parsed if isinstance(parsed, dict) else {}


def _short(text: str, limit: int) -> str:
    text = _SPACES.sub(" ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def tool_traffic(items: Iterable[Item]) -> tuple[list[str], list[str], list[str]]:
    """The files changed, the files read and the commands run by the tool calls in
    ``items``: each newest first, each entry once."""
    changed: list[str] = []
    read: list[str] = []
    commands: list[str] = []
    items = list(items)
    failed = _failed_calls(items)
    for item in items:
        kind = item_type(item)
        if item.get("call_id") in failed:
            continue
        if kind == "local_shell_call":
            action = item.get("action")
            command = action.get("command") if isinstance(action, dict) else None
            if isinstance(command, list):
                commands.append(_short(" ".join(str(c) for c in command), MAX_COMMAND_CHARS))
            continue
        if kind not in ("function_call", "custom_tool_call"):
            continue
        name = str(item.get("name") or "")
        args = _arguments(item)
        patch = args.get("input") or args.get("patch")
        if isinstance(patch, str) and "*** " in patch:
            changed.extend(_short(p, MAX_PATH_CHARS) for p in _PATCH_FILE.findall(patch))
            continue
        what = _tool_kind(name)
        if what == "command":
            command = args.get("command") or args.get("cmd") or args.get("input")
            if isinstance(command, list):
                command = " ".join(str(c) for c in command)
            if isinstance(command, str) and command.strip():
                commands.append(_short(command, MAX_COMMAND_CHARS))
            continue
        if what is None:
            continue
        for arg in _PATH_ARGS:
            value = args.get(arg)
            if isinstance(value, str) and value.strip():
                (changed if what == "changed" else read).append(_short(value, MAX_PATH_CHARS))
                break
    return newest_first(changed), newest_first(read), newest_first(commands)


# The items :func:`tool_traffic` reads (calls, and outputs that say a call failed).
TOOL_ITEM_TYPES = frozenset(
    {"function_call", "custom_tool_call", "local_shell_call", "function_call_output"}
)


def _failed_calls(items: list[Item]) -> set[object]:
    """Call ids whose output says the call failed (a file that was not there was not read)."""
    failed: set[object] = set()
    for item in items:
        if item_type(item) != "function_call_output":
            continue
        output = item.get("output")
        head = output[:200].lower() if isinstance(output, str) else ""
        if head.startswith(("error", "failed")) or " failed: " in head or "no such file" in head:
            failed.add(item.get("call_id"))
    return failed


def newest_first(entries: list[str], older: Iterable[str] = ()) -> list[str]:
    seen: set[str] = set()
    result: list[str] = []
    for entry in [*reversed(entries), *older]:
        if entry not in seen:
            seen.add(entry)
            result.append(entry)
    return result
