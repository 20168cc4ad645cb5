"""The user's view: everything that happened, append-only, with compaction markers.

Compaction rewrites the history, never this. Entries are plain dicts so a front end can render
a resumed session without knowing the rollout format:

- ``{"kind": "item", "item": {...}, "turn_id": str, "interrupted": bool}`` (``"pinned": key``
  while the user has it pinned, see ``pins``)
- ``{"kind": "compaction", **CompactionMarker.record(), "undone": bool, "in_view": [str]}``
  (the marker's fields, named once in ``protocol.CompactionMarker``; ``summary_edited`` and
  ``summary_undoable`` once the user edited its summary, see ``summary_edit``)
- ``{"kind": "error" | "warning" | "background", "message": str}``
- ``{"kind": "compaction_ended", "item_id": str, "trigger": str, "status": str, "focus"?: str}``
- ``{"kind": "reply_cut_off", "turn_id": str, "item_id": str, "text": str}``: a reply a failed
  stream cut off, shown, never in the model's view (see ``session.turn.cut_off``)

``entries()`` adds ``in_context``: True for what the model still sees (everything below the
latest compaction that was not undone, and user messages above it that the history still
holds verbatim); False for the rest and for messages marked ``not_sent``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..items import Item, is_injected_context, is_message, message_text
from ..protocol import CompactionMarker

# A compaction that ended without compacting (failed or stopped): see ``compaction.failure``.
ENDED_KIND = "compaction_ended"
# A reply the server's failure cut off: see ``session.turn.cut_off``.
CUT_OFF_KIND = "reply_cut_off"

Entry = dict[str, Any]


class Transcript:
    def __init__(self) -> None:
        self._entries: list[Entry] = []
        # Kept as items arrive, so the session list never rescans the transcript.
        self.message_count = 0
        self.first_user_text: str | None = None

    def __len__(self) -> int:
        return len(self._entries)

    def add_item(self, item: Item, turn_id: str, *, interrupted: bool = False) -> None:
        self._entries.append(
            {"kind": "item", "item": item, "turn_id": turn_id, "interrupted": interrupted}
        )
        if is_message(item) and not is_injected_context(item):
            self.message_count += 1
            if self.first_user_text is None and item.get("role") == "user":
                self.first_user_text = message_text(item)

    def add_compaction(self, marker: CompactionMarker, in_view: list[str] | None = None) -> None:
        """A compaction marker; ``in_view``: the user messages the compacted history still
        holds verbatim (their rows above the marker stay in the model's view)."""
        self._entries.append(
            {"kind": "compaction", "undone": False, **marker.record(),
             "in_view": list(in_view or [])}
        )

    def add_note(self, kind: str, message: str, compaction_id: str = "") -> None:
        entry = {"kind": kind, "message": message}
        if compaction_id:  # a warning about that compaction
            entry["compaction_id"] = compaction_id
        self._entries.append(entry)

    def add_recorded(self, payload: dict[str, Any]) -> str:
        """An ``event`` record worth showing again (a note, or a compaction that ended
        without compacting: ``compaction.failure``); its message ("" when it has none)."""
        message = str(payload.get("message", ""))
        if payload.get("kind") == ENDED_KIND:
            self._entries.append(dict(payload))
        else:
            self.add_note(
                str(payload.get("kind")), message, str(payload.get("compaction_id") or "")
            )
        return message

    def add_error(self, message: str, details: str) -> None:
        """An error note with its technical detail (replayed with it)."""
        self._entries.append({"kind": "error", "message": message, "details": details})

    def add_recorded_entry(self, payload: dict[str, Any]) -> None:
        """An entry kept as recorded (a cut-off reply)."""
        self._entries.append(dict(payload))

    def drop_entries(self, kind: str, turn_id: str) -> list[Entry]:
        """Take out the entries of ``kind`` of turn ``turn_id``; returns them."""
        dropped = [e for e in self._entries if e["kind"] == kind and e.get("turn_id") == turn_id]
        if dropped:
            self._entries = [e for e in self._entries if not any(e is d for d in dropped)]
        return dropped

    def mark_not_sent(self, turn_id: str) -> None:
        """The user's message of ``turn_id`` was taken out of the model's view."""
        for entry in reversed(self._entries):
            item = entry.get("item")
            if (
                entry["kind"] == "item"
                and entry.get("turn_id") == turn_id
                and is_message(item or {}, "user")
                and not is_injected_context(item or {})
            ):
                entry["not_sent"] = True

    def mark_undone(self, item_id: str) -> None:
        for entry in reversed(self._entries):
            if entry["kind"] == "compaction" and entry.get("item_id") == item_id:
                entry["undone"] = True
                return

    def item_entries(self) -> list[Entry]:
        """The item entries themselves (not copies), in order: an item's place in this list is
        how pins name it. Only the core's own modules mark them (``pinned``)."""
        return [entry for entry in self._entries if entry["kind"] == "item"]

    def compaction_entry(self, item_id: str) -> Entry | None:
        """The entry of compaction ``item_id`` itself (summary edits update it)."""
        for entry in reversed(self._entries):
            if entry["kind"] == "compaction" and entry.get("item_id") == item_id:
                return entry
        return None

    def latest_compaction_entry(self) -> Entry | None:
        index = self.latest_compaction_index()
        return self._entries[index] if index >= 0 else None

    def latest_compaction_index(self) -> int:
        for index in range(len(self._entries) - 1, -1, -1):
            entry = self._entries[index]
            if entry["kind"] == "compaction" and not entry.get("undone"):
                return index
        return -1

    def read_entries(self) -> list[Entry]:
        """The entries themselves, in order (a new list; the dicts are shared and must be
        treated as read-only): what a replay reads, which needs neither ``in_context`` nor
        ``undoable`` (copying every entry to add them took a fifth of a long replay)."""
        return list(self._entries)

    def entries(self, in_view: frozenset[str] = frozenset()) -> list[Entry]:
        """A copy of every entry with ``in_context`` added (``in_view``: the texts of the user
        messages the history holds now). The copy is one level deep: items
        inside are shared and must be treated as read-only (the core never mutates them)."""
        boundary = self.latest_compaction_index()
        carried = frozenset(self._entries[boundary].get("carried_pins") or []) if boundary >= 0 else ()
        return [
            {**entry, "in_context": self._in_context(index, entry, boundary, in_view, carried)}
            for index, entry in enumerate(self._entries)
        ]

    def entries_for(self, history_items: Iterable[Item], undo_id: str | None) -> list[Entry]:
        """``entries()`` as a front end reads them: ``in_context`` judged against the history
        holding ``history_items`` now, and each compaction entry saying (``undoable``) whether
        ``UndoCompaction`` would undo it right now (``undo_id``: the one it would)."""
        in_view = frozenset(
            message_text(item) for item in history_items if is_message(item, "user")
        )
        entries = self.entries(in_view)
        for entry in entries:
            if entry["kind"] == "compaction":
                entry["undoable"] = entry.get("item_id") == undo_id
        return entries

    @staticmethod
    def _in_context(
        index: int,
        entry: Entry,
        boundary: int,
        in_view: frozenset[str],
        carried: frozenset[str] | tuple[()] = (),
    ) -> bool:
        if entry.get("not_sent") or entry["kind"] == CUT_OFF_KIND:
            return False
        if index > boundary or (entry.get("pinned") and entry["pinned"] in carried):
            return True
        # Above the latest compaction, a user message it kept verbatim (or left out and put
        # back after the summary) is still what the model sees.
        item = entry.get("item")
        return (
            entry["kind"] == "item"
            and is_message(item or {}, "user")
            and message_text(item or {}) in in_view
        )
