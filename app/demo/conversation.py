"""How the demo model reads a request: who said what, earlier summaries, compaction items.

The demo model only ever sees what a real model would see (the request), so everything it
"remembers" comes from here: real user messages, its own earlier answers, tool traffic, and
summaries left by a compaction (a summary user message, or a compaction item it encoded).
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from typing import Literal

from .attachments import split_attachments
from .wire import Json, content_text, item_type

COMPACTION_HEADER = "x-coco-request-kind"
# The user message a Chat Completions client sends the images of tool outputs in (Coco's words).
TOOL_IMAGES_TEXT = "The images the tool calls above returned:"
ENCRYPTED_PREFIX = "demo-enc:"

# Context blocks a client injects (``<environment_context>…</environment_context>``) are not
# things the user said.
_INJECTED = re.compile(r"^\s*<([a-zA-Z_][\w-]*)>[\s\S]*</\1>\s*$")

# A handoff summary opens with a statement (its prefix) that names a summary and where it came
# from; a request for one opens with an imperative. Clients word the prefix their own way.
_SUMMARY_MARKERS = (
    "another model",
    "another language model",
    "other model",
    "previous model",
    "earlier model",
    "handoff",
    "hand-off",
    "hand off",
    "handed",
    "took over",
    "compacted",
    "compaction",
    "earlier conversation",
    "previous conversation",
    "checkpoint",
    "resume",
    "so far",
)
_SUMMARY_HEADINGS = ("## What the user asked", "## Goal")
_IMPERATIVE = re.compile(
    r"^\s*(please\s+)?(write|create|produce|generate|give|make|summari[sz]e|draft|prepare|"
    r"compose|provide|update|can you|could you)\b",
    re.IGNORECASE,
)

EntryKind = Literal["user", "assistant", "call", "output", "summary", "notes"]


@dataclass(frozen=True)
class Entry:
    """One step of the conversation as the demo model understands it."""

    kind: EntryKind
    text: str = ""
    name: str = ""
    call_id: str = ""
    attachments: tuple[str, ...] = ()  # what came with a user message (images, files)


@dataclass(frozen=True)
class Conversation:
    """A request, read: instructions, the timeline of entries, offered tools."""

    instructions: str
    entries: list[Entry]
    tools: set[str] = field(default_factory=set)
    opaque_compactions: int = 0  # compaction items this model cannot read (not its own)

    @property
    def user_texts(self) -> list[str]:
        """What the user said, oldest first (summaries and injected blocks excluded)."""
        return [e.text for e in self.entries if e.kind == "user"]

    @property
    def summaries(self) -> list[str]:
        """Bodies of the earlier summaries in the input, oldest first."""
        return [e.text for e in self.entries if e.kind == "summary"]

    @property
    def notes(self) -> list[str]:
        """The lines of the carried-notes blocks in the input (what the user told the model
        before a compaction, kept in their words), oldest first."""
        return [
            line[2:].strip()
            for e in self.entries
            if e.kind == "notes"
            for line in e.text.splitlines()
            if line.startswith("- ")
        ]

    @property
    def last(self) -> Entry | None:
        """The latest entry, the one to answer."""
        return self.entries[-1] if self.entries else None

    def calls_by_id(self) -> dict[str, Entry]:
        """Function calls by ``call_id``, to pair outputs with the call that made them."""
        return {e.call_id: e for e in self.entries if e.kind == "call"}


def encode_compaction(summary: str) -> str:
    """The opaque ``encrypted_content`` the demo server hands out for a summary."""
    return ENCRYPTED_PREFIX + base64.b64encode(summary.encode("utf-8")).decode("ascii")


def decode_compaction(encrypted: str) -> str | None:
    """The summary inside one of our compaction items; None for anybody else's."""
    if not encrypted.startswith(ENCRYPTED_PREFIX):
        return None
    try:
        return base64.b64decode(encrypted[len(ENCRYPTED_PREFIX) :], validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def is_injected_context(text: str) -> bool:
    """Whether a user message is a context block a client injected."""
    return bool(_INJECTED.match(text))


def summary_body(text: str) -> str | None:
    """The summary carried by a handoff-summary message, or None if ``text`` is not one."""
    stripped = text.strip()
    first, _, rest = stripped.partition("\n")
    if any(heading in stripped for heading in _SUMMARY_HEADINGS) and not _IMPERATIVE.match(first):
        # Our own summary shape, with or without a prefix line in front.
        return rest.strip() if "summary" in first.lower() and rest.strip() else stripped
    lowered = first.lower()
    if (
        "summary" in lowered
        and rest.strip()
        and not first.rstrip().endswith("?")
        and not _IMPERATIVE.match(first)
        and any(marker in lowered for marker in _SUMMARY_MARKERS)
    ):
        return rest.strip()
    return None


def is_notes_block(text: str) -> bool:
    """Whether a user message is a block of notes a client carried over a compaction (what
    the user told the model, kept in their words): its first line names notes and what the
    user told."""
    first = text.lstrip().partition("\n")[0].lower()
    return "notes" in first and "user told you" in first


def is_compaction_prompt(text: str) -> bool:
    """Fallback detection: a user message asking for a handoff/checkpoint summary (or note)."""
    lowered = text.lower()
    return ("summary" in lowered or "handoff note" in lowered) and any(
        w in lowered for w in ("handoff", "checkpoint", "compact")
    )


def read_conversation(instructions: str, items: list[Json], tools: set[str]) -> Conversation:
    """Turn request items into entries; undecodable compaction items are only counted."""
    entries: list[Entry] = []
    opaque = 0
    for item in items:
        kind = item_type(item)
        if kind == "message":
            role = item.get("role")
            text = content_text(item.get("content"))
            if role == "assistant":
                entries.append(Entry("assistant", text))
            elif role == "user":
                if is_injected_context(text) or text.startswith(TOOL_IMAGES_TEXT):
                    continue  # (the images of tool outputs: the outputs name them)
                if is_notes_block(text):
                    entries.append(Entry("notes", text))
                    continue
                body = summary_body(text)
                if body is not None:
                    entries.append(Entry("summary", body))
                    continue
                own, seen = split_attachments(item.get("content"))
                entries.append(Entry("user", own, attachments=tuple(seen)) if seen
                               else Entry("user", text))
            # developer/system messages steer, they are not conversation.
        elif kind == "function_call":
            entries.append(
                Entry(
                    "call",
                    str(item.get("arguments", "")),
                    name=str(item.get("name", "")),
                    call_id=str(item.get("call_id", "")),
                )
            )
        elif kind == "function_call_output":
            output = item.get("output", "")
            entries.append(
                Entry(
                    "output",
                    output if isinstance(output, str) else content_text(output),
                    call_id=str(item.get("call_id", "")),
                )
            )
        elif kind in ("compaction", "compaction_summary"):
            decoded = decode_compaction(str(item.get("encrypted_content") or ""))
            if decoded is None:
                opaque += 1
            else:
                entries.append(Entry("summary", decoded))
    return Conversation(instructions, entries, tools, opaque)
