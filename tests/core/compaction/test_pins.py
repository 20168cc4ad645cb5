"""The pins module's rules: where pinned items go in a compacted history, the pin budget derived
from the window, which pins a compaction carries under budget pressure, and the refusal text."""

from __future__ import annotations

from app.core.compaction.budget import CompactionBudget, compaction_budget
from app.core.compaction.pins import PIN_CEILING, Pins, carry, pin_budget, refusal
from app.core.compaction.prompts import summary_text
from app.core.conversation.history import ContextHistory
from app.core.conversation.transcript import Transcript
from app.core.items import assistant_message, function_call, function_call_output, user_message
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
