"""Pairing tool calls with their outputs, so a damaged history can still be sent.

The Responses API rejects a request whose input holds a ``function_call`` without its
``function_call_output`` ("No tool output found for function call ...") or an output whose call
is missing. A crash between recording a call and recording its output leaves exactly that, and
every later turn and compaction would be refused. :func:`pair_tool_calls` restores the invariant
the way Codex's history normalisation does: a call without an output gets a synthetic output
saying it was aborted, placed right after the call; an output without a preceding call is
dropped. The function is pure: it never mutates the items it is given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..items import Item, item_type

# What the model reads for a call that never finished (Codex sends "aborted").
ABORTED_OUTPUT = "aborted: the app stopped before this tool call finished, so it has no result"

# Each kind of call and the kind of output that answers it.
_OUTPUT_KIND = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
}
_OUTPUT_KINDS = frozenset(_OUTPUT_KIND.values())


@dataclass(frozen=True)
class ToolPairRepair:
    """The paired items, and what was changed to get them (both empty when nothing was)."""

    items: list[Item]
    # call_id of each call that got a synthetic "aborted" output, in history order.
    aborted_calls: list[str] = field(default_factory=list)
    # Items left out: outputs with no call before them (or whose call was already answered),
    # a second copy of a call, and calls without a call_id (nothing can ever answer them).
    dropped: list[Item] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        """True when the history needed a repair."""
        return bool(self.aborted_calls or self.dropped)

    def describe(self) -> str:
        """The repair in words, for a warning ("" when nothing changed)."""
        parts: list[str] = []
        if self.aborted_calls:
            count = len(self.aborted_calls)
            parts.append(
                f"{count} tool call{'s' if count != 1 else ''} had no result "
                "(the app stopped while it ran) and "
                + ("were" if count != 1 else "was")
                + " marked as aborted"
            )
        if self.dropped:
            count = len(self.dropped)
            parts.append(
                f"{count} unmatched tool item{'s' if count != 1 else ''} "
                f"(a result without its call, or a repeated call) "
                f"{'were' if count != 1 else 'was'} left out"
            )
        return "; ".join(parts)


def _call_id(item: Item) -> str | None:
    value = item.get("call_id")
    return value if isinstance(value, str) else None


def _aborted_output(call: Item, call_id: str) -> Item:
    kind = _OUTPUT_KIND[item_type(call)]
    return {"type": kind, "call_id": call_id, "output": ABORTED_OUTPUT}


def pair_tool_calls(items: Sequence[Item]) -> ToolPairRepair:
    """``items`` with every tool call followed (at once or later) by exactly one output.

    A call with no output anywhere after it gets a synthetic aborted output inserted right
    after it. An output is dropped when no call before it has its ``call_id``, or when that
    call already has an output (a duplicated line); a repeated call with the same ``call_id``
    and a call without any ``call_id`` are dropped too. Linear in the number of items; when
    nothing needs a change the result holds the same item objects in the same order.
    """
    # call_ids answered by an output that comes after its call (the first such output).
    answered: set[str] = set()
    seen_calls: set[str] = set()
    for item in items:
        kind = item_type(item)
        call_id = _call_id(item)
        if call_id is None:
            continue
        if kind in _OUTPUT_KIND:
            seen_calls.add(call_id)
        elif kind in _OUTPUT_KINDS and call_id in seen_calls:
            answered.add(call_id)

    result: list[Item] = []
    aborted: list[str] = []
    dropped: list[Item] = []
    open_calls: set[str] = set()  # calls met so far whose output has not been emitted yet
    emitted: set[str] = set()  # calls whose output (real or synthetic) is in the result
    for item in items:
        kind = item_type(item)
        if kind in _OUTPUT_KIND:
            call_id = _call_id(item)
            if call_id is None or call_id in emitted or call_id in open_calls:
                # Unanswerable, or the same call recorded twice: its one output answers the
                # first copy only.
                dropped.append(item)
                continue
            result.append(item)
            if call_id in answered:
                open_calls.add(call_id)
            else:
                result.append(_aborted_output(item, call_id))
                emitted.add(call_id)
                aborted.append(call_id)
        elif kind in _OUTPUT_KINDS:
            call_id = _call_id(item)
            if call_id is not None and call_id in open_calls:
                open_calls.discard(call_id)
                emitted.add(call_id)
                result.append(item)
            else:
                dropped.append(item)
        else:
            result.append(item)
    return ToolPairRepair(items=result, aborted_calls=aborted, dropped=dropped)
