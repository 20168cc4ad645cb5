"""What a turn starting a new branch records of where it comes from, and that its input is put
in place under the new turn's id (``app.core.session.turn.branch_start``)."""

from __future__ import annotations

from app.core.session.turn.branch_start import BranchStart


def test_the_record_names_the_source_turn_and_why() -> None:
    put: list[str] = []
    start = BranchStart(parent="t1", source="t2", reason="regenerate", put_input=put.append)
    assert start.record() == {"branch_of": "t2", "branch_reason": "regenerate"}
    assert put == []  # nothing is put in place before the turn starts
    start.started("t9")
    assert put == ["t9"]
