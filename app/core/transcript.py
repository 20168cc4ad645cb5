"""The user's view: everything that happened, append-only, with compaction markers.

Compaction rewrites the history, never this. Entries are plain dicts so a front end can render
a resumed session without knowing the rollout format:

- ``{"kind": "item", "item": {...}, "turn_id": str, "interrupted": bool}``
- ``{"kind": "compaction", "item_id", "trigger", "strategy", "tokens_before", "tokens_after",
  "duration_ms", "summary", "kept_user_messages", "kept_truncated", "trimmed_items", "focus",
  "style", "undone": bool}``
- ``{"kind": "error" | "warning" | "background", "message": str}``

``entries()`` adds ``in_context``: False for everything above the latest compaction that was
not undone (those rows are no longer what the model sees).
"""

from __future__ import annotations

from typing import Any

from .items import Item, is_injected_context, is_message, message_text

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

    def add_compaction(self, marker: dict[str, Any]) -> None:
        self._entries.append({"kind": "compaction", "undone": False, **marker})

    def add_note(self, kind: str, message: str) -> None:
        self._entries.append({"kind": kind, "message": message})

    def mark_undone(self, item_id: str) -> None:
        for entry in reversed(self._entries):
            if entry["kind"] == "compaction" and entry.get("item_id") == item_id:
                entry["undone"] = True
                return

    def latest_compaction_index(self) -> int:
        for index in range(len(self._entries) - 1, -1, -1):
            entry = self._entries[index]
            if entry["kind"] == "compaction" and not entry.get("undone"):
                return index
        return -1

    def entries(self) -> list[Entry]:
        """A copy of every entry with ``in_context`` added. The copy is one level deep: items
        inside are shared and must be treated as read-only (the core never mutates them)."""
        boundary = self.latest_compaction_index()
        return [
            {**entry, "in_context": index > boundary} for index, entry in enumerate(self._entries)
        ]
