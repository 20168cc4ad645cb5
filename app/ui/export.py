"""Export a session transcript (``session.transcript()`` entries) to Markdown or JSON.

Pure functions: no Qt, no files. The window asks for a path and writes the returned text.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from app.core.items import is_compaction_item, is_injected_context, item_type, message_text

from .format import (
    REMOTE_FORM_TEXT,
    STRATEGY_TEXT,
    TRIGGER_TEXT,
    format_duration,
    format_tokens,
)

EXPORT_FORMAT = "coco-session-export"
EXPORT_VERSION = 1

Entry = Mapping[str, Any]

EXPORT_NAME_LIMIT = 60  # characters before the extension
_WINDOWS_RESERVED = frozenset(
    {"con", "prn", "aux", "nul", *(f"com{n}" for n in range(10)), *(f"lpt{n}" for n in range(10))}
)


def export_file_name(title: str, fmt: str = "markdown", limit: int = EXPORT_NAME_LIMIT) -> str:
    """A file name to suggest for exporting a session called ``title``.

    Its words joined by hyphens ("Hello! Can you show me…" → "Hello-Can-you-show-me.md"):
    no punctuation, spaces or control characters, at most ``limit`` characters cut at a word,
    a partial last word dropped when the title was shortened ("…"), and never a name Windows
    reserves. Letters of any script are kept; it is safe on Windows, macOS and Linux.
    """
    text = unicodedata.normalize("NFKC", title).strip()
    words = re.findall(r"[^\W_]+", text)
    if title.strip().endswith("…") and len(words) > 1:
        words = words[:-1]  # the title was cut: its last word may be a fragment
    stem = ""
    for word in words:
        candidate = f"{stem}-{word}" if stem else word
        if len(candidate) > limit:
            if not stem:
                stem = word[:limit]
            break
        stem = candidate
    if not stem:
        stem = "coco-session"
    elif stem.lower() in _WINDOWS_RESERVED:
        stem = f"{stem}-session"
    return stem + (".json" if fmt == "json" else ".md")


def _fence(text: str, lang: str = "") -> str:
    """``text`` in a code fence longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text.rstrip()}\n{fence}"


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.splitlines() or [""])


def _pretty_json(text: str) -> str:
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except (ValueError, TypeError):
        return text


def _item_markdown(item: Mapping[str, Any], interrupted: bool) -> str | None:
    kind = item_type(dict(item))
    if kind == "message":
        if is_injected_context(dict(item)):
            return None
        role = item.get("role")
        text = message_text(dict(item))
        if role == "user":
            return f"### You\n\n{text}"
        if role == "assistant":
            suffix = "\n\n_(interrupted)_" if interrupted else ""
            return f"### Assistant\n\n{text}{suffix}"
        return None  # developer/system instructions are not part of the conversation
    if kind == "function_call":
        name = item.get("name", "tool")
        args = _pretty_json(str(item.get("arguments", "")))
        return f"**Tool call** `{name}`\n\n{_fence(args, 'json')}"
    if kind == "function_call_output":
        output = item.get("output", "")
        text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
        return f"**Tool output**\n\n{_fence(text)}"
    if kind == "reasoning":
        summary = item.get("summary") or []
        text = "".join(str(s.get("text", "")) for s in summary if isinstance(s, dict))
        return f"_Reasoning:_\n\n{_quote(text)}" if text.strip() else None
    if is_compaction_item(dict(item)):
        return None  # opaque encrypted content: never shown
    return None


def _compaction_markdown(entry: Entry) -> str:
    trigger = TRIGGER_TEXT.get(str(entry.get("trigger")), str(entry.get("trigger", "")))
    strategy = STRATEGY_TEXT.get(str(entry.get("strategy")), str(entry.get("strategy", "")))
    if entry.get("strategy") == "remote" and entry.get("remote_form") in REMOTE_FORM_TEXT:
        strategy = REMOTE_FORM_TEXT[str(entry["remote_form"])]
    before = format_tokens(int(entry.get("tokens_before") or 0))
    after = format_tokens(int(entry.get("tokens_after") or 0))
    duration = format_duration(int(entry.get("duration_ms") or 0))
    head = (
        f"---\n\n**Context compacted** ({trigger}, {strategy}): {before} → {after} tokens "
        f"in {duration}."
    )
    lines = [head]
    if entry.get("focus"):
        lines.append(f"Focus: {entry['focus']}")
    if entry.get("undone"):
        lines.append("_This compaction was undone._")
    summary = str(entry.get("summary") or "")
    if summary:
        lines.append(f"Summary:\n\n{_quote(summary)}")
    elif entry.get("strategy") == "remote":
        lines.append("_Summary held by the server._")
    return "\n\n".join(lines) + "\n\n---"


def transcript_to_markdown(
    entries: Iterable[Entry],
    *,
    title: str = "",
    session_id: str = "",
    model: str = "",
    exported_at: datetime | None = None,
) -> str:
    """The transcript as a readable Markdown document (messages, tools, compaction markers)."""
    when = (exported_at or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    meta = " · ".join(p for p in (f"Session {session_id}" if session_id else "",
                                  f"model {model}" if model else "",
                                  f"exported {when}") if p)
    parts = [f"# {title or 'Coco session'}", f"_{meta}_"]
    for entry in entries:
        kind = entry.get("kind")
        if kind == "item":
            block = _item_markdown(entry.get("item") or {}, bool(entry.get("interrupted")))
            if block:
                parts.append(block)
        elif kind == "compaction":
            parts.append(_compaction_markdown(entry))
        elif kind in ("error", "warning", "background"):
            label = {"error": "Error", "warning": "Warning", "background": "Note"}[str(kind)]
            parts.append(f"> **{label}:** {entry.get('message', '')}")
    return "\n\n".join(parts).rstrip() + "\n"


def transcript_to_json(
    entries: Iterable[Entry],
    *,
    title: str = "",
    session_id: str = "",
    model: str = "",
    exported_at: datetime | None = None,
) -> str:
    """The transcript as a JSON document: metadata plus every entry as recorded."""
    when = (exported_at or datetime.now(UTC)).isoformat()
    document = {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "session_id": session_id,
        "title": title,
        "model": model,
        "exported_at": when,
        "transcript": [dict(e) for e in entries],
    }
    return json.dumps(document, indent=2, ensure_ascii=False, default=str) + "\n"
