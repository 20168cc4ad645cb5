"""A summary of a branch left behind, carried into a turn (``branch_summary``): kept in the
transcript with the turn it went to, and undone on request, taken out of the model's view
again as a compaction is undone.

Both are ``event`` records of the rollout (anchored, like every record, to the turn active
when they were written): a branch made later from a turn before the undo still has the
summary in its view, as it had then.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ... import protocol as p
from ...conversation.history import ContextHistory
from ...conversation.transcript import Transcript
from ...items import is_message, message_text
from .summary import BranchSummary, summary_item

CARRIED_KIND = "branch_summary"
UNDONE_KIND = "branch_summary_undone"


def carry(
    turn_id: str,
    summary: BranchSummary,
    transcript: Transcript,
    record: Callable[[str, dict[str, Any]], None],
) -> None:
    """``summary`` went into turn ``turn_id``'s view: kept in the transcript and recorded."""
    payload = {
        "kind": CARRIED_KIND, "turn_id": turn_id, "text": summary.text,
        "by_model": summary.by_model,
    }
    record("event", payload)
    replay_carried(payload, transcript)


def replay_carried(payload: dict[str, Any], transcript: Transcript) -> None:
    transcript.add_recorded_entry({**payload, "undone": False})


def carried_event(entry: dict[str, Any]) -> p.BranchSummaryCarried:
    """How a front end is told of a carried summary (a replay's event)."""
    return p.BranchSummaryCarried(
        turn_id=str(entry.get("turn_id", "")), text=str(entry.get("text", "")),
        by_model=bool(entry.get("by_model", True)), undone=bool(entry.get("undone")),
    )


def undo(
    turn_id: str,
    transcript: Transcript,
    history: ContextHistory,
    record: Callable[[str, dict[str, Any]], None],
) -> str | None:
    """Take the summary carried into ``turn_id`` out of the model's view (recorded first);
    ``None`` when done, else why it could not be, in words."""
    entry = _entry(transcript, turn_id)
    if entry is None or entry.get("undone"):
        return "No summary of a branch left behind is in that turn to undo."
    if _block_index(history, entry) is None:
        return (
            "That summary is no longer in the model's view on its own: a compaction has "
            "summarised the conversation since."
        )
    payload = {"kind": UNDONE_KIND, "turn_id": turn_id}
    record("event", payload)
    replay_undone(payload, transcript, history)
    return None


def replay_undone(
    payload: dict[str, Any], transcript: Transcript, history: ContextHistory
) -> None:
    """An undo read back: the summary's entry marked, its block out of the history."""
    entry = _entry(transcript, str(payload.get("turn_id", "")))
    if entry is None:
        return
    entry["undone"] = True
    index = _block_index(history, entry)
    if index is not None:
        items, counts = list(history.raw_items()), history.known_item_tokens()
        del items[index], counts[index]
        history.replace(items, counts)


def _entry(transcript: Transcript, turn_id: str) -> dict[str, Any] | None:
    for entry in reversed(transcript.read_entries()):
        if entry.get("kind") == CARRIED_KIND and entry.get("turn_id") == turn_id:
            return entry
    return None


def _block_index(history: ContextHistory, entry: dict[str, Any]) -> int | None:
    """Where the history holds the block the model reads for ``entry`` (the newest one)."""
    summary = BranchSummary(str(entry.get("text", "")), bool(entry.get("by_model", True)))
    block = message_text(summary_item(summary))
    items = history.raw_items()
    for index in range(len(items) - 1, -1, -1):
        if is_message(items[index], "user") and message_text(items[index]) == block:
            return index
    return None
