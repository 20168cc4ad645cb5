"""What of a conversation recall can find: the text of a history item or compaction record,
cut into passages, the digest an item is known by in the index, and the word parts an
identifier is also found by. The recall tool's own calls and outputs are never searchable.
"""

from __future__ import annotations

import hashlib
import string
from collections.abc import Sequence
from typing import Any

from ..attachments.parts import describe
from ..compaction.notes.block import is_notes_message
from ..compaction.prompts import is_summary_message
from ..items import (
    Item,
    attachment_block,
    attachment_parts,
    is_injected_context,
    is_message,
    item_type,
    message_text,
)
from .query import BOUNDARY, WORD, split_form

# The tool the model searches with: its questions and answers are not indexed.
RECALL_TOOL = "recall"
# Long texts are indexed in passages of about this many characters (cut at line ends).
PASSAGE_CHARS = 1600
# Longer tokens (hashes, base64) are not split into parts.
MAX_SPLIT_TOKEN = 64
# Each ASCII letter or digit by its class, to find camelCase or letter-digit boundaries fast.
_SHAPES = str.maketrans(
    string.ascii_lowercase + string.ascii_uppercase + string.digits, "a" * 26 + "A" * 26 + "0" * 10
)
_BOUNDARY_SHAPES = ("aA", "a0", "A0", "0a", "0A")


def item_digest(item: Item) -> bytes | None:
    """The digest a history item is known by in the index (``None``: never indexed)."""
    found = item_text(item)
    return None if found is None else digest(found[1])


def asking_message(items: Sequence[Item]) -> bytes | None:
    """The digest of the user's message the model is answering (the last one of ``items``
    that the user wrote: not a summary, carried notes or injected context), or ``None``."""
    for item in reversed(items):
        if not is_message(item, "user") or is_summary_message(item) or is_notes_message(item):
            continue
        found = item_text(item)
        if found is not None:
            return digest(found[1])
    return None


def item_text(item: Item) -> tuple[str, str] | None:
    """What an item says, and what it is ("user", "assistant", "call", "output"); ``None`` for
    items with nothing to search (reasoning, injected context, compaction items)."""
    kind = item_type(item)
    if kind == "message":
        role = item.get("role")
        if role not in ("user", "assistant") or is_injected_context(item):
            return None
        text = message_text(item)
        if role == "user" and (parts := attachment_parts(item)):
            # A file's text is found again (its block names it); an image by its description.
            found = [attachment_block(part) or describe(part) for part in parts]
            text = "\n\n".join([text, *found])
        return str(role), text
    if kind == "function_call":
        return "call", f"{item.get('name', '')} {item.get('arguments', '')}"
    if kind == "function_call_output":
        output = item.get("output", "")
        if isinstance(output, list):
            output = "\n".join(
                str(part.get("text", "")) for part in output if isinstance(part, dict)
            )
        return "output", str(output)
    return None


def summary_of(payload: dict[str, Any]) -> str:
    """The summary a ``compacted`` record holds (in its replacement history, else its
    message)."""
    replacement = payload.get("replacement_history")
    if isinstance(replacement, list):
        for item in replacement:
            if isinstance(item, dict) and is_summary_message(item):
                return message_text(item)
    return str(payload.get("message") or "")


# Characters encoded per step of a digest: encoding a 10 MB tool output at once is one call
# that holds the interpreter (the window's thread waited 10-18 ms for the recall index).
DIGEST_STEP = 256 * 1024


def digest(text: str) -> bytes:
    """The short digest a text is known by (8 bytes): of its UTF-8 bytes (a lone surrogate
    as "?"), encoded :data:`DIGEST_STEP` characters at a time (the same bytes: UTF-8 encodes
    each character on its own)."""
    hashed = hashlib.blake2b(digest_size=8)
    for start in range(0, len(text), DIGEST_STEP):
        hashed.update(text[start : start + DIGEST_STEP].encode("utf-8", "replace"))
    return hashed.digest()


def passages(text: str) -> Sequence[str]:
    """``text`` in pieces of about :data:`PASSAGE_CHARS`, cut at a line end or a space."""
    if len(text) <= PASSAGE_CHARS:
        return [text] if text.strip() else []
    pieces: list[str] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + PASSAGE_CHARS)
        if end < len(text):
            cut = text.rfind("\n", start + PASSAGE_CHARS // 2, end)
            if cut < 0:
                cut = text.rfind(" ", start + PASSAGE_CHARS // 2, end)
            if cut > start:
                end = cut + 1
        piece = text[start:end]
        if piece.strip():
            pieces.append(piece)
        start = end
    return pieces


def split_column(text: str) -> str:
    """The camelCase and letter-digit tokens of ``text`` in their parts (``svc41`` → svc 41),
    so a part finds them; "_" and "-" already separate words in the tokenizer."""
    shape = text.translate(_SHAPES)  # fast: most passages have no such boundary at all
    if not any(pair in shape for pair in _BOUNDARY_SHAPES):
        return ""
    parts: list[str] = []
    done = -1  # the end of the last token split
    for match in BOUNDARY.finditer(text):
        at = match.start()
        if at < done:
            continue
        start = at
        while start > 0 and text[start - 1].isalnum():
            start -= 1
        word = WORD.match(text, at)
        done = word.end() if word else at + 1
        if done - start <= MAX_SPLIT_TOKEN:  # not hex blobs or base64
            parts.append(" ".join(split_form(text[start:done])))
    return " ".join(parts)
