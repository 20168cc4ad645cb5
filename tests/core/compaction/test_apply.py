"""Applying a compaction: the history is replaced, the ``compacted`` record written, the
marker shown and the events emitted in the spec's order; a record that cannot be written
leaves the history and the loop guard as they were."""

from __future__ import annotations

import time
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import pytest

from app.core import protocol as p
from app.core.compaction import apply as apply_module
from app.core.compaction.apply import Applier, Start, carried_fields
from app.core.compaction.budget import compaction_budget
from app.core.compaction.notes.block import CarriedOver
from app.core.compaction.paths.path import PathResult
from app.core.compaction.pins import Carried, Pin, Pins, pin_record
from app.core.compaction.prompts import summary_text
from app.core.compaction.room_check import LOCAL_COMPACTION_WARNING
from app.core.compaction.undo import UndoState
from app.core.config import CoreConfig
from app.core.conversation.history import ContextHistory
from app.core.conversation.transcript import Transcript
from app.core.items import Item, assistant_message, user_message
from app.core.providers.base import Usage
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

    def __init__(self, fail_record: bool = False, config: CoreConfig = _CONFIG) -> None:
        self.counter = TokenCounter("gpt-4o", allow_download=False)
        self.history = ContextHistory(self.counter)
        self.transcript = Transcript()
        self.records: list[tuple[str, dict[str, Any]]] = []
        self.events: list[p.Event] = []
        self.order: list[str] = []  # the events' kinds, and "usage" where the usage was emitted
        self.notes: list[tuple[str, str]] = []
        self.said: list[str] = []
        self.said_in: list[str] = []  # the turn each was said in
        self.abouts: list[str] = []  # the compaction each note is about
        self.guard = Guard()
        self.undo = UndoState()
        self.fail_record = fail_record
        self.pins = pins = Pins(
            transcript=self.transcript, history=self.history, count_item=self.counter.count_item,
            budget=lambda: BUDGET, record=self.record, emit=self.emit,
        )
        self.applier = Applier(
            history=self.history, transcript=self.transcript, config=lambda: config,
            record=self.record, emit=self.emit, note=self.note,
            usage_reset=lambda: None, emit_usage=lambda: self.order.append("usage"),
            usage=self.history.usage, say=self.say,
            record_held_notes=lambda: None, pins=pins, undo=self.undo, guard=self.guard,
        )

    def emit(self, event: p.Event) -> None:
        self.events.append(event)
        self.order.append(type(event).__name__)

    def say(self, turn_id: str, text: str) -> None:
        self.said_in.append(turn_id)
        self.said.append(text)

    def note(self, kind: str, text: str, about: str = "") -> None:
        self.notes.append((kind, text))
        self.abouts.append(about)

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
    assert session.said_in == ["turn_1"]
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
    assert session.said_in == ["turn_1"]
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


def test_the_marker_record_and_events_carry_every_figure_of_the_compaction(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(apply_module, "time", SimpleNamespace(monotonic=lambda: 1_000.0))
    config = CoreConfig(summary_style="checkpoint")
    session = Session(config=config)
    long_history(session)
    start = replace(session.start(), trigger="auto", started=997.5, incoming=42)
    usage = Usage(
        input_tokens=900, output_tokens=60, total_tokens=960, cached_tokens=300, estimated=True
    )
    result = replace(
        summarised(), usage=usage, kept_truncated=True, cut_short=True,
        kept_previous_summary=True, summary_unusable="repetition", pruned_outputs=3,
        shrunk={"dropped_messages": 1}, remote_form="trigger",
    )
    session.applier.apply(start, result, result.items, session.counter.count_item)
    after = session.history.usage()
    share = (start.tokens_before - after) / start.tokens_before
    assert round(share, 4) != round(share, 5)  # the share is kept to four places
    marker = p.CompactionMarker(
        item_id="cmp_1", turn_id="turn_1", trigger="auto", strategy="local",
        tokens_before=start.tokens_before, tokens_after=after, duration_ms=2_500,
        summary="All about questions.", kept_user_messages=1, kept_truncated=True,
        trimmed_items=2, focus="the log", style="checkpoint", target=BUDGET.target,
        incoming_tokens=42, freed_share=round(share, 4), freed_little=False,
        summary_cut_short=True, kept_previous_summary=True, summary_unusable="repetition",
        pruned_outputs=3, remote_form="trigger", shrunk={"dropped_messages": 1},
        carried_notes=["Port 8080."], carried_commands=["make"],
    )
    (_, record), = session.records
    assert record == {
        "message": summary_text("All about questions."), "replacement_history": result.items,
        "undoable": True, **marker.record(),
    }
    assert session.events[0] == p.TokenCount(
        total=960, input=900, output=60, cached=300, context_window=BUDGET.window,
        auto_compact_limit=BUDGET.limit, approximate=True, source="api",
    )
    compacted = [e for e in session.events if isinstance(e, p.ContextCompacted)]
    assert compacted == [p.ContextCompacted.of(marker, undoable=True, in_view=["Question 7"])]
    assert session.transcript.entries()[-1]["in_view"] == ["Question 7"]
    assert p.ItemCompleted(
        turn_id="turn_1",
        item=p.TurnItem(
            id="cmp_1", kind="context_compaction", data={"trigger": "auto", "strategy": "local"}
        ),
    ) in session.events
    assert session.events[-len(session.notes) - 1] == p.UndoAvailable(
        item_id="cmp_1", last_compaction="cmp_1", note=session.undo.note()
    )
    assert session.undo.note()  # until the next message


def test_the_token_count_has_no_limit_when_automatic_compaction_is_off() -> None:
    session = Session(config=CoreConfig(auto_compact=False))
    long_history(session)
    result = summarised()
    session.applier.apply(session.start(), result, result.items, session.counter.count_item)
    token_count = session.events[0]
    assert isinstance(token_count, p.TokenCount) and token_count.auto_compact_limit is None
    assert token_count.context_window == BUDGET.window


@pytest.mark.parametrize("strategy", ["remote", "prune"])
def test_a_remote_or_pruning_compaction_shows_no_summary_and_no_local_warning(
    strategy: p.Strategy,
) -> None:
    session = Session()
    long_history(session)
    result = replace(summarised(), strategy=strategy)
    session.applier.apply(session.start(), result, result.items, session.counter.count_item)
    (_, record), = session.records
    assert record["message"] == "" and record["summary"] == ""
    assert record["strategy"] == strategy
    assert LOCAL_COMPACTION_WARNING not in [text for _, text in session.notes]
    assert not session.guard.warned


def test_a_warning_about_the_compaction_names_it_and_the_session_warning_does_not() -> None:
    session = Session()
    session.history.append(user_message("Short question."))
    # The summary outweighs what it replaced: a warning about this compaction.
    items = [user_message(summary_text("A long summary. " * 200))]
    result = PathResult(strategy="local", items=items, summary="A long summary. " * 200)
    session.applier.apply(session.start(), result, items, session.counter.count_item)
    warnings = [e for e in session.events if isinstance(e, p.Warning)]
    assert [w.message.startswith("This compaction made the context larger") for w in warnings] == [
        True, False,
    ]
    assert [w.compaction_id for w in warnings] == ["cmp_1", ""]
    assert warnings[1].message == LOCAL_COMPACTION_WARNING
    assert session.abouts == ["cmp_1", ""]


def test_the_session_warning_is_not_said_twice() -> None:
    session = Session()
    long_history(session)
    session.guard.warned = True
    result = summarised()
    session.applier.apply(session.start(), result, result.items, session.counter.count_item)
    assert session.notes == [] and session.guard.warned
    assert not any(isinstance(event, p.Warning) for event in session.events)


def test_the_history_takes_the_counts_the_caller_made() -> None:
    session = Session()
    long_history(session)
    result = summarised()
    session.applier.apply(session.start(), result, result.items, lambda _item: 1_000)
    assert session.history.usage() == 1_000 * len(result.items)
    assert session.guard.post_compaction_usage == 1_000 * len(result.items)


def test_undo_puts_back_the_history_from_before_the_compaction() -> None:
    session = Session()
    before = long_history(session)
    result = summarised()
    session.applier.apply(session.start(), result, result.items, session.counter.count_item)
    entry = session.undo.take()
    assert entry is not None and entry.item_id == "cmp_1"
    session.history.restore(entry.snapshot)
    assert session.history.items() == before


def test_the_marker_names_the_pins_the_new_history_holds() -> None:
    session = Session()
    long_history(session)
    kept = user_message("Question 7")
    session.pins.replay(
        pin_record(Pin(key="pin-3", items=(kept,), tokens=5, kind="user_message"), 3)
    )
    items = [kept, user_message(summary_text("All about questions."))]
    result = PathResult(strategy="local", items=items, summary="All about questions.")
    session.applier.apply(session.start(), result, items, session.counter.count_item)
    (_, record), = session.records
    assert record["carried_pins"] == ["pin-3"]
    assert record["carried_pin_names"] == session.pins.names(["pin-3"]) != []
