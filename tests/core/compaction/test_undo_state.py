"""The last compaction's Undo (``compaction/undo.py``): offered by a compaction, gone once a
turn starts or once taken, each refusal and each marker note in the state it belongs to."""

from __future__ import annotations

from typing import Any

from app.core.compaction.undo import (
    AFTER_TURN,
    ALREADY,
    GONE_AFTER_TURN,
    NOTHING_YET,
    UNTIL_NEXT_MESSAGE,
    UndoState,
)
from app.core.items import assistant_message, user_message

SNAPSHOT: Any = object()  # the history before the compaction: held, never looked into here


def test_before_any_compaction_there_is_nothing_to_undo() -> None:
    state = UndoState()
    assert state.item_id is None and state.last_item_id is None
    assert state.refusal == NOTHING_YET
    assert state.note() == ""
    assert state.take() is None
    assert state.refusal == NOTHING_YET  # taking nothing does not say "already undone"


def test_a_turn_before_any_compaction_leaves_nothing_to_undo() -> None:
    state = UndoState()
    state.turn_started()
    assert state.refusal == NOTHING_YET and state.note() == ""


def test_a_compaction_is_undoable_until_the_next_message() -> None:
    state = UndoState()
    state.offer("cmp_1", SNAPSHOT)
    assert state.item_id == "cmp_1" and state.last_item_id == "cmp_1"
    assert state.note() == UNTIL_NEXT_MESSAGE


def test_items_appended_after_the_compaction_are_kept_with_it_in_order() -> None:
    state = UndoState()
    early = user_message("before any compaction")
    state.note_appended(early)  # nothing to keep it with: dropped
    state.offer("cmp_1", SNAPSHOT)
    first, second = user_message("go on"), assistant_message("going on")
    state.note_appended(first)
    state.note_appended(second)
    entry = state.take()
    assert entry is not None
    assert entry.item_id == "cmp_1" and entry.snapshot is SNAPSHOT
    assert entry.appended == [first, second]


def test_a_second_compaction_replaces_the_first_with_nothing_appended_yet() -> None:
    state = UndoState()
    state.offer("cmp_1", SNAPSHOT)
    state.note_appended(user_message("between"))
    later: Any = object()
    state.offer("cmp_2", later)
    entry = state.take()
    assert entry is not None
    assert entry.item_id == "cmp_2" and entry.snapshot is later and entry.appended == []


def test_taking_it_undoes_it_once_and_says_so_the_second_time() -> None:
    state = UndoState()
    state.offer("cmp_1", SNAPSHOT)
    assert state.take() is not None
    assert state.item_id is None
    assert state.refusal == ALREADY
    assert state.note() == ""  # the marker says it was undone
    assert state.take() is None and state.refusal == ALREADY
    assert state.last_item_id == "cmp_1"
    state.note_appended(user_message("after the undo"))  # not kept with anything
    assert state.take() is None


def test_a_new_turn_ends_the_undo_and_the_marker_says_why() -> None:
    state = UndoState()
    state.offer("cmp_1", SNAPSHOT)
    state.turn_started()
    assert state.item_id is None and state.last_item_id == "cmp_1"
    assert state.refusal == AFTER_TURN
    assert state.note() == GONE_AFTER_TURN
    assert state.take() is None and state.refusal == AFTER_TURN


def test_a_turn_after_an_undone_compaction_refuses_as_after_a_turn() -> None:
    """Once the conversation went on, the refusal names the turn, not the earlier undo."""
    state = UndoState()
    state.offer("cmp_1", SNAPSHOT)
    state.take()
    state.turn_started()
    assert state.refusal == AFTER_TURN
    assert state.note() == GONE_AFTER_TURN


def test_a_compaction_after_a_turn_is_undoable_again() -> None:
    state = UndoState()
    state.offer("cmp_1", SNAPSHOT)
    state.turn_started()
    state.offer("cmp_2", SNAPSHOT)
    assert state.item_id == "cmp_2" and state.note() == UNTIL_NEXT_MESSAGE
    assert state.take() is not None and state.refusal == ALREADY
