"""The prune path: old tool outputs replaced by a short stub, old attachments by the text
naming them, no model call.

Tool outputs (file contents, listings) are usually the bulk of a working conversation and the
cheapest thing to lose: the model already read them and acted on them. When stubbing the outputs
older than the last few turns brings the history under the target, Coco does that instead of
asking the model for a summary: instant, free, and the conversation itself stays verbatim.
Claude Code has a form of it; Codex does not.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ...attachments.parts import with_stand_ins
from ...items import (
    Item,
    attachment_parts,
    function_call_output,
    is_injected_context,
    is_message,
    item_type,
)
from ..notes.block import is_notes_message
from ..prompts import is_summary_message

# Tool outputs of this many recent turns (the current one included) are never pruned.
PROTECTED_TURNS = 2
# An output this small costs less than its stub would: left as it is.
MIN_PRUNED_TOKENS = 64


@dataclass(frozen=True)
class Pruned:
    items: list[Item]
    outputs: int  # how many outputs were replaced
    tokens_elided: int  # their estimated size


def stub_text(name: str, tokens: int) -> str:
    """What a pruned output says instead of its content."""
    return (
        f"[Output of {name} removed to save context ({tokens} tokens). "
        "Call the tool again if it is still needed.]"
    )


def prune_tool_outputs(
    items: list[Item],
    counts: list[int],
    *,
    protected_turns: int = PROTECTED_TURNS,
    count_item: Callable[[Item], int],
    keep: frozenset[str] = frozenset(),
) -> tuple[Pruned, list[int]] | None:
    """``items`` with every tool output older than the last ``protected_turns`` user turns
    replaced by a stub, with the new per-item counts; None when there is nothing to prune.
    Outputs of the calls in ``keep`` (pinned ones) stay as they are."""
    starts = [
        index
        for index, item in enumerate(items)
        if is_message(item, "user")
        and not is_injected_context(item)
        and not is_summary_message(item)
        and not is_notes_message(item)
    ]
    if len(starts) <= protected_turns - 1:
        return None
    boundary = starts[-protected_turns] if protected_turns > 0 else len(items)
    names = {
        item.get("call_id"): str(item.get("name") or "a tool")
        for item in items[:boundary]
        if item_type(item) == "function_call"
    }
    new_items = list(items)
    new_counts = list(counts)
    outputs = elided = 0
    for index in range(boundary):
        item = items[index]
        if attachment_parts(item) and counts[index] >= MIN_PRUNED_TOKENS:
            # An old file or image goes like an old tool output: named, no longer sent.
            named = with_stand_ins(item)
            new_items[index] = named
            new_counts[index] = count_item(named)
            outputs += 1
            elided += counts[index] - new_counts[index]
            continue
        if (
            item_type(item) != "function_call_output"
            or counts[index] < MIN_PRUNED_TOKENS
            or item.get("call_id") in keep
        ):
            continue
        name = names.get(item.get("call_id"), "a tool")
        stub = function_call_output(str(item.get("call_id", "")), stub_text(name, counts[index]))
        new_items[index] = stub
        new_counts[index] = count_item(stub)
        outputs += 1
        elided += counts[index]
    if not outputs:
        return None
    return Pruned(items=new_items, outputs=outputs, tokens_elided=elided), new_counts
