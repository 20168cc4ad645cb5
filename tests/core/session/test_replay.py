"""Resume as a replay (``app.core.session.replay``): a reopened conversation told as the events a live
session emitted, each drawn item with an id of its own."""

from __future__ import annotations

from app.core import protocol as p
from app.core.items import assistant_message, user_message
from app.core.session.replay import replay_events


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


def test_a_session_is_replayed_from_its_entries_as_they_are_each_item_as_one_event() -> None:
    """The replay reads the transcript's entries themselves (copying each to add
    ``in_context``, which no event carries, was a fifth of a long replay) and validates each
    item's event from plain data in one step: the events are the ones built field by field."""
    from app.core.conversation.transcript import Transcript
    from app.core.items import function_call, function_call_output

    transcript = Transcript()
    transcript.add_item({**user_message("first"), "id": "u1"}, "t1")
    transcript.add_item(assistant_message("cut short", item_id="a1"), "t1", interrupted=True)
    transcript.add_item({**user_message("<user_instructions>x"), "id": "u0"}, "t2")
    transcript.add_item({**user_message("not sent"), "id": "u2"}, "t2")
    transcript.mark_not_sent("t2")
    transcript.add_item(function_call("read_file", '{"path": "a"}', "c1", item_id="f1"), "t3")
    transcript.add_item(function_call_output("c1", "alpha"), "t3")
    entries = transcript.read_entries()
    assert all(a is b for a, b in zip(entries, transcript.read_entries(), strict=True))
    entries[-1]["pinned"] = "pin-1"  # as the pins module marks an entry
    events = replay_events(entries, None)

    def completed(turn_id: str, item_id: str, kind: str, **data: object) -> p.ItemCompleted:
        return p.ItemCompleted(turn_id=turn_id, item=p.TurnItem(id=item_id, kind=kind, data=data))

    assert events == [
        completed("t1", "u1", "user_message", text="first"),
        completed("t1", "a1", "agent_message", text="cut short", interrupted=True),
        completed("t2", "u2", "user_message", text="not sent", not_sent=True),
        completed("t3", "f1", "function_call", name="read_file", arguments='{"path": "a"}',
                  call_id="c1"),
        completed("t3", "out_c1", "function_call_output", call_id="c1", output="alpha",
                  pinned="pin-1"),
        p.UndoAvailable(item_id=None),
    ]
    assert "in_context" not in entries[0]
