"""The events of compaction and the marker of what one compaction did, in its record form."""

from __future__ import annotations

import pydantic
import pytest

from app.core import protocol as p
from app.core.protocol import compaction

EVENT = pydantic.TypeAdapter(p.Event)

MARKER = compaction.CompactionMarker(
    item_id="cmp_1",
    turn_id="t3",
    trigger="auto",
    strategy="remote_then_local",
    tokens_before=90_000,
    tokens_after=12_000,
    summary="what happened so far",
    target=40_000,
    freed_share=0.87,
    remote_form="standalone",
    shrunk={"dropped_messages": 2},
    carried_pins=["pin_1"],
    carried_notes=["my name is Ada"],
    carried_files=["app.py (changed)"],
    carried_commands=["pytest"],
    carried_dropped=1,
)


def test_a_marker_round_trips_through_its_record() -> None:
    record = MARKER.record()
    assert isinstance(record, dict) and record["tokens_before"] == 90_000
    assert compaction.CompactionMarker.from_record(record) == MARKER


def test_an_older_record_takes_the_defaults_for_what_it_lacks_or_holds_as_null() -> None:
    marker = compaction.CompactionMarker.from_record(
        {"item_id": None, "tokens_before": 500, "target": None, "style": None,
         "kind": "compaction", "undone": True}  # transcript keys are not marker fields
    )
    assert marker.item_id == ""
    assert marker.tokens_before == 500
    assert marker.target is None
    assert marker.style == "handoff"
    assert marker.carried_notes == []


def test_context_compacted_is_the_marker_with_what_the_window_needs_now() -> None:
    event = compaction.ContextCompacted.of(MARKER, undoable=False, in_view=["hello"])
    assert isinstance(event, compaction.CompactionMarker)
    assert {k: v for k, v in event.record().items() if k in MARKER.record()} == MARKER.record()
    assert (event.type, event.undoable, event.in_view) == ("context_compacted", False, ["hello"])


SAMPLES: list[p.Event] = [
    compaction.CompactionProgress(turn_id="t", stage="trimming", trimmed=3),
    compaction.ContextCompacted.of(MARKER, undoable=True, in_view=[]),
    compaction.CompactionUndone(item_id="cmp_1", tokens=90_000),
    compaction.CompactionEnded(turn_id="t", item_id="cmp_2", status="stopped", focus="tests"),
    compaction.UndoAvailable(item_id=None, reason="a turn has started since"),
    compaction.SummaryEdited(item_id="cmp_1", summary="edited", tokens=3),
]


@pytest.mark.parametrize("event", SAMPLES, ids=lambda event: event.type)
def test_a_compaction_event_round_trips_through_the_event_union(event: p.Event) -> None:
    again = EVENT.validate_python(event.model_dump())
    assert type(again) is type(event)
    assert again == event


def test_triggers_and_strategies_are_closed_sets() -> None:
    with pytest.raises(pydantic.ValidationError):
        compaction.CompactionMarker(item_id="x", trigger="sometimes")  # type: ignore[arg-type]
    with pytest.raises(pydantic.ValidationError):
        compaction.CompactionMarker(item_id="x", strategy="magic")  # type: ignore[arg-type]
