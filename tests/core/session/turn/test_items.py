"""The items a turn adds (``app.core.session.turn.items``): saved before anything else holds them, and
withdrawn from the model's view (the transcript keeps them) when a turn cannot fit."""

from __future__ import annotations

from typing import Any

import pytest

from app.core import protocol as p
from app.core.compaction.undo import UndoState
from app.core.conversation.history import ContextHistory
from app.core.conversation.transcript import Transcript
from app.core.items import assistant_message, function_call_output, user_message
from app.core.session.turn.items import TurnItems
from app.core.sessions.record import ReadOnlySession
from app.core.tokens.counter import TokenCounter


class Compactor:
    """The compactor's part the items touch: its undo log and its compacted mark."""

    def __init__(self) -> None:
        self.undo = UndoState()
        self.compacted_version: int | None = 3


class Meter:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def reset(self) -> None:
        self.calls.append("reset")

    def emit_usage(self) -> None:
        self.calls.append("emit_usage")


class Parts:
    def __init__(self, read_only: bool = False) -> None:
        self.history = ContextHistory(TokenCounter("gpt-4o", allow_download=False))
        self.transcript = Transcript()
        self.compactor = Compactor()
        self.meter = Meter()
        self.records: list[tuple[str, dict[str, Any]]] = []
        self.in_worker: list[str] = []  # the kinds written off the event loop
        self.events: list[p.Event] = []

        def record(kind: str, payload: dict[str, Any]) -> None:
            if read_only:
                raise ReadOnlySession("read only")
            self.records.append((kind, payload))

        async def record_in_worker(kind: str, payload: dict[str, Any]) -> None:
            record(kind, payload)
            self.in_worker.append(kind)

        self.items = TurnItems(
            record=record, record_in_worker=record_in_worker, history=self.history,
            transcript=self.transcript,
            compactor=self.compactor, meter=self.meter, emit=self.events.append,  # type: ignore[arg-type]
        )


def test_an_item_is_saved_then_held_everywhere() -> None:
    parts = Parts()
    parts.items.start()
    item = assistant_message("cut off")
    parts.items.append(item, "t1", interrupted=True)
    assert parts.records == [
        ("response_item", {"item": item, "turn_id": "t1", "interrupted": True})
    ]
    assert parts.history.raw_items() == [item] and parts.items.added == [item]
    assert parts.transcript.entries()[0]["interrupted"] is True


async def test_a_cut_outputs_whole_is_saved_off_the_loop_then_the_cut_item() -> None:
    parts = Parts()
    parts.items.start()
    whole = function_call_output("c1", "line\n" * 1000)
    cut = function_call_output("c1", "line\n[998 lines left out]\nline\n")
    await parts.items.append_cut_output(cut, whole, "t1")
    assert parts.records == [
        ("tool_output", {"item": whole, "turn_id": "t1"}),
        ("response_item", {"item": cut, "turn_id": "t1"}),
    ]
    assert parts.in_worker == ["tool_output"]
    assert parts.history.raw_items() == [cut] and parts.items.added == [cut]
    assert parts.transcript.entries()[0]["item"] == whole  # the person sees all of it


async def test_a_cut_output_that_cannot_be_saved_is_nowhere() -> None:
    parts = Parts(read_only=True)
    with pytest.raises(ReadOnlySession):
        await parts.items.append_cut_output(function_call_output("c1", "cut"),
                                            function_call_output("c1", "whole"), "t1")
    assert len(parts.history) == 0 and len(parts.transcript) == 0 and parts.items.added == []


def test_an_item_that_cannot_be_saved_is_nowhere() -> None:
    parts = Parts(read_only=True)
    with pytest.raises(ReadOnlySession):
        parts.items.append(user_message("hi"), "t1")
    assert len(parts.history) == 0 and len(parts.transcript) == 0 and parts.items.added == []


def test_a_withdrawn_turn_leaves_the_view_but_not_the_transcript() -> None:
    parts = Parts()
    earlier = user_message("earlier")
    parts.items.append(earlier, "t0")
    parts.items.start()
    parts.items.append(user_message("too big"), "t1")
    parts.items.withdraw("t1", "too big", "It does not fit.")
    assert parts.history.raw_items() == [earlier]
    assert parts.compactor.compacted_version is None
    assert parts.meter.calls == ["reset", "emit_usage"]
    kind, payload = parts.records[-1]
    assert (kind, payload["reason"], payload["replacement_history"]) == (
        "history_replaced", "withdrawn", [earlier]
    )
    assert parts.events == [p.MessageNotSent(turn_id="t1", text="too big",
                                             reason="It does not fit.")]
    assert len(parts.transcript) == 2
    assert parts.transcript.entries()[1].get("not_sent")


def test_withdrawing_a_turn_that_added_nothing_changes_nothing() -> None:
    parts = Parts()
    parts.items.append(user_message("kept"), "t0")
    parts.items.start()
    parts.items.withdraw("t1", "x", "reason")
    assert len(parts.history) == 1 and parts.records[-1][0] == "response_item"
    assert parts.events == []


async def test_items_added_after_a_compaction_are_noted_for_its_undo() -> None:
    parts = Parts()
    parts.compactor.undo.offer("cmp1", parts.history.snapshot())
    said = assistant_message("the turn goes on after the compaction")
    parts.items.append(said, "t1")
    cut = function_call_output("c1", "cut")
    await parts.items.append_cut_output(cut, function_call_output("c1", "whole"), "t1")
    entry = parts.compactor.undo.take()
    assert entry is not None and entry.appended == [said, cut]  # undo appends them again


async def test_the_records_and_entries_name_their_turn() -> None:
    parts = Parts()
    parts.items.start()
    parts.items.append(user_message("plain"), "t1")  # not interrupted unless said
    assert parts.records[-1] == ("response_item", {"item": user_message("plain"),
                                                   "turn_id": "t1"})
    assert parts.transcript.entries()[0]["interrupted"] is False
    whole = function_call_output("c1", "whole")
    await parts.items.append_cut_output(function_call_output("c1", "cut"), whole, "t1")
    assert parts.transcript.entries()[1]["turn_id"] == "t1"
    parts.items.withdraw("t1", "plain", "It does not fit.")
    kind, payload = parts.records[-1]
    assert (kind, payload["turn_id"]) == ("history_replaced", "t1")
