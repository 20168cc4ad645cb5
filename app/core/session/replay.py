"""Resume as a replay: a reopened session told as the events a live session emitted.

A front end draws a reopened conversation through the same handler it draws a live one with,
so both look the same (Codex's TUI replays a thread the same way). The events come from the
transcript (``Transcript.entries``): items, compaction markers with what they left in view and
whether they were undone, and the notes that were recorded.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .. import protocol as p
from ..attachments.parts import display, message_display
from ..compaction.failure import ended_events
from ..conversation.transcript import CUT_OFF_KIND, ENDED_KIND
from ..items import is_injected_text, item_type, message_text, new_id, tool_images
from .branch_summary.carried import CARRIED_KIND, carried_event

Entry = dict[str, Any]
# An item's event is validated from plain data in one call: building its ``TurnItem`` first,
# then the event around it, cost a third more (11 000 items a session of 5 000 turns).
_completed = p.ItemCompleted.__pydantic_validator__.validate_python
_SHOWN_KINDS = frozenset(("message", "function_call", "reasoning"))

def replay_events(
    entries: list[Entry],
    undo_item_id: str | None,
    branches: dict[str, p.TurnBranches] | None = None,
    files: Path | None = None,
    undo: p.UndoAvailable | None = None,
) -> list[p.Event]:
    """The events that draw ``entries`` (``Session.transcript()``); ``undo_item_id`` is the
    compaction Undo would undo now (``undo``: the whole state, told last); ``branches``: the
    turns with siblings, each told after its first row; ``files``, the folder of the session's
    attachments."""
    events: list[p.Event] = []
    untold = dict(branches or {})
    # Items saved without an id get one here, all made first: made one by one between the
    # events (which are freed once drawn) they kept scattered memory in use for as long as
    # the rows holding them live, megabytes for a long session.
    # One random id, numbered: a fresh uuid each cost more than drawing the row (5 000 a
    # session of 5 000 turns).
    base = new_id("item")
    fresh = iter([f"{base}{n}" for n in range(sum(map(_needs_id, entries)))])
    for entry in entries:
        kind = entry.get("kind")
        turn_id = str(entry.get("turn_id") or "")
        if kind == "item":
            event = _item_event(entry, turn_id, fresh, files)
            if event is not None:
                events.append(event)
                if untold and turn_id in untold:
                    events.append(untold.pop(turn_id))
        elif kind == "compaction":
            events.extend(_compaction_events(entry, turn_id, undo_item_id))
        elif kind == CUT_OFF_KIND:  # a reply the server's failure cut off
            events.append(cut_off_event(entry))
        elif kind == ENDED_KIND:  # a compaction that failed or was stopped
            events.extend(ended_events(entry, turn_id or None))
        elif kind == "warning":
            events.append(
                p.Warning(
                    message=str(entry.get("message", "")),
                    compaction_id=str(entry.get("compaction_id") or ""),
                )
            )
        elif kind == "error":
            events.append(
                p.Error(
                    message=str(entry.get("message", "")),
                    kind="internal",
                    details=str(entry.get("details") or ""),
                )
            )
        elif kind == "background":
            events.append(p.Background(message=str(entry.get("message", ""))))
        elif kind == CARRIED_KIND:
            events.append(carried_event(entry))
    events.append(undo if undo is not None else p.UndoAvailable(item_id=undo_item_id))
    return events


def _needs_id(entry: Entry) -> bool:
    """True for an item entry whose event needs an id the item does not have."""
    if entry.get("kind") != "item":
        return False
    item = entry.get("item") or {}
    return not item.get("id") and item_type(item) in _SHOWN_KINDS


def _item_event(
    entry: Entry, turn_id: str, fresh: Iterator[str], files: Path | None = None
) -> p.ItemCompleted | None:
    item = entry.get("item") or {}
    kind = item_type(item)
    if kind == "function_call_output":  # its row is found by its call id: no item id needed
        call_id = str(item.get("call_id", ""))
        output: dict[str, Any] = {"call_id": call_id, "output": item.get("output", "")}
        if entry.get("pinned"):
            output["pinned"] = entry["pinned"]
        if images := tool_images(item):  # the images it returned, as live (missing: said)
            output["images"] = [display(part, files) for part in images]
        return _completed(  # type: ignore[no-any-return]
            {
                "turn_id": turn_id,
                "item": {"id": f"out_{call_id}", "kind": "function_call_output", "data": output},
            }
        )
    item_id = str(item.get("id") or next(fresh, "") or new_id("item"))
    if kind == "message":
        role = item.get("role")
        if role not in ("user", "assistant"):
            return None
        text = message_text(item)
        if role == "user" and is_injected_text(text):
            return None
        data: dict[str, Any] = {"text": text}
        if role == "user" and (shown := message_display(item, files)):
            data["attachments"] = shown  # each said missing when its file is gone
        if entry.get("interrupted"):
            data["interrupted"] = True
        if entry.get("not_sent"):
            data["not_sent"] = True
        if entry.get("pinned"):
            data["pinned"] = entry["pinned"]  # its pin's key
        turn_kind = "user_message" if role == "user" else "agent_message"
        return _completed(  # type: ignore[no-any-return]
            {"turn_id": turn_id, "item": {"id": item_id, "kind": turn_kind, "data": data}}
        )
    if kind == "function_call":
        return p.ItemCompleted(turn_id=turn_id, item=function_call_display(item_id, item))
    if kind == "reasoning":
        summary = reasoning_summary(item)
        if not summary.strip():
            return None
        return p.ItemCompleted(
            turn_id=turn_id,
            item=p.TurnItem(id=item_id, kind="reasoning", data={"summary": summary}),
        )
    return None  # compaction items and unknown ones are shown by their marker, or not at all


def function_call_display(item_id: str, item: dict[str, Any]) -> p.TurnItem:
    """How a ``function_call`` item is shown, live and replayed alike."""
    return p.TurnItem(
        id=item_id,
        kind="function_call",
        data={
            "name": item.get("name", ""),
            "arguments": item.get("arguments", ""),
            "call_id": item.get("call_id", ""),
        },
    )


def reasoning_summary(item: dict[str, Any]) -> str:
    """The readable summary of a ``reasoning`` item (its parts joined by spaces)."""
    return " ".join(
        str(part.get("text", "")) for part in item.get("summary") or [] if isinstance(part, dict)
    )


def _compaction_events(entry: Entry, turn_id: str, undo_item_id: str | None) -> list[p.Event]:
    marker = p.CompactionMarker.from_record(entry)
    updates: dict[str, Any] = {}
    if not marker.item_id:
        updates["item_id"] = new_id("cmp")
    if turn_id:
        updates["turn_id"] = turn_id
    if updates:
        marker = marker.model_copy(update=updates)
    events: list[p.Event] = [
        p.ItemStarted(
            turn_id=marker.turn_id,
            item=p.TurnItem(
                id=marker.item_id, kind="context_compaction", data={"trigger": marker.trigger}
            ),
        ),
        p.ContextCompacted.of(
            marker,
            undoable=marker.item_id == undo_item_id,
            in_view=list(entry.get("in_view") or []),
        ),
    ]
    if entry.get("summary_edited") or entry.get("summary_undoable"):
        events.append(
            p.SummaryEdited(
                item_id=marker.item_id,
                summary=marker.summary,
                edited=bool(entry.get("summary_edited")),
                undoable=bool(entry.get("summary_undoable")),
            )
        )
    if entry.get("undone"):
        events.append(p.CompactionUndone(item_id=marker.item_id, tokens=marker.tokens_before))
    return events


def cut_off_event(entry: Entry) -> p.ItemCompleted:
    """The item a reply cut off by the server is drawn from, live and on replay (see
    ``turn.cut_off``): an agent message marked ``cut_off``, out of the model's view."""
    return p.ItemCompleted(
        turn_id=str(entry.get("turn_id", "")),
        item=p.TurnItem(
            id=str(entry.get("item_id", "")),
            kind="agent_message",
            data={"text": str(entry.get("text", "")), "cut_off": True},
        ),
    )
