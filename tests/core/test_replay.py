"""Resume as a replay (``app.core.replay``): a reopened conversation told as the events a live
session emitted, each drawn item with an id of its own."""

from __future__ import annotations

from app.core import protocol as p
from app.core.items import assistant_message, user_message
from app.core.replay import replay_events


def item_entry(item: dict[str, object], turn_id: str = "t1") -> dict[str, object]:
    return {"kind": "item", "item": item, "turn_id": turn_id, "interrupted": False}


def test_items_saved_without_an_id_each_get_their_own_and_saved_ids_are_kept() -> None:
    entries = [item_entry(user_message(f"question {n}"), f"t{n}") for n in range(50)]
    entries.append(item_entry(assistant_message("the answer", item_id="msg_saved"), "t49"))
    events = replay_events(entries, None)
    completed = [e for e in events if isinstance(e, p.ItemCompleted)]
    assert [e.item.data["text"] for e in completed[:50]] == [f"question {n}" for n in range(50)]
    ids = [e.item.id for e in completed]
    assert len(set(ids)) == len(ids) == 51  # rows are found by id: no two may share one
    assert ids[-1] == "msg_saved"
    # A second replay (the session reopened again) never reuses the first one's ids.
    again = [e.item.id for e in replay_events(entries, None) if isinstance(e, p.ItemCompleted)]
    assert not set(again[:50]) & set(ids[:50])


def test_the_injected_environment_block_is_not_drawn() -> None:
    entries = [
        item_entry(user_message("<environment_context>cwd</environment_context>")),
        item_entry(user_message("hello")),
    ]
    drawn = [e for e in replay_events(entries, None) if isinstance(e, p.ItemCompleted)]
    assert [e.item.data["text"] for e in drawn] == ["hello"]
