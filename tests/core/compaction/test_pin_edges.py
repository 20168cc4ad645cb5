"""Pins at their edges: a pin that cannot be recorded, pinning in an empty conversation, the
names of pins (a nameless tool, no items, a beginning of exactly the shown length) and names
asked for keys that pin nothing."""

from __future__ import annotations

from app.core.compaction.pins import PIN_NAME_CHARS, Pin, pin_name
from app.core.items import function_call, user_message
from app.core.protocol import Error, PinItem

from .test_pins import pins_of


def test_a_pin_that_cannot_be_recorded_is_refused_in_words_and_nothing_is_pinned() -> None:
    pins, events, _records = pins_of(user_message("Keep this."))

    def failing(*_record: object) -> None:
        raise OSError("disk full")

    pins._record = failing
    pins.handle(PinItem(key="pin-0", kind="user_message"))
    assert pins.keys() == []
    assert events == [Error(message="Not pinned: disk full", kind="storage")]


def test_nothing_can_be_pinned_in_an_empty_conversation() -> None:
    pins, events, _records = pins_of()
    pins.handle(PinItem(kind="user_message", text="Keep this."))
    assert pins.keys() == []
    assert events == [
        Error(
            message="This message cannot be pinned: Coco cannot find it in the conversation.",
            kind="invalid_op",
        )
    ]


def test_a_tool_without_a_name_and_a_pin_without_items_are_still_named() -> None:
    call = function_call("", "{}", "c1")
    assert pin_name(Pin("k", (call,), 5, "function_call_output")) == "the output of a tool"
    assert pin_name(Pin("k", (), 0, "user_message")) == "your message “”"


def test_a_beginning_of_exactly_the_shown_length_is_shown_whole() -> None:
    exact = ("word " * PIN_NAME_CHARS)[: PIN_NAME_CHARS - 1] + "x"
    assert len(exact) == PIN_NAME_CHARS
    assert (
        pin_name(Pin("k", (user_message(exact),), 5, "user_message")) == f"your message “{exact}”"
    )
    longer = exact + "y"
    assert pin_name(Pin("k", (user_message(longer),), 5, "user_message")).endswith("…”")


def test_names_are_given_for_the_keys_that_pin_something_only() -> None:
    pins, _events, _records = pins_of(user_message("Keep this."))
    pins.handle(PinItem(key="pin-0", kind="user_message"))
    assert pins.names(["pin-0", "pin-7"]) == ["your message “Keep this.”"]
