"""Pairing tool calls with outputs: what a crash between a call and its output leaves behind
must not make every later request fail."""

from __future__ import annotations

import copy

from app.core.conversation.history_repair import ABORTED_OUTPUT, pair_tool_calls
from app.core.items import (
    Item,
    assistant_message,
    function_call,
    function_call_output,
    user_message,
)


def _calls_are_paired(items: list[Item]) -> bool:
    """The API's rule: each call answered by exactly one later output, no output without a
    call before it."""
    open_calls: set[str] = set()
    answered: set[str] = set()
    for item in items:
        if item["type"] == "function_call":
            if item["call_id"] in open_calls or item["call_id"] in answered:
                return False
            open_calls.add(item["call_id"])
        elif item["type"] == "function_call_output":
            if item["call_id"] not in open_calls:
                return False
            open_calls.discard(item["call_id"])
            answered.add(item["call_id"])
    return not open_calls


def test_a_paired_history_is_returned_unchanged() -> None:
    items = [
        user_message("list files"),
        function_call("list_directory", "{}", "call_1"),
        function_call_output("call_1", "a.txt"),
        assistant_message("There is a.txt."),
    ]
    repair = pair_tool_calls(items)
    assert not repair.changed
    assert repair.describe() == ""
    assert repair.items == items
    assert all(a is b for a, b in zip(repair.items, items, strict=True))


def test_a_call_cut_by_a_crash_gets_an_aborted_output_right_after_it() -> None:
    call = function_call("read_file", '{"path": "a"}', "call_crash")
    items = [user_message("read a"), call, user_message("are you there?")]
    before = copy.deepcopy(items)

    repair = pair_tool_calls(items)

    assert repair.items == [
        user_message("read a"),
        call,
        {"type": "function_call_output", "call_id": "call_crash", "output": ABORTED_OUTPUT},
        user_message("are you there?"),
    ]
    assert repair.aborted_calls == ["call_crash"]
    assert "1 tool call had no result" in repair.describe()
    assert items == before  # pure: the input is not touched
    assert _calls_are_paired(repair.items)


def test_parallel_calls_only_the_unanswered_one_is_aborted() -> None:
    items = [
        function_call("a", "{}", "c1"),
        function_call("b", "{}", "c2"),
        function_call_output("c2", "b done"),
    ]
    repair = pair_tool_calls(items)
    assert [(i["type"], i["call_id"]) for i in repair.items] == [
        ("function_call", "c1"),
        ("function_call_output", "c1"),
        ("function_call", "c2"),
        ("function_call_output", "c2"),
    ]
    assert repair.items[1]["output"] == ABORTED_OUTPUT
    assert repair.items[3]["output"] == "b done"
    assert repair.aborted_calls == ["c1"]


def test_orphan_and_early_outputs_are_dropped() -> None:
    orphan = function_call_output("gone", "left over from a compacted call")
    early = function_call_output("c1", "answer before its call")
    items = [orphan, early, function_call("f", "{}", "c1"), user_message("hi")]

    repair = pair_tool_calls(items)

    assert repair.dropped == [orphan, early]
    assert repair.aborted_calls == ["c1"]
    assert _calls_are_paired(repair.items)
    assert "2 unmatched tool items" in repair.describe()


def test_a_duplicated_call_and_output_keep_one_pair() -> None:
    call = function_call("f", "{}", "c1")
    output = function_call_output("c1", "ok")
    repair = pair_tool_calls([call, output, dict(call), dict(output)])
    assert repair.items == [call, output]
    assert len(repair.dropped) == 2
    assert _calls_are_paired(repair.items)


def test_a_call_without_call_id_is_dropped() -> None:
    broken: Item = {"type": "function_call", "name": "f", "arguments": "{}"}
    repair = pair_tool_calls([user_message("x"), broken])
    assert repair.items == [user_message("x")]
    assert repair.dropped == [broken]


def test_custom_tool_calls_get_their_own_output_kind() -> None:
    call: Item = {"type": "custom_tool_call", "name": "apply", "input": "x", "call_id": "t1"}
    repair = pair_tool_calls([call])
    assert repair.items[1] == {
        "type": "custom_tool_call_output",
        "call_id": "t1",
        "output": ABORTED_OUTPUT,
    }
