"""What an edit or a regeneration copies of a turn's input, taken from the rollout's records as
they go by (``TurnInput``): given every record, or only the turn's own with their places."""

from __future__ import annotations

from typing import Any

from app.core.rollout.store import RolloutRecord
from app.core.session.turn.branch_input import TurnInput


def item(role: str, text: str) -> RolloutRecord:
    payload: dict[str, Any] = {"item": {"type": "message", "role": role,
                                        "content": [{"type": "input_text", "text": text}]}}
    return RolloutRecord(0, "", "response_item", payload)


COMPACTED = RolloutRecord(0, "", "compacted", {"replacement_history": []})
# record number -> the turn it belongs to
ANCHORS: list[str | None] = [None, "a", "a", "b", "b", "b", "b", "c", "b"]
RECORDS = [
    RolloutRecord(0, "", "session_meta", {}), item("user", "one"), item("assistant", "1"),
    item("user", "two"), COMPACTED, item("developer", "env"), item("assistant", "2"),
    item("user", "three"), COMPACTED,
]


def test_every_record_given_the_turns_input_is_taken_up_to_its_first_output() -> None:
    taker = TurnInput(ANCHORS, "b")
    for seq, record in enumerate(RECORDS):
        taker.see(seq, record)
    assert taker.records == [RECORDS[3], COMPACTED, RECORDS[5]]


def test_the_input_ends_where_another_turns_record_comes_between() -> None:
    anchors = [None, "a", "b", "b", "c", "b"]
    records = [RECORDS[0], item("user", "one"), item("user", "two"), COMPACTED,
               item("user", "three"), COMPACTED]
    every, own = TurnInput(anchors, "b"), TurnInput(anchors, "b")
    for seq, record in enumerate(records):
        every.see(seq, record)
        if anchors[seq] == "b":  # given only the turn's own, with their places
            own.see(seq, record)
    assert every.records == own.records == [records[2], COMPACTED]
