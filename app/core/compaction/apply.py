"""Applying a compaction (spec section 3 step 8): the history rewritten, the marker made, the
``compacted`` record written, the events emitted, in one synchronous step (no await)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from .. import protocol as p
from ..config import CoreConfig
from ..conversation.history import ContextHistory, HistorySnapshot
from ..conversation.transcript import Transcript
from ..items import Item
from .budget import CompactionBudget
from .notes.carryover import CarriedOver
from .paths.path import PathResult
from .pins import Carried, Pins, carry
from .prompts import summary_text
from .rebuild import real_user_messages
from .room_check import LOCAL_COMPACTION_WARNING, check_room
from .undo import UndoState


class LoopGuard(Protocol):
    """Where the last compaction left the history (the compactor's memory of it)."""

    compacted_version: int | None
    post_compaction_usage: int | None
    warned: bool


@dataclass(frozen=True)
class Start:
    """How the compaction being applied started: its turn and marker item, trigger and focus,
    the history and usage before it, when, its budget and the tokens held out of it."""

    turn_id: str
    item_id: str
    trigger: p.Trigger
    focus: str | None
    before: HistorySnapshot
    tokens_before: int
    started: float
    budget: CompactionBudget
    incoming: int


class Applier:
    """Applies what a path produced to the session's history, transcript and rollout."""

    def __init__(
        self,
        *,
        history: ContextHistory,
        transcript: Transcript,
        config: Callable[[], CoreConfig],
        record: Callable[[str, dict[str, Any]], None],
        emit: Callable[[p.Event], None],
        note: Callable[..., None],  # (kind, message, compaction_id="")
        usage_reset: Callable[[], None],
        emit_usage: Callable[[], None],
        usage: Callable[[], int],
        say: Callable[[str, str], None],
        record_held_notes: Callable[[], None],
        pins: Pins,
        undo: UndoState,
        guard: LoopGuard,
    ) -> None:
        self._history = history
        self._transcript = transcript
        self._config = config
        self._record = record
        self._emit = emit
        self._note = note
        self._usage_reset = usage_reset
        self._emit_usage = emit_usage
        self._usage = usage
        self._say = say
        self._record_held_notes = record_held_notes
        self._pins = pins
        self._undo = undo
        self._guard = guard

    def carry_pins(self, turn_id: str, result: PathResult, carried: Carried) -> None:
        """Pinned messages go verbatim just before the summary (pruning left them in place);
        a pin the room could not hold this time is said, by its size."""
        if result.strategy != "prune":
            result.items = carry(result.items, carried.items)
            result.carried_pins = carried.keys
        for pin in carried.left_out:
            self._say(
                turn_id,
                f"A pinned message (about {pin.tokens:,} tokens) did not fit the room this "
                "compaction had for pins and was left out of the model's view this time; it "
                "stays pinned.",
            )

    def apply(
        self,
        start: Start,
        result: PathResult,
        new_items: list[Item],
        count_item: Callable[[Item], int],
    ) -> None:
        """Replace the history with ``new_items`` and record, show and say the compaction;
        if the record cannot be written, the history goes back to what it was."""
        config = self._config()
        guard = self._guard
        turn_id, item_id, budget = start.turn_id, start.item_id, start.budget
        if result.usage is not None:
            self._emit(
                p.TokenCount(
                    total=result.usage.total_tokens,
                    input=result.usage.input_tokens,
                    output=result.usage.output_tokens,
                    cached=result.usage.cached_tokens,
                    context_window=budget.window,
                    auto_compact_limit=budget.limit if config.auto_compact else None,
                    approximate=result.usage.estimated,
                    source="api",
                )
            )
        if result.trimmed:
            message = (
                f"Trimmed {result.trimmed} older item(s) before compacting so the prompt fits the "
                "model context window."
            )
            self._say(turn_id, message)
        previous = (guard.compacted_version, guard.post_compaction_usage)
        self._history.replace(new_items, [count_item(item) for item in new_items])
        guard.compacted_version = self._history.version
        self._usage_reset()
        tokens_before, tokens_after = start.tokens_before, self._usage()
        guard.post_compaction_usage = tokens_after
        check = check_room(result, tokens_before, tokens_after, warned=guard.warned)
        shown_summary = result.summary if result.strategy not in ("remote", "prune") else ""
        marker = p.CompactionMarker(
            item_id=item_id,
            turn_id=turn_id,
            trigger=start.trigger,
            strategy=result.strategy,
            tokens_before=tokens_before,
            tokens_after=tokens_after,
            duration_ms=int((time.monotonic() - start.started) * 1000),
            summary=shown_summary,
            kept_user_messages=result.kept,
            kept_truncated=result.kept_truncated,
            trimmed_items=result.trimmed,
            focus=start.focus,
            style=config.summary_style,
            target=budget.target,
            incoming_tokens=start.incoming,
            freed_share=round(check.freed_share, 4),
            freed_little=check.freed_little,
            summary_cut_short=result.cut_short,
            kept_previous_summary=result.kept_previous_summary,
            summary_unusable=result.summary_unusable,
            pruned_outputs=result.pruned_outputs,
            remote_form=result.remote_form,
            shrunk=result.shrunk,
            carried_pins=(pins := result.carried_pins or self._pins.present(new_items)),
            carried_pin_names=self._pins.names(pins),
            **carried_fields(result.carried),
        )
        try:
            self._record(
                "compacted",
                {
                    "message": summary_text(result.summary) if shown_summary else "",
                    "replacement_history": new_items,
                    "undoable": True,
                    **marker.record(),
                },
            )
        except Exception:
            # Not saved, not done: the history goes back to what the rollout says it is.
            self._history.restore(start.before)
            guard.compacted_version, guard.post_compaction_usage = previous
            raise
        in_view = real_user_messages(new_items)
        self._transcript.add_compaction(marker, in_view)
        self._record_held_notes()
        self._undo.offer(item_id, start.before)
        self._emit_usage()  # after the record: resume restores usage from the token count
        self._emit(
            p.ItemCompleted(
                turn_id=turn_id,
                item=p.TurnItem(
                    id=item_id,
                    kind="context_compaction",
                    data={"trigger": start.trigger, "strategy": result.strategy},
                ),
            )
        )
        self._emit(p.ContextCompacted.of(marker, undoable=True, in_view=in_view))
        self._emit(
            p.UndoAvailable(item_id=item_id, last_compaction=item_id, note=self._undo.note())
        )
        if check.warned_local:
            guard.warned = True
        for text in check.warnings:
            # About this compaction (it goes once undone), but the once-a-session one.
            about = "" if text == LOCAL_COMPACTION_WARNING else item_id
            self._note("warning", text, about)
            self._emit(p.Warning(message=text, compaction_id=about))


def carried_fields(carried: CarriedOver | None) -> dict[str, Any]:
    """What the marker says was carried over (nothing when the notes are off)."""
    if carried is None:
        return {}
    return {
        "carried_notes": list(carried.notes),
        "carried_files": carried.files,
        "carried_commands": list(carried.commands),
        "carried_dropped": carried.dropped,
    }
