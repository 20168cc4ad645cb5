"""The context view: what the model will see next, item by item, with the gauge's own counts
and what each item is (summary, injected context, pinned, carried notes)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import protocol as p
from ..attachments.parts import sent_description
from ..compaction.notes.carryover import is_notes_message
from ..compaction.prompts import is_summary_message
from ..items import attachment_parts, is_injected_context, item_count_parts, item_type

if TYPE_CHECKING:
    from ..compaction.pins import Pins
    from ..conversation.history import ContextHistory


def context_entries(history: ContextHistory, pins: Pins) -> list[p.ContextEntry]:
    """One entry per item of the model's view, in order, counted as the gauge counts."""
    entries: list[p.ContextEntry] = []
    for item, count in zip(history.raw_items(), history.item_tokens(), strict=True):
        kind = item_type(item)
        readable, _ = item_count_parts(item)
        entries.append(
            p.ContextEntry(
                role=str(item.get("role", "")) if kind == "message" else "",
                kind=kind,
                tokens=count,
                is_summary=is_summary_message(item),
                injected=is_injected_context(item),
                pinned=pins.holds(item),
                carried_notes=is_notes_message(item),
                text=readable,
                attachments=[sent_description(part) for part in attachment_parts(item)],
            )
        )
    return entries
