"""The prune path (app/core/compaction/paths/prune.py): which old tool outputs it replaces by a
stub and which it spares, each rule at its boundary (issue 40)."""

from __future__ import annotations

import pytest

from app.core.compaction.notes.block import CarriedOver
from app.core.compaction.paths.prune import prune_tool_outputs, stub_text
from app.core.compaction.prompts import summary_text
from app.core.items import (
    ENVIRONMENT_CONTEXT_OPEN,
    Item,
    function_call,
    function_call_output,
    item_type,
    user_message,
)

STUB_SIZE = 7


def stub_count(_item: Item) -> int:
    return STUB_SIZE


def turns(count: int, output_tokens: int = 100) -> tuple[list[Item], list[int]]:
    """``count`` user turns, each a message, a read_file call and its output."""
    items: list[Item] = []
    counts: list[int] = []
    for n in range(count):
        items += [
            user_message(f"turn {n}"),
            function_call("read_file", "{}", f"c{n}"),
            function_call_output(f"c{n}", f"content {n}"),
        ]
        counts += [10, 10, output_tokens]
    return items, counts


def pruned_calls(items: list[Item], new_items: list[Item]) -> list[str]:
    return [
        str(new.get("call_id"))
        for old, new in zip(items, new_items, strict=True)
        if old is not new and item_type(new) == "function_call_output"
    ]


@pytest.mark.parametrize(
    ("protected", "pruned"),
    [(0, ["c0", "c1", "c2"]), (1, ["c0", "c1"]), (2, ["c0"]), (3, None), (4, None)],
)
def test_outputs_of_the_last_protected_turns_are_spared(
    protected: int, pruned: list[str] | None
) -> None:
    items, counts = turns(3)
    result = prune_tool_outputs(items, counts, protected_turns=protected, count_item=stub_count)
    if pruned is None:
        assert result is None
    else:
        assert result is not None
        assert pruned_calls(items, result[0].items) == pruned


def test_the_last_two_turns_are_spared_by_default() -> None:
    items, counts = turns(3)
    result = prune_tool_outputs(items, counts, count_item=stub_count)
    assert result is not None and pruned_calls(items, result[0].items) == ["c0"]
    assert prune_tool_outputs(*turns(2), count_item=stub_count) is None


def test_the_stub_names_the_tool_and_the_size_and_its_count_replaces_the_outputs() -> None:
    items, counts = turns(3)
    counts[5] = 80  # the second turn's output
    result = prune_tool_outputs(items, counts, protected_turns=1, count_item=stub_count)
    assert result is not None
    pruned, new_counts = result
    assert pruned.items[2] == function_call_output(
        "c0",
        "[Output of read_file removed to save context (100 tokens). "
        "Call the tool again if it is still needed.]",
    )
    assert pruned.items[5] == function_call_output("c1", stub_text("read_file", 80))
    assert pruned.items[:2] == items[:2] and pruned.items[3:5] == items[3:5]
    assert pruned.items[6:] == items[6:]
    assert new_counts == [10, 10, STUB_SIZE, 10, 10, STUB_SIZE, 10, 10, 100]
    assert (pruned.outputs, pruned.tokens_elided) == (2, 180)
    assert counts == [10, 10, 100, 10, 10, 80, 10, 10, 100]  # the caller's list untouched


@pytest.mark.parametrize(("tokens", "is_pruned"), [(63, False), (64, True), (65, True)])
def test_an_output_under_64_tokens_costs_less_than_its_stub_and_is_spared(
    tokens: int, is_pruned: bool
) -> None:
    items, counts = turns(3)
    counts[2] = tokens
    counts[5] = 100
    result = prune_tool_outputs(items, counts, protected_turns=1, count_item=stub_count)
    assert result is not None
    assert pruned_calls(items, result[0].items) == (["c0", "c1"] if is_pruned else ["c1"])


def test_nothing_to_prune_when_every_old_output_is_small() -> None:
    items, counts = turns(3, output_tokens=63)
    assert prune_tool_outputs(items, counts, protected_turns=1, count_item=stub_count) is None


def test_pinned_outputs_are_spared() -> None:
    items, counts = turns(3)
    result = prune_tool_outputs(
        items, counts, protected_turns=1, count_item=stub_count, keep=frozenset({"c0"})
    )
    assert result is not None and pruned_calls(items, result[0].items) == ["c1"]


@pytest.mark.parametrize(
    "inserted",
    [
        user_message(summary_text("what happened so far")),
        user_message(f"{ENVIRONMENT_CONTEXT_OPEN}\n<cwd>/work</cwd>"),
        CarriedOver(notes=("The port is 8080.",)).item(),
    ],
    ids=["summary", "injected context", "carried notes"],
)
def test_a_summary_injected_context_or_notes_block_is_not_a_turn(inserted: Item) -> None:
    items, counts = turns(3)
    # Inserted after the middle turn's output: counted as a turn of its own, it would move the
    # protected boundary past that output and prune it.
    items.insert(6, inserted)
    counts.insert(6, 10)
    result = prune_tool_outputs(items, counts, protected_turns=2, count_item=stub_count)
    assert result is not None and pruned_calls(items, result[0].items) == ["c0"]


def test_an_output_whose_call_is_gone_or_unnamed_is_said_of_a_tool() -> None:
    items: list[Item] = [
        user_message("first"),
        function_call_output("lost", "content"),  # its call was compacted away
        {"type": "function_call", "name": "", "arguments": "{}", "call_id": "anon"},
        function_call_output("anon", "content"),
        {"type": "function_call_output", "output": "content"},  # no call id at all
        user_message("second"),
    ]
    result = prune_tool_outputs(
        items, [10, 100, 10, 100, 100, 10], protected_turns=1, count_item=stub_count
    )
    assert result is not None
    new = result[0].items
    assert new[1] == function_call_output("lost", stub_text("a tool", 100))
    assert new[3] == function_call_output("anon", stub_text("a tool", 100))
    assert new[4] == function_call_output("", stub_text("a tool", 100))
    assert stub_text("a tool", 100) == (
        "[Output of a tool removed to save context (100 tokens). "
        "Call the tool again if it is still needed.]"
    )


def test_an_assistant_message_does_not_start_a_turn() -> None:
    items, counts = turns(3)
    # The model's answer after the middle turn's output: only a user message starts a turn.
    items.insert(6, {"type": "message", "role": "assistant", "content": "done"})
    counts.insert(6, 10)
    result = prune_tool_outputs(items, counts, protected_turns=2, count_item=stub_count)
    assert result is not None and pruned_calls(items, result[0].items) == ["c0"]


IMAGE = {
    "type": "coco_attachment", "kind": "image", "name": "shot.png", "size": 2048,
    "mime": "image/png", "width": 640, "height": 480, "tokens": 441, "file": "abc.png",
}


@pytest.mark.parametrize(("tokens", "pruned"), [(63, False), (64, True)])
def test_an_old_attachment_is_named_instead_like_an_old_output_from_64_tokens(
    tokens: int, pruned: bool
) -> None:
    import json

    from app.core.attachments.parts import attachment_message, with_stand_ins

    def count(item: Item) -> int:
        return len(json.dumps(item)) // 4

    items, counts = turns(4)
    attached = attachment_message("look at this", [IMAGE])
    # An attachment in the second (old) turn: after the first turn's output, before its own.
    items[3], counts[3] = attached, tokens
    result = prune_tool_outputs(items, counts, protected_turns=2, count_item=count)
    assert result is not None
    done, new_counts = result
    named = with_stand_ins(attached)
    assert (done.items[3] == named) is pruned
    assert new_counts[3] == (count(named) if pruned else tokens)
    assert [item_type(done.items[i]) for i in (2, 5)] == ["function_call_output"] * 2
    assert new_counts[2] == count(done.items[2]) and new_counts[5] == count(done.items[5])
    assert done.outputs == 2 + pruned  # the two old turns' outputs, and the attachment
    assert done.tokens_elided == 2 * 100 + (tokens - count(named) if pruned else 0)


def test_a_stub_is_counted_as_itself() -> None:
    items, counts = turns(4)
    result = prune_tool_outputs(
        items, counts, protected_turns=2, count_item=lambda item: len(str(item["output"]))
    )
    assert result is not None
    done, new_counts = result
    assert new_counts[2] == len(stub_text("read_file", 100)) == len(done.items[2]["output"])
