"""The pins module's rules: where pinned items go in a compacted history, the pin budget derived
from the window, which pins a compaction carries under budget pressure, and the refusal text."""

from __future__ import annotations

from app.core.compaction.budget import CompactionBudget, compaction_budget
from app.core.compaction.pins import PIN_CEILING, Pins, carry, pin_budget, refusal
from app.core.compaction.prompts import summary_text
from app.core.conversation.history import ContextHistory
from app.core.conversation.transcript import Transcript
from app.core.items import (
    Item,
    assistant_message,
    function_call,
    function_call_output,
    user_message,
)
from app.core.protocol import Error, ItemPinned, PinItem
from app.core.tokens.counter import TokenCounter

SUMMARY = user_message(summary_text("the summary"))


def test_pins_go_just_before_the_summary_and_a_pinned_user_message_is_not_sent_twice() -> None:
    kept = [user_message("u1"), user_message("u2")]
    reply = assistant_message("a pinned reply")
    pinned_user = user_message("u1")
    assert carry([*kept, SUMMARY], [pinned_user, reply]) == [
        user_message("u2"), pinned_user, reply, SUMMARY
    ]


def test_pins_go_before_a_remote_compaction_item_and_at_the_end_without_a_summary() -> None:
    item = {"type": "compaction", "encrypted_content": "xyz"}
    call = function_call("read_file", "{}", "c1")
    output = function_call_output("c1", "content")
    assert carry([user_message("u"), item], [call, output]) == [
        user_message("u"), call, output, item
    ]
    assert carry([user_message("u")], [output]) == [user_message("u"), output]
    assert carry([SUMMARY], []) == [SUMMARY]


def test_the_pin_budget_is_a_share_of_the_room_derived_from_the_window() -> None:
    small = pin_budget(compaction_budget(4_096, 3_686, 500))
    large = pin_budget(compaction_budget(128_000, 115_200, 500))
    assert small is not None and large is not None
    room = compaction_budget(4_096, 3_686, 500).history_room or 0
    assert 0 < small < room // 3  # the summary and the kept messages keep most of the room
    assert small < large <= PIN_CEILING
    assert pin_budget(compaction_budget(None, None, 500)) is None  # nothing to derive from


def pins_with(tokens: list[int]) -> Pins:
    transcript = Transcript()
    for n in range(len(tokens)):
        transcript.add_item(user_message(f"m{n}"), "t")
    counter = TokenCounter("gpt-4o", allow_download=False)
    pins = Pins(
        transcript=transcript, history=ContextHistory(counter), count_item=counter.count_item,
        budget=lambda: compaction_budget(None, None, 0), record=lambda *_: None,
        emit=lambda _e: None,
    )
    for ordinal, size in enumerate(tokens):
        pins.replay({"key": f"pin-{ordinal}", "pinned": True, "ordinal": ordinal,
                     "kind": "user_message", "tokens": size,
                     "items": [user_message(f"m{ordinal}")]})
    return pins


def test_a_compaction_carries_every_pin_that_fits_oldest_first() -> None:
    pins = pins_with([100, 300, 50])
    budget = compaction_budget(16_000, 14_400, 400)
    limit = pin_budget(budget) or 0
    assert 450 <= limit  # all three fit on 16k
    assert pins.carried(budget).keys == ["pin-0", "pin-1", "pin-2"]
    # A window too small for all of them (210 tokens for pins): the oldest that fit, in order;
    # the one that does not is left out (and stays pinned).
    tight = compaction_budget(4_096, 3_686, 1_000)
    assert pin_budget(tight) == 210
    carried = pins.carried(tight)
    assert carried.keys == ["pin-0", "pin-2"]
    assert [p.key for p in carried.left_out] == ["pin-1"]
    assert pins.keys() == ["pin-0", "pin-1", "pin-2"]


def test_unpinning_on_replay_and_the_transcript_marks() -> None:
    pins = pins_with([10, 20])
    assert [e.get("pinned") for e in pins._transcript.item_entries()] == ["pin-0", "pin-1"]
    pins.replay({"key": "pin-0", "pinned": False})
    assert pins.keys() == ["pin-1"]
    assert [e.get("pinned") for e in pins._transcript.item_entries()] == [None, "pin-1"]


def test_the_refusal_names_the_size_the_room_left_and_the_window() -> None:
    text = refusal(1_534, 210, 640, 4_096)
    assert "about 1,534 tokens" in text
    assert "only 210 tokens of room are left for pins" in text
    assert "4,096-token window" in text and "640" in text


# ------------------------------------------------------------------ boundaries (issue 40)


def _room(room: int, window: int | None = None) -> CompactionBudget:
    return CompactionBudget(window, None, target=room + 100, overhead=100, summary=None,
                            kept_ceiling=0)


def test_pins_get_a_quarter_of_the_room_rounded_down_up_to_16000() -> None:
    assert pin_budget(_room(4_000)) == 1_000
    assert pin_budget(_room(4_003)) == 1_000
    assert pin_budget(_room(4_004)) == 1_001
    assert pin_budget(_room(63_996)) == 15_999
    assert pin_budget(_room(64_000)) == 16_000
    assert pin_budget(_room(64_004)) == 16_000


def test_a_compaction_carries_pins_up_to_exactly_their_budget() -> None:
    pins = pins_with([100, 300, 50])
    assert pins.carried(_room(1_804)).keys == ["pin-0", "pin-1", "pin-2"]  # 451 for pins
    assert pins.carried(_room(1_800)).keys == ["pin-0", "pin-1", "pin-2"]  # 450: exactly
    under = pins.carried(_room(1_799))  # 449
    assert under.keys == ["pin-0", "pin-1"]
    assert [p.key for p in under.left_out] == ["pin-2"]
    # What was left out frees no room for the pins after it: the budget is counted in order.
    assert pins.carried(_room(1_596)).keys == ["pin-0", "pin-2"]  # 399
    assert pins.carried(compaction_budget(None, None, 0)).keys == ["pin-0", "pin-1", "pin-2"]


def _pinning(budget: CompactionBudget) -> tuple[Pins, list[object], list[object]]:
    """Pins of a three-message transcript, every message counted 100 tokens."""
    transcript = Transcript()
    for n in range(3):
        transcript.add_item(user_message(f"m{n}"), "t")
    events: list[object] = []
    records: list[object] = []
    pins = Pins(
        transcript=transcript, history=ContextHistory(TokenCounter("gpt-4o", allow_download=False)),
        count_item=lambda _item: 100, budget=lambda: budget,
        record=lambda *record: records.append(record), emit=events.append,
    )
    return pins, events, records


def test_a_pin_is_accepted_up_to_exactly_the_room_left_for_pins() -> None:
    pins, events, records = _pinning(_room(800))  # 200 tokens for pins
    pins.handle(PinItem(key="pin-0", kind="user_message"))
    pins.handle(PinItem(key="pin-1", kind="user_message"))
    assert pins.keys() == ["pin-0", "pin-1"] and len(records) == 2
    first, second = events
    assert isinstance(first, ItemPinned) and isinstance(second, ItemPinned)
    assert (first.tokens, second.tokens) == (100, 100)
    assert first.message == (
        "Pinned: the model sees this message again, verbatim, from the next compaction on "
        "(about 100 tokens; 100 tokens left for pins)."
    )
    assert second.message.endswith("(about 100 tokens; 0 tokens left for pins).")
    pins.handle(PinItem(key="pin-2", kind="user_message"))
    assert pins.keys() == ["pin-0", "pin-1"] and len(records) == 2
    refused = events[-1]
    assert isinstance(refused, Error) and refused.kind == "invalid_op"
    assert refused.message == refusal(100, 0, 200, None)
    assert "only 0 tokens of room are left for pins (this model's window allows 200" in (
        refused.message
    )


def test_a_pin_one_token_over_the_room_left_is_refused_with_what_is_left() -> None:
    pins, events, records = _pinning(_room(796, window=4_096))  # 199 tokens for pins
    pins.handle(PinItem(key="pin-0", kind="user_message"))
    pins.handle(PinItem(key="pin-1", kind="user_message"))
    assert pins.keys() == ["pin-0"] and len(records) == 1
    refused = events[-1]
    assert isinstance(refused, Error)
    assert refused.message == (
        "Not pinned: this message is about 100 tokens, and only 99 tokens of room are left for "
        "pins (the model's 4,096-token window allows 199 for pinned messages in all). Unpin "
        "another message, or pin a shorter one."
    )


def test_without_a_window_pins_are_not_limited_and_say_no_room() -> None:
    pins, events, _records = _pinning(compaction_budget(None, None, 0))
    for key in ("pin-0", "pin-1", "pin-2"):
        pins.handle(PinItem(key=key, kind="user_message"))
    assert pins.keys() == ["pin-0", "pin-1", "pin-2"]
    last = events[-1]
    assert isinstance(last, ItemPinned) and last.message.endswith("(about 100 tokens).")


def test_a_pin_is_named_by_whose_it_is_and_how_it_begins() -> None:
    from app.core.compaction.pins import Pin, pin_name
    from app.core.items import assistant_message, function_call, user_message

    long = "Deploy the orchard service to svc-orchard-41 on port 8443 every Monday morning"
    assert pin_name(Pin("k", (user_message(long),), 20, "user_message")) == (
        "your message “Deploy the orchard service to svc-orchard-41 on…”"
    )
    answer = assistant_message("Use  port\n8443.")
    assert pin_name(Pin("k", (answer,), 5, "agent_message")) == "the answer “Use port 8443.”"
    call = function_call("read_file", "{}", "c1")
    assert pin_name(Pin("k", (call,), 5, "function_call_output")) == "the output of read_file"


def _record(key: str, ordinal: object, text: str, **changes: object) -> dict[str, object]:
    record: dict[str, object] = {
        "key": key, "pinned": True, "ordinal": ordinal, "kind": "user_message", "tokens": 7,
        "items": [user_message(text)],
    }
    record.update(changes)
    return record


def test_the_pins_present_in_a_history_oldest_first() -> None:
    pins, _events, _records = _pinning(compaction_budget(None, None, 0))
    for key in ("pin-2", "pin-0", "pin-1"):
        pins.handle(PinItem(key=key, kind="user_message"))
    history = [user_message("m0"), user_message("other"), user_message("m2")]
    assert pins.present(history) == ["pin-0", "pin-2"]
    assert pins.present([*history, user_message("m1")]) == ["pin-0", "pin-1", "pin-2"]
    assert pins.present([]) == []


def test_the_call_ids_pruning_spares_are_those_of_pinned_tool_outputs() -> None:
    transcript = Transcript()
    for item in (
        user_message("read it"), function_call("read_file", "{}", "c1"),
        function_call_output("c1", "the file"), function_call("read_file", "{}", "c2"),
        function_call_output("c2", "another file"),
    ):
        transcript.add_item(item, "t")
    events: list[object] = []
    pins = Pins(
        transcript=transcript, history=ContextHistory(TokenCounter("gpt-4o", allow_download=False)),
        count_item=lambda _item: 10, budget=lambda: compaction_budget(None, None, 0),
        record=lambda *_: None, emit=events.append,
    )
    assert pins.call_ids() == frozenset()
    pins.handle(PinItem(kind="user_message", text="read it"))
    pins.handle(PinItem(kind="function_call_output", row_id="c2"))
    assert pins.call_ids() == frozenset({"c2"})
    # The output is carried with the call it answers.
    assert pins.carried(compaction_budget(None, None, 0)).items == [
        user_message("read it"), function_call("read_file", "{}", "c2"),
        function_call_output("c2", "another file"),
    ]


def test_unpinning_by_key_and_by_the_row_it_names() -> None:
    pins, events, records = _pinning(_room(800))
    for key in ("pin-0", "pin-1"):
        pins.handle(PinItem(key=key, kind="user_message"))
    events.clear()
    records.clear()
    pins.handle(PinItem(key="pin-0", kind="user_message", pinned=False))
    assert pins.keys() == ["pin-1"] and records == [("pin", {"key": "pin-0", "pinned": False})]
    unpinned = events[-1]
    assert isinstance(unpinned, ItemPinned) and (unpinned.key, unpinned.pinned) == ("pin-0", False)
    assert unpinned.message == "Unpinned: a compaction may now summarise it like any other message."
    assert [e.get("pinned") for e in pins._transcript.item_entries()] == [None, "pin-1", None]
    # No key: the row the op names (the newest message with its text).
    pins.handle(PinItem(kind="user_message", text="m1", pinned=False))
    assert pins.keys() == [] and records[-1] == ("pin", {"key": "pin-1", "pinned": False})
    last = events[-1]
    assert isinstance(last, ItemPinned) and (last.key, last.pinned) == ("pin-1", False)
    # A row not pinned, or not there at all: refused in words, nothing recorded.
    for text in ("m2", "no such message"):
        pins.handle(PinItem(kind="user_message", text=text, pinned=False))
        refused = events[-1]
        assert isinstance(refused, Error) and refused.kind == "invalid_op"
        assert refused.message == "This message is not pinned."
    assert len(records) == 2


def test_a_replayed_unpin_of_a_pin_the_transcript_does_not_mark() -> None:
    pins = pins_with([10])  # one message, pinned and marked
    pins.replay({"key": "pin-5", "pinned": False})  # never pinned: nothing to undo
    assert pins.keys() == ["pin-0"]
    # A pin whose ordinal is past the transcript's end (a cut file) is kept, unmarked...
    pins.replay(_record("pin-1", 1, "gone"))
    # ...and one whose key names a message it does not mark.
    pins.replay({"key": "pin-0", "pinned": False})
    pins.replay(_record("pin-0", 4, "m0"))
    assert pins.keys() == ["pin-1", "pin-0"]
    assert [e.get("pinned") for e in pins._transcript.item_entries()] == [None]
    pins.replay({"key": "pin-1", "pinned": False})
    pins.replay({"key": "pin-0", "pinned": False})
    assert pins.keys() == []


def test_a_pin_past_the_transcripts_end_is_unpinned_by_its_key() -> None:
    pins, events, records = _pinning(compaction_budget(None, None, 0))  # three messages
    pins.replay(_record("pin-7", 7, "cut off"))
    pins.handle(PinItem(key="pin-7", kind="user_message", pinned=False))
    assert pins.keys() == [] and records == [("pin", {"key": "pin-7", "pinned": False})]
    unpinned = events[-1]
    assert isinstance(unpinned, ItemPinned) and unpinned.key == "pin-7" and not unpinned.pinned


def test_a_replayed_pin_record_missing_a_field_is_skipped() -> None:
    pins = pins_with([])
    pins.replay(_record("", 0, "m"))
    pins.replay({k: v for k, v in _record("pin-0", 0, "m").items() if k != "key"})
    pins.replay(_record("pin-0", 0, "m", items="m"))
    pins.replay(_record("pin-0", "0", "m"))
    pins.replay(_record("pin-0", None, "m", items={"0": "m"}))
    assert pins.keys() == []
    # What is only damaged is mended: no count, no kind, an item that is not an object.
    pins.replay(_record("pin-0", 0, "m", tokens="7", kind=None, items=[user_message("m"), "x"]))
    carried = pins.carried(compaction_budget(None, None, 0))
    assert [(p.key, p.tokens, p.kind, p.items) for p in carried.pins] == [
        ("pin-0", 0, "", (user_message("m"),))
    ]
    pins.replay(_record("pin-1", 1, "n", tokens=12, kind="agent_message"))
    assert [(p.tokens, p.kind) for p in pins.carried(compaction_budget(None, None, 0)).pins] == [
        (0, ""), (12, "agent_message")
    ]


def test_only_a_pinned_user_message_takes_its_other_copies_out() -> None:
    pinned_reply = assistant_message("yes")
    kept = [user_message("yes"), assistant_message("u1"), user_message("u1")]
    # A pinned reply's text in a user message, and a pinned user message's text in a reply:
    # both stay; only the user message the pin repeats leaves.
    assert carry([*kept, SUMMARY], [pinned_reply, user_message("u1")]) == [
        user_message("yes"), assistant_message("u1"), pinned_reply, user_message("u1"), SUMMARY
    ]


def test_pins_go_before_the_last_summary_wherever_it_stands() -> None:
    pinned = [user_message("pinned")]
    assert carry([], pinned) == pinned
    after = user_message("after the summary")
    assert carry([SUMMARY, after], pinned) == [*pinned, SUMMARY, after]
    assert carry([user_message("u"), SUMMARY, after], pinned) == [
        user_message("u"), *pinned, SUMMARY, after
    ]
    older = user_message(summary_text("an older summary"))
    assert carry([older, user_message("u"), SUMMARY, after], pinned) == [
        older, user_message("u"), *pinned, SUMMARY, after
    ]


def test_an_unpin_that_cannot_be_recorded_is_refused_and_the_pin_stays() -> None:
    pins, events, _records = _pinning(_room(800))
    pins.handle(PinItem(key="pin-1", kind="user_message"))

    def failing(*_record: object) -> None:
        raise OSError("disk full")

    pins._record = failing
    pins.handle(PinItem(key="pin-1", kind="user_message", pinned=False))
    assert pins.keys() == ["pin-1"]
    refused = events[-1]
    assert isinstance(refused, Error)
    assert (refused.kind, refused.message) == ("storage", "Not unpinned: disk full")


def test_an_unpin_names_the_kind_it_was_pinned_as_when_the_op_does_not() -> None:
    pins, events, _records = _pinning(_room(800))
    pins.handle(PinItem(key="pin-0", kind="user_message"))
    pins.handle(PinItem(key="pin-1", kind="user_message"))
    pins.handle(PinItem(key="pin-0", pinned=False))
    pins.handle(PinItem(key="pin-1", kind="agent_message", row_id="row-1", pinned=False))
    first, second = events[-2:]
    assert isinstance(first, ItemPinned) and isinstance(second, ItemPinned)
    assert (first.kind, second.kind) == ("user_message", "agent_message")
    # The event names the row, the pin's size, and whether the model sees it now (the history
    # here is empty: it does not).
    assert (second.row_id, second.tokens, second.in_view) == ("row-1", 100, False)


def pins_of(*items: Item) -> tuple[Pins, list[object], list[tuple[str, dict[str, object]]]]:
    transcript = Transcript()
    for item in items:
        transcript.add_item(item, "t")
    events: list[object] = []
    records: list[tuple[str, dict[str, object]]] = []
    pins = Pins(
        transcript=transcript, history=ContextHistory(TokenCounter("gpt-4o", allow_download=False)),
        count_item=lambda _item: 10, budget=lambda: compaction_budget(None, None, 0),
        record=lambda kind, payload: records.append((kind, payload)), emit=events.append,
    )
    return pins, events, records


def test_a_pinned_output_carries_its_call_even_as_the_first_item() -> None:
    call, output = function_call("read_file", "{}", "c1"), function_call_output("c1", "text")
    pins, _events, _records = pins_of(call, output)
    pins.handle(PinItem(kind="function_call_output", row_id="c1"))
    assert pins.carried(compaction_budget(None, None, 0)).items == [call, output]
    # An output whose call is not in the transcript is carried alone.
    pins, _events, _records = pins_of(user_message("u"), function_call_output("c9", "text"))
    pins.handle(PinItem(kind="function_call_output", row_id="c9"))
    assert pins.carried(compaction_budget(None, None, 0)).items == [
        function_call_output("c9", "text")
    ]


def test_a_key_that_names_no_message_is_refused() -> None:
    pins, events, records = pins_of(user_message("m0"), user_message("m1"))
    for key in ("bogus", "pin-", "pin-2"):
        pins.handle(PinItem(key=key, kind="user_message"))
        refused = events[-1]
        assert isinstance(refused, Error) and refused.kind == "invalid_op"
        assert refused.message == (
            "This message cannot be pinned: Coco cannot find it in the conversation."
        )
    assert pins.keys() == [] and records == []
    # The ordinal is the number after the key's last dash.
    pins.handle(PinItem(key="old-pin-1", kind="user_message"))
    assert pins.keys() == ["pin-1"]


def test_a_pin_record_restores_the_pin_as_it_was() -> None:
    reply = assistant_message("Use port 8443.")
    pins, events, records = pins_of(user_message("which port?"), reply)
    pins.handle(PinItem(kind="agent_message", row_id="row-7", text="Use port 8443."))
    pinned = events[-1]
    assert isinstance(pinned, ItemPinned)
    assert (pinned.key, pinned.kind, pinned.row_id, pinned.tokens, pinned.in_view) == (
        "pin-1", "agent_message", "row-7", 10, False
    )
    assert records == [("pin", {
        "key": "pin-1", "pinned": True, "ordinal": 1, "kind": "agent_message", "tokens": 10,
        "items": [reply],
    })]
    # Pinned again, without a kind: the event names the kind it was pinned as.
    pins.handle(PinItem(key="pin-1", row_id="row-7"))
    again = events[-1]
    assert isinstance(again, ItemPinned) and again.message == "Already pinned."
    assert (again.kind, again.row_id, again.in_view) == ("agent_message", "row-7", False)
    resumed, _events, _records = pins_of(user_message("which port?"), reply)
    resumed.replay(records[0][1])
    carried = resumed.carried(compaction_budget(None, None, 0)).pins
    assert [(p.key, p.kind, p.tokens, p.items) for p in carried] == [
        ("pin-1", "agent_message", 10, (reply,))
    ]


def test_a_row_is_found_by_its_kind_not_only_its_id_or_text() -> None:
    call1, out1 = function_call("read_file", "{}", "c1"), function_call_output("c1", "one")
    call2, out2 = function_call("read_file", "{}", "c2"), function_call_output("c2", "two")
    pins, _events, _records = pins_of(call1, out1, call2, out2)
    pins.handle(PinItem(kind="function_call_output", row_id="c1"))
    assert pins.keys() == ["pin-1"]
    # A reply is found among replies: a newer user message with the same text is not it.
    pins, _events, _records = pins_of(assistant_message("ok"), user_message("ok"))
    pins.handle(PinItem(kind="agent_message", text="ok"))
    assert pins.keys() == ["pin-0"]


def test_a_reply_is_found_by_its_id_else_by_its_text_and_other_kinds_not_at_all() -> None:
    first = {**assistant_message("first"), "id": "msg-1"}
    second = {**assistant_message("second"), "id": "msg-2"}
    pins, events, _records = pins_of(first, second)
    pins.handle(PinItem(kind="agent_message", row_id="msg-1", text="edited since"))
    pins.handle(PinItem(kind="agent_message", text="second"))
    assert pins.keys() == ["pin-0", "pin-1"]
    pins, events, _records = pins_of(first, second)
    for op in (
        PinItem(kind="agent_message", row_id="msg-9", text="neither"),
        PinItem(kind="reasoning", text="second"),
    ):
        pins.handle(op)
        assert isinstance(events[-1], Error)
    assert pins.keys() == []
    # A user message is found among the user's messages.
    pins, _events, _records = pins_of(user_message("ok"), assistant_message("ok"))
    pins.handle(PinItem(kind="user_message", text="ok"))
    assert pins.keys() == ["pin-0"]


def test_a_pinned_output_carries_the_call_it_answers_and_no_other() -> None:
    call1, call2 = function_call("read_file", "{}", "c1"), function_call("read_file", "{}", "c2")
    output = function_call_output("c1", "text")
    pins, _events, _records = pins_of(call1, call2, output)
    pins.handle(PinItem(kind="function_call_output", row_id="c1"))
    assert pins.carried(compaction_budget(None, None, 0)).items == [call1, output]
    # A call that comes after the output is not the one it answers.
    later = function_call_output("c9", "text")
    pins, _events, _records = pins_of(later, function_call("read_file", "{}", "c9"))
    pins.handle(PinItem(kind="function_call_output", row_id="c9"))
    assert pins.carried(compaction_budget(None, None, 0)).items == [later]
