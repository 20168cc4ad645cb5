"""Export a session to Markdown or JSON.

Markdown is what the window shows, rendered from the same typed events that draw the session
(``Session.replay_events()``); JSON is the session's record (``Session.transcript()``: every
entry as recorded, with whether the model still sees it). Neither ever holds the API key.
No Qt. The window asks for a path and writes the returned text; the attachments' files are
copied beside it (``copy_attachments``), and the Markdown links them there.
"""

from __future__ import annotations

import json
import re
import shutil
import unicodedata
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from app.core import protocol as p

from ..controller.format import (
    REMOTE_FORM_TEXT,
    STRATEGY_TEXT,
    TRIGGER_TEXT,
    format_duration,
    format_tokens,
)

EXPORT_FORMAT = "coco-session-export"
EXPORT_VERSION = 1

Entry = Mapping[str, Any]
NOTE_LABELS = {"error": "Error", "warning": "Warning", "background": "Note"}
# Where a recorded tool output keeps the images it returned (stored files, like attachments).
TOOL_IMAGES_KEY = "coco_images"

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


def attachments_folder(path: Path) -> Path:
    """Where an export's attachment files are copied: beside it, named after it."""
    return path.with_name(path.stem + ".files")


def _files_shown(event: p.Event) -> list[dict[str, Any]]:
    """The stored files an event shows: a sent message's attachments, a tool's images."""
    if not isinstance(event, p.ItemCompleted):
        return []
    key = {"user_message": "attachments", "function_call_output": "images"}.get(event.item.kind)
    shown = event.item.data.get(key) if key else None
    return [s for s in shown if isinstance(s, dict)] if isinstance(shown, list) else []


def copy_attachments(events: Iterable[p.Event], folder: Path) -> int:
    """Copy the files the conversation holds (attachments, and images tools returned) into
    ``folder`` (each once; a missing one is left out, the export says so); how many were
    copied."""
    copied = 0
    for event in events:
        for shown in _files_shown(event):
            source = Path(str(shown.get("path") or ""))
            target = folder / source.name
            if shown.get("missing") or not source.is_file() or target.exists():
                continue
            folder.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            copied += 1
    return copied


def _is_stored_file(part: object) -> bool:
    return isinstance(part, dict) and part.get("type") == "coco_attachment"


def _copy_said(parts: list[Any], files: str, copied: frozenset[str]) -> list[Any] | None:
    """``parts`` with each stored file saying where the export's copy is (or that it is
    missing); None when they hold no stored file."""
    if not any(_is_stored_file(part) for part in parts):
        return None
    said: list[Any] = []
    for part in parts:
        if _is_stored_file(part):
            name = str(part.get("file") or "")
            part = {**part, "export_path": f"{files}/{name}"} if name in copied else {
                **part, "missing": True
            }
        said.append(part)
    return said


def _with_copies(entry: dict[str, Any], files: str, copied: frozenset[str]) -> dict[str, Any]:
    """An entry whose stored files (a message's attachments in its content, a tool output's
    images beside it) say where the export's copy of each is, or that it is missing; the same
    entry when it has none."""
    item = entry.get("item")
    if not files or not isinstance(item, dict):
        return entry
    changed: dict[str, Any] = {}
    for key in ("content", TOOL_IMAGES_KEY):
        parts = item.get(key)
        if isinstance(parts, list) and (said := _copy_said(parts, files, copied)) is not None:
            changed[key] = said
    return {**entry, "item": {**item, **changed}} if changed else entry


def _attachment_markdown(shown: dict[str, object], files: str) -> str:
    name = str(shown.get("name", "attachment"))
    what = str(shown.get("description", name))
    if shown.get("missing") or not files:
        return f"- 📎 {what} _(file missing)_" if shown.get("missing") else f"- 📎 {what}"
    link = f"{files}/{Path(str(shown.get('path', ''))).name}"
    if shown.get("kind") == "image":
        return f"- 📎 {what}\n\n  ![{name}](<{link}>)"
    return f"- 📎 [{what}](<{link}>)"


def _item_markdown(item: p.TurnItem, files: str = "") -> str | None:
    """One replayed item as Markdown (``None``: nothing to show); ``files``: the folder its
    attachments are copied to, relative to the export."""
    data = item.data
    if item.kind == "user_message":
        suffix = "\n\n_(not sent to the model)_" if data.get("not_sent") else ""
        attached = [_attachment_markdown(a, files) for a in data.get("attachments") or []]
        listed = "\n\n" + "\n".join(attached) if attached else ""
        return f"### You{_pinned(data)}\n\n{data.get('text', '')}{listed}{suffix}"
    if item.kind == "agent_message":
        suffix = "\n\n_(interrupted)_" if data.get("interrupted") else ""
        if data.get("cut_off"):
            suffix = "\n\n_(cut off: the server stopped; not sent to the model)_"
        return f"### Assistant{_pinned(data)}\n\n{data.get('text', '')}{suffix}"
    if item.kind == "function_call":
        name = data.get("name") or "tool"
        args = _pretty_json(str(data.get("arguments", "")))
        return f"**Tool call** `{name}`\n\n{_fence(args, 'json')}"
    if item.kind == "function_call_output":
        output = data.get("output", "")
        text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
        images = [_attachment_markdown(a, files) for a in data.get("images") or []]
        listed = "\n\n" + "\n".join(images) if images else ""
        return f"**Tool output**\n\n{_fence(text)}{listed}"
    if item.kind == "reasoning":
        text = str(data.get("summary", ""))
        return f"_Reasoning:_\n\n{_quote(text)}" if text.strip() else None
    return None  # a compaction is shown by its marker


def _pinned(data: dict[str, object]) -> str:
    """A pinned message's heading says so: it is carried verbatim through every compaction."""
    return " _(pinned)_" if data.get("pinned") else ""


def _compaction_markdown(
    event: p.ContextCompacted, undone: bool, edited: p.SummaryEdited | None = None
) -> str:
    trigger = TRIGGER_TEXT.get(event.trigger, event.trigger)
    strategy = STRATEGY_TEXT.get(event.strategy, event.strategy)
    if event.strategy == "remote" and event.remote_form in REMOTE_FORM_TEXT:
        strategy = REMOTE_FORM_TEXT[str(event.remote_form)]
    before = format_tokens(event.tokens_before)
    after = format_tokens(event.tokens_after)
    duration = format_duration(event.duration_ms)
    head = (
        f"---\n\n**Context compacted** ({trigger}, {strategy}): {before} → {after} tokens "
        f"in {duration}."
    )
    lines = [head]
    if event.focus:
        lines.append(f"Focus: {event.focus}")
    if undone:
        lines.append("_This compaction was undone._")
    if edited is not None and edited.edited:
        lines.append(f"Summary (edited by you):\n\n{_quote(edited.summary)}")
    elif event.summary:
        lines.append(f"Summary:\n\n{_quote(event.summary)}")
    elif event.strategy == "remote":
        lines.append("_Summary held by the server._")
    return "\n\n".join(lines) + "\n\n---"


def transcript_to_markdown(
    events: Iterable[p.Event],
    *,
    title: str = "",
    session_id: str = "",
    model: str = "",
    exported_at: datetime | None = None,
    files: str = "",
) -> str:
    """The conversation as a readable Markdown document (messages, tools, compaction markers,
    notes), from the events that draw it (``Session.replay_events()``): what the window shows."""
    when = (exported_at or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    meta = " · ".join(part for part in (f"Session {session_id}" if session_id else "",
                                        f"model {model}" if model else "",
                                        f"exported {when}") if part)
    parts = [f"# {title or 'Coco session'}", f"_{meta}_"]
    markers: dict[str, tuple[int, p.ContextCompacted]] = {}  # by item id: (part, event)
    edits: dict[str, p.SummaryEdited] = {}  # by item id: the summary as the user left it
    for event in events:
        if isinstance(event, p.ItemCompleted):
            block = _item_markdown(event.item, files)
            if block:
                parts.append(block)
        elif isinstance(event, p.ContextCompacted):
            markers[event.item_id] = (len(parts), event)
            parts.append(_compaction_markdown(event, undone=False))
        elif isinstance(event, p.CompactionUndone) and event.item_id in markers:
            index, marker = markers[event.item_id]
            parts[index] = _compaction_markdown(
                marker, undone=True, edited=edits.get(event.item_id)
            )
        elif isinstance(event, p.SummaryEdited) and event.item_id in markers:
            edits[event.item_id] = event
            index, marker = markers[event.item_id]
            parts[index] = _compaction_markdown(marker, undone=False, edited=event)
        elif isinstance(event, p.CompactionEnded):
            parts.append(f"---\n\n**Compaction {event.status}** · nothing changed\n\n---")
        elif isinstance(event, (p.Error, p.Warning, p.Background)):
            label = NOTE_LABELS[event.type]
            parts.append(f"> **{label}:** {event.message}")
    return "\n\n".join(parts).rstrip() + "\n"


def transcript_to_json(
    entries: Iterable[Entry],
    *,
    title: str = "",
    session_id: str = "",
    model: str = "",
    exported_at: datetime | None = None,
    tree: p.ConversationTree | None = None,
    turn_items: dict[str, list[dict[str, Any]]] | None = None,
    files: str = "",
    copied: frozenset[str] = frozenset(),
) -> str:
    """The transcript (``Session.transcript()``: the active branch) as a JSON document:
    metadata plus every entry as recorded, and the whole conversation tree (``Session.tree()``:
    every turn of every branch, the one it follows, its message, its compactions, whether it is
    on the active branch, and with ``turn_items`` (``Session.turn_items()``) the items it
    recorded) when given. ``files``: the folder the attachments were copied to, relative to
    the export; each attachment then says where its copy is (``export_path``), or that it is
    missing (its name not among ``copied``)."""
    when = (exported_at or datetime.now(UTC)).isoformat()
    document: dict[str, object] = {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "session_id": session_id,
        "title": title,
        "model": model,
        "exported_at": when,
        "transcript": [_with_copies(dict(e), files, copied) for e in entries],
    }
    if files and copied:
        document["files"] = files  # where the attachments were copied, beside the export
    if tree is not None:
        turns = [node.model_dump() for node in tree.nodes]
        if turn_items is not None:
            for turn in turns:
                turn["items"] = turn_items.get(str(turn["turn_id"]), [])
        document["tree"] = {
            "active": tree.active,
            "turns": turns,
        }
    return json.dumps(document, indent=2, ensure_ascii=False, default=str) + "\n"
