"""Pins: messages the user chose to keep verbatim in the model's view through every compaction.

A pin names one message of the transcript (the user's, the assistant's, or a tool's output,
carried with its call so the request stays well formed) by its place among the transcript's
items: its *key*. Every compaction carries the pinned items verbatim, just before the summary
(or the server's compaction item), within a budget derived from the window: a share of what the
compacted history may hold (``budget.CompactionBudget.history_room``). The compaction's own
budget is reserved for the rest, so the half-limit guarantee stands. A pin that cannot fit is
refused, with its size and the room left named.

Pins are recorded in the rollout (``pin`` records, replayed on resume). Undo of a compaction
puts the history back as it was before it; the pins are the user's choices and stay as they
are, so the next compaction carries exactly what is pinned then.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import protocol as p
from ..attachments.parts import text_with_stand_ins
from ..conversation.history import ContextHistory
from ..conversation.transcript import Transcript
from ..items import (
    Item,
    is_compaction_item,
    is_injected_context,
    is_message,
    item_type,
    message_text,
)
from .budget import CompactionBudget
from .prompts import is_summary_message

PIN_RECORD = "pin"
# Pins may take this share of what a compacted history may hold (the rest is the summary's
# and the kept messages')...
PIN_SHARE_OF_ROOM = 0.25
# ...and never more than this, however large the window.
PIN_CEILING = 16_000


@dataclass(frozen=True)
class Pin:
    key: str
    items: tuple[Item, ...]  # the message, or a tool's call and its output
    tokens: int
    kind: str


PIN_NAME_CHARS = 48  # the start of a pinned message that names it


def pin_name(pin: Pin) -> str:
    """A pinned message named in a few words, by whose it is and how it begins."""
    for item in pin.items:
        if item_type(item) == "function_call":
            return f"the output of {item.get('name') or 'a tool'}"
    text = " ".join(message_text(pin.items[0]).split()) if pin.items else ""
    if len(text) > PIN_NAME_CHARS:
        text = text[:PIN_NAME_CHARS].rsplit(" ", 1)[0] + "…"
    whose = "the answer" if pin.items and is_message(pin.items[0], "assistant") else "your message"
    return f"{whose} “{text}”"


def pin_budget(budget: CompactionBudget) -> int | None:
    """How many tokens pinned messages may take in a compacted history (None: no window to
    derive it from, nothing limits them)."""
    room = budget.history_room
    if room is None:
        return None
    return min(PIN_CEILING, int(room * PIN_SHARE_OF_ROOM))


def carry(items: list[Item], pinned: list[Item]) -> list[Item]:
    """``items`` (a compacted history) with ``pinned`` just before its summary, the last
    summary message or compaction item (at the end when there is none). Other copies of a
    pinned user message leave it, so none is sent twice: a copy the compaction kept with its
    attachments as the texts naming them is a copy too."""
    if not pinned:
        return items
    users = [item for item in pinned if is_message(item, "user")]
    texts = {message_text(item) for item in users} | {text_with_stand_ins(i) for i in users}
    rest = [
        item
        for item in items
        if not (
            texts
            and is_message(item, "user")
            and not is_summary_message(item)
            and message_text(item) in texts
        )
    ]
    at = len(rest)
    for index in range(len(rest) - 1, -1, -1):
        if is_summary_message(rest[index]) or is_compaction_item(rest[index]):
            at = index
            break
    return [*rest[:at], *pinned, *rest[at:]]


@dataclass(frozen=True)
class Carried:
    """The pins one compaction carries (oldest first), and those the room left out."""

    pins: list[Pin]
    left_out: list[Pin]

    @property
    def tokens(self) -> int:
        return sum(pin.tokens for pin in self.pins)

    @property
    def items(self) -> list[Item]:
        return [item for pin in self.pins for item in pin.items]

    @property
    def keys(self) -> list[str]:
        return [pin.key for pin in self.pins]


class Pins:
    """The pinned messages of one session: pin and unpin ops, what a compaction carries, the
    records that restore them on resume."""

    def __init__(
        self,
        *,
        transcript: Transcript,
        history: ContextHistory,
        count_item: Callable[[Item], int],
        budget: Callable[[], CompactionBudget],
        record: Callable[[str, dict[str, Any]], None],
        emit: Callable[[p.Event], None],
    ) -> None:
        self._transcript = transcript
        self._history = history
        self._count_item = count_item
        self._budget = budget
        self._record = record
        self._emit = emit
        self._pins: dict[str, Pin] = {}

    def __len__(self) -> int:
        return len(self._pins)

    def keys(self) -> list[str]:
        return list(self._pins)

    def holds(self, item: Item) -> bool:
        """Whether ``item`` (of the history) is a pinned message (the Model view marks it)."""
        return any(item is own or item == own for pin in self._pins.values() for own in pin.items)

    def call_ids(self) -> frozenset[str]:
        """The call ids of pinned tool outputs (pruning leaves them as they are)."""
        return frozenset(
            str(item.get("call_id"))
            for pin in self._pins.values()
            for item in pin.items
            if item_type(item) == "function_call_output"
        )

    def names(self, keys: list[str]) -> list[str]:
        """Which message each pin of ``keys`` is, in a few words: ``your message “Deploy to
        svc-orchard…”``, ``the answer “…”``, ``the output of read_file``."""
        return [pin_name(self._pins[key]) for key in keys if key in self._pins]

    def present(self, items: list[Item]) -> list[str]:
        """The keys of the pins whose items are all in ``items``, oldest first."""
        return [pin.key for pin in sorted(self._pins.values(), key=_ordinal) if _within(pin, items)]

    def carried(self, budget: CompactionBudget) -> Carried:
        """The pins a compaction with ``budget`` carries, in the conversation's order: all of
        them while they fit the pin budget (they were accepted against it; a smaller window or
        a large incoming message can shrink it), else the oldest that fit."""
        limit = pin_budget(budget)
        ordered = sorted(self._pins.values(), key=_ordinal)
        kept: list[Pin] = []
        left: list[Pin] = []
        used = 0
        for pin in ordered:
            if limit is None or used + pin.tokens <= limit:
                kept.append(pin)
                used += pin.tokens
            else:
                left.append(pin)
        return Carried(kept, left)

    # ------------------------------------------------------------------ ops

    def handle(self, op: p.PinItem) -> None:
        if op.pinned:
            self._pin(op)
        else:
            self._unpin(op)

    def _pin(self, op: p.PinItem) -> None:
        found = self._find(op)
        if found is None:
            self._refuse("This message cannot be pinned: Coco cannot find it in the conversation.")
            return
        ordinal, items = found
        key = f"pin-{ordinal}"
        if key in self._pins:
            self._emit_pinned(self._pins[key], op, "Already pinned.")
            return
        tokens = sum(self._count_item(item) for item in items)
        budget = self._budget()
        limit = pin_budget(budget)
        used = sum(pin.tokens for pin in self._pins.values())
        if limit is not None and used + tokens > limit:
            self._refuse(refusal(tokens, max(0, limit - used), limit, budget.window))
            return
        pin = Pin(key, tuple(items), tokens, op.kind)
        try:
            self._record(PIN_RECORD, pin_record(pin, ordinal))
        except Exception as exc:  # noqa: BLE001 - RolloutWriteError / ReadOnlySession, in words
            self._emit(p.Error(message=f"Not pinned: {exc}", kind="storage"))
            return
        self._add(pin, ordinal)
        room = "" if limit is None else f"; {max(0, limit - used - tokens):,} tokens left for pins"
        if self._in_view(pin):
            said = (
                f"Pinned: the model keeps this message verbatim through every compaction "
                f"(about {tokens:,} tokens{room})."
            )
        else:
            said = (
                f"Pinned: the model sees this message again, verbatim, from the next compaction "
                f"on (about {tokens:,} tokens{room})."
            )
        self._emit_pinned(pin, op, said)

    def _unpin(self, op: p.PinItem) -> None:
        key = op.key
        if not key:
            found = self._find(op)
            key = f"pin-{found[0]}" if found is not None else ""
        pin = self._pins.get(key)
        if pin is None:
            self._refuse("This message is not pinned.")
            return
        try:
            self._record(PIN_RECORD, {"key": key, "pinned": False})
        except Exception as exc:  # noqa: BLE001 - RolloutWriteError / ReadOnlySession
            self._emit(p.Error(message=f"Not unpinned: {exc}", kind="storage"))
            return
        self._remove(key)
        self._emit(
            p.ItemPinned(
                key=key,
                pinned=False,
                kind=op.kind or pin.kind,
                row_id=op.row_id,
                tokens=pin.tokens,
                in_view=self._in_view(pin),
                message="Unpinned: a compaction may now summarise it like any other message.",
            )
        )

    def replay(self, payload: dict[str, Any]) -> None:
        """A ``pin`` record read on resume."""
        key = str(payload.get("key") or "")
        if not payload.get("pinned"):
            self._remove(key)
            return
        items = payload.get("items")
        ordinal = payload.get("ordinal")
        if not key or not isinstance(items, list) or not isinstance(ordinal, int):
            return
        tokens = payload.get("tokens")
        pin = Pin(
            key,
            tuple(item for item in items if isinstance(item, dict)),
            tokens if isinstance(tokens, int) else 0,
            str(payload.get("kind") or ""),
        )
        self._add(pin, ordinal)

    # ------------------------------------------------------------------ helpers

    def _add(self, pin: Pin, ordinal: int) -> None:
        self._pins[pin.key] = pin
        entries = self._transcript.item_entries()
        if 0 <= ordinal < len(entries):
            entries[ordinal]["pinned"] = pin.key

    def _remove(self, key: str) -> None:
        if self._pins.pop(key, None) is None:
            return
        entries = self._transcript.item_entries()
        ordinal = _ordinal_of(key)
        if 0 <= ordinal < len(entries):
            entries[ordinal].pop("pinned", None)

    def _in_view(self, pin: Pin) -> bool:
        return _within(pin, self._history.raw_items())

    def _find(self, op: p.PinItem) -> tuple[int, list[Item]] | None:
        """The transcript item the op names (its ordinal) and what pinning it carries."""
        if op.key:
            ordinal = _ordinal_of(op.key)
            entries = self._transcript.item_entries()
            if 0 <= ordinal < len(entries):
                return ordinal, _carried_items(entries, ordinal)
            return None
        entries = self._transcript.item_entries()
        for ordinal in range(len(entries) - 1, -1, -1):
            if _names(entries[ordinal]["item"], op):
                return ordinal, _carried_items(entries, ordinal)
        return None

    def _refuse(self, message: str) -> None:
        self._emit(p.Error(message=message, kind="invalid_op"))

    def _emit_pinned(self, pin: Pin, op: p.PinItem, message: str) -> None:
        self._emit(
            p.ItemPinned(
                key=pin.key,
                pinned=True,
                kind=op.kind or pin.kind,
                row_id=op.row_id,
                tokens=pin.tokens,
                in_view=self._in_view(pin),
                message=message,
            )
        )


def refusal(tokens: int, left: int, limit: int, window: int | None) -> str:
    """Why a pin was refused, in words: its size and the room left."""
    where = f"the model's {window:,}-token window" if window else "this model's window"
    return (
        f"Not pinned: this message is about {tokens:,} tokens, and only {left:,} tokens of room "
        f"are left for pins ({where} allows {limit:,} for pinned messages in all). Unpin "
        "another message, or pin a shorter one."
    )


def pin_record(pin: Pin, ordinal: int) -> dict[str, Any]:
    return {
        "key": pin.key,
        "pinned": True,
        "ordinal": ordinal,
        "kind": pin.kind,
        "tokens": pin.tokens,
        "items": list(pin.items),
    }


def _within(pin: Pin, items: list[Item]) -> bool:
    return all(any(item is own or item == own for item in items) for own in pin.items)


def _ordinal_of(key: str) -> int:
    try:
        return int(key.rsplit("-", 1)[-1])
    except ValueError:
        return -1


def _ordinal(pin: Pin) -> int:
    return _ordinal_of(pin.key)


def _names(item: Item, op: p.PinItem) -> bool:
    """Whether the transcript's ``item`` is the row ``op`` names."""
    if op.kind == "function_call_output":
        return item_type(item) == "function_call_output" and item.get("call_id") == op.row_id
    if op.kind == "agent_message":
        return is_message(item, "assistant") and (
            (bool(op.row_id) and item.get("id") == op.row_id) or message_text(item) == op.text
        )
    if op.kind == "user_message":
        return (
            is_message(item, "user")
            and not is_injected_context(item)
            and not is_summary_message(item)
            and message_text(item) == op.text
        )
    return False


def _carried_items(entries: list[dict[str, Any]], ordinal: int) -> list[Item]:
    """What pinning item ``ordinal`` carries: the item, and for a tool output the call it
    answers (an output without its call is not a valid request)."""
    item: Item = entries[ordinal]["item"]
    if item_type(item) != "function_call_output":
        return [item]
    call_id = item.get("call_id")
    for index in range(ordinal - 1, -1, -1):
        other: Item = entries[index]["item"]
        if item_type(other) == "function_call" and other.get("call_id") == call_id:
            return [other, item]
    return [item]

