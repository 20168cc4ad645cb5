"""The demo model and the example MCP server (``app/demo/mcp_example.py``): which of its tools
a message asks for, with the arguments, what the demo says about the output, and the hint its
greeting gives when the tools are offered.

- "count the words of: …" (or of a quoted text, or of my last message) → ``word_count``
- "roll 3 dice", "roll a d20", "roll 2 dice with 12 sides" → ``roll_dice``
- "note down: …", "write a note: …", "save a note that …" → ``write_note`` (destructive: the
  approval card asks first)
"""

from __future__ import annotations

import re
from typing import Any

from ..conversation import Conversation
from ..phrasing import quote
from ..script import ToolCall

WORD_COUNT, ROLL_DICE, WRITE_NOTE = "word_count", "roll_dice", "write_note"
_COUNT = re.compile(r"\b(?:count|how many)\b[^.?!\n]*?\bwords?\b", re.IGNORECASE)
_ROLL = re.compile(r"\broll\b", re.IGNORECASE)
_DICE = re.compile(
    r"\b(?:(?P<count>\d{1,3}|a|an|one|two|three|four|five|six)\s+)?"
    r"(?:(?:(?P<sides_word>\d{1,4})-sided\s+)?(?:dice|die)\b|d(?P<sides>\d{1,4})\b)",
    re.IGNORECASE,
)
_SIDES = re.compile(r"\b(\d{1,4})\s+(?:sides|faces)\b", re.IGNORECASE)
_SEED = re.compile(r"\bseed\s+(\d{1,9})\b", re.IGNORECASE)
_NOTE = re.compile(
    r"^\s*(?:please\s+)?(?:(?:write|take|save|add|make|keep)\s+(?:a\s+|this\s+)?note"
    r"(?:\s+that)?|note\s+down|jot\s+down)\b[\s:,-]*(?P<text>.*)$",
    re.IGNORECASE | re.DOTALL,
)
_QUOTED = re.compile(r"[\"“]([^\"”]{1,4000})[\"”]")
_LAST_MESSAGE = re.compile(r"\b(?:my|the)\s+(?:last|previous)\s+message\b", re.IGNORECASE)
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}

HINT = (
    "- Try the **example MCP server** Coco ships: *roll 3 dice* or *count the words of: …* "
    "run at once (read-only tools), *note down: …* asks for your approval first."
)


def offered(tools: set[str], tool: str) -> str | None:
    """The name an example tool is offered under (``mcp__<server>__<tool>``), if it is."""
    return next((name for name in sorted(tools)
                 if name.startswith("mcp__") and name.endswith(f"__{tool}")), None)


def example_hint(tools: set[str]) -> str:
    """The greeting's line about the example server, when its tools are offered."""
    return HINT if offered(tools, ROLL_DICE) or offered(tools, WRITE_NOTE) else ""


def example_call(conv: Conversation, text: str) -> ToolCall | None:
    """The example server's tool ``text`` asks for, with its arguments; ``None`` for none."""
    for tool, args in (_note(text), _roll(text), _count(conv, text)):
        if args is None:
            continue
        name = offered(conv.tools, tool)
        if name is not None:
            return ToolCall(name=name, arguments=args)
    return None


def describe_example(tool: str, output: str) -> str | None:
    """What the demo says about an example tool's output; ``None`` for another tool's."""
    base = tool.rsplit("__", 1)[-1] if tool.startswith("mcp__") else ""
    if base not in (WORD_COUNT, ROLL_DICE, WRITE_NOTE):
        return None
    if output.startswith("The user denied"):
        return "You denied that call, so I did not run it. Nothing was changed."
    opening = {
        WORD_COUNT: "I asked the example MCP server to count them",
        ROLL_DICE: "I asked the example MCP server to roll",
        WRITE_NOTE: "The example MCP server wrote the note",
    }[base]
    return f"{opening} (its `{base}` tool). It answered:\n\n{quote(output, 300)}"


def _note(text: str) -> tuple[str, dict[str, Any] | None]:
    match = _NOTE.match(text)
    note = match.group("text").strip() if match else ""
    return WRITE_NOTE, ({"text": note} if note else None)


def _roll(text: str) -> tuple[str, dict[str, Any] | None]:
    dice = _DICE.search(text)
    if not _ROLL.search(text) or dice is None:
        return ROLL_DICE, None
    count = dice.group("count") or "2"
    args: dict[str, Any] = {"count": int(_NUMBERS.get(count.lower(), count))}
    sides = dice.group("sides") or dice.group("sides_word") or _first(_SIDES, text)
    if sides:
        args["sides"] = int(sides)
    if seed := _first(_SEED, text):
        args["seed"] = int(seed)
    return ROLL_DICE, args


def _count(conv: Conversation, text: str) -> tuple[str, dict[str, Any] | None]:
    if not _COUNT.search(text):
        return WORD_COUNT, None
    quoted = _QUOTED.search(text)
    if quoted:
        return WORD_COUNT, {"text": quoted.group(1)}
    if _LAST_MESSAGE.search(text):
        earlier = conv.user_texts[:-1]
        return WORD_COUNT, ({"text": earlier[-1]} if earlier else None)
    _, colon, rest = text.partition(":")
    return WORD_COUNT, ({"text": rest.strip()} if colon and rest.strip() else None)


def _first(pattern: re.Pattern[str], text: str) -> str | None:
    match = pattern.search(text)
    return match.group(1) if match else None
