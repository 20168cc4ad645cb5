"""Applying a compaction: the history is replaced, the ``compacted`` record written, the
marker shown and the events emitted in the spec's order; a record that cannot be written
leaves the history and the loop guard as they were."""

from __future__ import annotations

import time
from typing import Any

import pytest

from app.core import protocol as p
from app.core.compaction.apply import Applier, Start, carried_fields
from app.core.compaction.budget import compaction_budget
from app.core.compaction.notes.block import CarriedOver
from app.core.compaction.paths.path import PathResult
from app.core.compaction.pins import Carried, Pin, Pins
from app.core.compaction.prompts import summary_text
from app.core.compaction.room_check import LOCAL_COMPACTION_WARNING
from app.core.compaction.undo import UndoState
from app.core.config import CoreConfig
from app.core.conversation.history import ContextHistory
from app.core.conversation.transcript import Transcript
from app.core.items import Item, assistant_message, user_message
from app.core.tokens.counter import TokenCounter

from .compaction_fakes import USAGE

BUDGET = compaction_budget(16_000, 14_400, 500)
_CONFIG = CoreConfig()


class Guard:
    def __init__(self) -> None:
        self.compacted_version: int | None = None
        self.post_compaction_usage: int | None = None
        self.warned = False


class Session:
    """The pieces a compaction is applied to, and what it recorded, emitted and said."""

    def __init__(self, fail_record: bool = False) -> None:
        self.counter = TokenCounter("gpt-4o", allow_download=False)
        self.history = ContextHistory(self.counter)
        self.transcript = Transcript()
        self.records: list[tuple[str, dict[str, Any]]] = []
        self.events: list[p.Event] = []
        self.order: list[str] = []  # the events' kinds, and "usage" where the usage was emitted
        self.notes: list[tuple[str, str]] = []
        self.said: list[str] = []
        self.guard = Guard()
        self.undo = UndoState()
        self.fail_record = fail_record
        pins = Pins(
            transcript=self.transcript, history=self.history, count_item=self.counter.count_item,
            budget=lambda: BUDGET, record=self.record, emit=self.emit,
        )
        self.applier = Applier(
            history=self.history, transcript=self.transcript, config=lambda: _CONFIG,
            record=self.record, emit=self.emit,
            note=lambda kind, text, _about="": self.notes.append((kind, text)),
            usage_reset=lambda: None, emit_usage=lambda: self.order.append("usage"),
            usage=self.history.usage, say=lambda _turn, text: self.said.append(text),
            record_held_notes=lambda: None, pins=pins, undo=self.undo, guard=self.guard,
        )

    def emit(self, event: p.Event) -> None:
        self.events.append(event)
        self.order.append(type(event).__name__)

    def record(self, kind: str, payload: dict[str, Any]) -> None:
        if self.fail_record:
            raise OSError("disk full")
        self.records.append((kind, payload))

    def start(self) -> Start:
        return Start(
            turn_id="turn_1", item_id="cmp_1", trigger="manual", focus="the log",
            before=self.history.snapshot(), tokens_before=self.history.usage(),
            started=time.monotonic(), budget=BUDGET, incoming=0,
        )


def long_history(session: Session) -> list[Item]:
    for n in range(8):
        session.history.append(user_message(f"Question {n}: " + "words " * 300))
        session.history.append(assistant_message(f"Answer {n}: " + "more " * 300))
    return session.history.items()


def summarised() -> PathResult:
    items = [user_message("Question 7"), user_message(summary_text("All about questions."))]
    carried = CarriedOver(notes=("Port 8080.",), commands=("make",))
    return PathResult(
        strategy="local", items=items, summary="All about questions.", usage=USAGE, kept=1,
        trimmed=2, carried=carried,
    )


def test_the_history_is_replaced_recorded_and_said_in_order() -> None:
    session = Session()
    long_history(session)
    start = session.start()
    result = summarised()
    session.applier.apply(start, result, result.items, session.counter.count_item)
    assert session.history.items() == result.items
    assert session.guard.compacted_version == session.history.version
    assert session.guard.post_compaction_usage == session.history.usage() < start.tokens_before
    assert session.guard.warned  # the long-conversations warning, said once a session
    (kind, record), = session.records
    assert kind == "compacted" and record["replacement_history"] == result.items
    assert record["message"] == summary_text("All about questions.")
    assert record["carried_notes"] == ["Port 8080."] and record["focus"] == "the log"
    assert session.undo.item_id == "cmp_1"
    assert session.said == [
        "Trimmed 2 older item(s) before compacting so the prompt fits the model context window."
    ]
    assert session.order == [
        "TokenCount", "usage", "ItemCompleted", "ContextCompacted", "UndoAvailable", "Warning",
    ]
    token_count = session.events[0]
    assert isinstance(token_count, p.TokenCount) and token_count.source == "api"
    compacted = session.events[2]
    assert isinstance(compacted, p.ContextCompacted) and compacted.undoable
    assert session.events[-1] == p.Warning(message=LOCAL_COMPACTION_WARNING)
    assert session.notes == [("warning", LOCAL_COMPACTION_WARNING)]
    assert session.transcript.entries()[-1]["kind"] == "compaction"


def test_a_record_that_cannot_be_written_changes_nothing() -> None:
    session = Session(fail_record=True)
    before = long_history(session)
    session.guard.compacted_version, session.guard.post_compaction_usage = 3, 1_234
    result = summarised()
    with pytest.raises(OSError):
        session.applier.apply(session.start(), result, result.items, session.counter.count_item)
    assert session.history.items() == before
    assert (session.guard.compacted_version, session.guard.post_compaction_usage) == (3, 1_234)
    assert not session.guard.warned and session.undo.item_id is None
    assert not any(isinstance(event, p.ContextCompacted) for event in session.events)
    assert session.transcript.entries() == []


def test_pins_go_before_the_summary_and_a_pin_left_out_is_said() -> None:
    session = Session()
    pinned = Pin(key="pin-0", items=(user_message("Keep this."),), tokens=10, kind="user_message")
    left = Pin(key="pin-1", items=(user_message("Too big."),), tokens=9_000, kind="user_message")
    result = summarised()
    session.applier.carry_pins("turn_1", result, Carried(pins=[pinned], left_out=[left]))
    assert result.items[-2] == pinned.items[0] and result.carried_pins == ["pin-0"]
    assert session.said == [
        ("A pinned message (about 9,000 tokens) did not fit the room this compaction had for "
        "pins and was left out of the model's view this time; it stays pinned.")
    ]
    pruned = PathResult(strategy="prune", items=[user_message("as it was")])
    session.applier.carry_pins("turn_1", pruned, Carried(pins=[pinned], left_out=[]))
    assert pruned.items == [user_message("as it was")]  # pruning left pins in place


def test_the_marker_says_what_was_carried_only_when_notes_are_on() -> None:
    assert carried_fields(None) == {}
    fields = carried_fields(CarriedOver(notes=("a 1",), files_read=("x.py",), dropped=1))
    assert fields == {
        "carried_notes": ["a 1"], "carried_files": ["x.py (read)"], "carried_commands": [],
        "carried_dropped": 1,
    }
