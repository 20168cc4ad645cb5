"""What the carried notes are made from (spec section 10): the user's own messages of a
history, the newest carried-notes block in it (read back) and its tool traffic, read in one pass;
and a reader that reads each history once.

A compaction needs this of the whole history it compacts, and the same history comes back: a
compaction run again after an undo, the local path after a remote failure, a focus given right
after a compaction. ``NotesReader`` keeps what it read last: a history that begins with the
items read last (the same items, in the same order) is read only from where those end.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ...attachments.parts import text_with_stand_ins
from ...items import INJECTED_PREFIXES, Item, item_type, message_text
from ...items import attachment_parts as item_attachments
from ..prompts import summary_prefix
from .block import CarriedOver, is_notes_message, is_notes_text, notes_from_text
from .cache import extract_many
from .tool_traffic import TOOL_ITEM_TYPES, tool_traffic

Traffic = tuple[list[str], list[str], list[str]]


@dataclass(frozen=True)
class NotesMaterial:
    """The user's own messages (oldest first; no injected context, no summaries, no carried
    notes), the newest carried-notes block read back, the tool items and their traffic
    (:func:`tool_traffic`). Shared between reads: never changed in place."""

    messages: Sequence[str]
    previous: CarriedOver
    tools: Sequence[Item]
    traffic: Traffic
    _notes: dict[tuple[int, int, int], list[tuple[str, int]]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def notes_of(self, start: int, end: int, limit: int) -> list[tuple[str, int]]:
        """:func:`extract_many` of ``messages[start:end]`` with ``limit``, remembered: a
        compaction run again on the same history (the reader gives it the same material)
        asks for the same messages' notes."""
        key = (start, end, limit)
        notes = self._notes.get(key)
        if notes is None:
            notes = self._notes[key] = extract_many(self.messages[start:end], limit)
        return list(notes)


class _Scan:
    """The pass over a history's items, which can go on over more of them."""

    def __init__(self) -> None:
        self.messages: list[str] = []
        self.tools: list[Item] = []
        self.block = ""
        self._summary_head = summary_prefix() + "\n"

    def read(self, items: Sequence[Item]) -> None:
        messages, tools, summary_head = self.messages, self.tools, self._summary_head
        for item in items:
            kind = item_type(item)
            if kind == "message":
                if item.get("role") != "user":
                    continue
                text = message_text(item)  # once: the checks below read the text, not the item
                if is_notes_text(text):
                    self.block = text
                elif not (
                    text.lstrip().startswith(INJECTED_PREFIXES)
                    or text.startswith(summary_head)
                    or is_notes_message(item)
                ):
                    # An attachment is kept as the text naming it.
                    messages.append(text_with_stand_ins(item) if item_attachments(item) else text)
            elif kind in TOOL_ITEM_TYPES:
                tools.append(item)


def read_notes_material(history: Sequence[Item]) -> NotesMaterial:
    """:class:`NotesMaterial` of ``history``, read now (nothing kept)."""
    scan = _Scan()
    scan.read(history)
    previous = notes_from_text(scan.block) if scan.block else CarriedOver()
    return NotesMaterial(scan.messages, previous, scan.tools, tool_traffic(scan.tools))


class NotesReader:
    """:func:`read_notes_material` that remembers the last history it read (a session's
    compactions): the same history again is not read again, a longer one (the same items,
    then more) only where it goes on. It keeps a reference to the items it read until it
    reads another history."""

    def __init__(self) -> None:
        self._items: list[Item] = []
        self._scan = _Scan()
        self._material: NotesMaterial | None = None

    def __call__(self, history: Sequence[Item]) -> NotesMaterial:
        known = len(self._items)
        material = self._material
        if material is not None and len(history) >= known and self._begins(history, known):
            if len(history) == known:
                return material
            new = list(history[known:])
        else:
            self._items, self._scan, material = [], _Scan(), None
            new = list(history)
        scan = self._scan
        block, tools = scan.block, len(scan.tools)
        scan.read(new)
        self._items.extend(new)
        if material is None or scan.block != block:
            previous = notes_from_text(scan.block) if scan.block else CarriedOver()
        else:
            previous = material.previous
        if material is None or len(scan.tools) != tools:
            traffic = tool_traffic(scan.tools)
        else:
            traffic = material.traffic
        # Copies: the scan goes on appending to its own lists.
        self._material = NotesMaterial(tuple(scan.messages), previous, tuple(scan.tools), traffic)
        return self._material

    def _begins(self, history: Sequence[Item], known: int) -> bool:
        """Whether ``history`` begins with the items read last. Compared as lists, which
        take the same object as equal without looking inside it: the same history costs a
        pointer comparison per item; an equal item that is another object is compared by
        value, and reads the same."""
        head = history[:known]
        return (list(head) if not isinstance(head, list) else head) == self._items
