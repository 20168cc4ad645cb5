"""Rollout records into the recall index's tables: each searchable entry's passages, with
where they come from (turn, role, tool, time), counting the turns and naming the calls that
outputs answer."""

from __future__ import annotations

import sqlite3
import zlib
from collections.abc import Iterable
from typing import Any

from ..compaction.prompts import is_summary_message
from .searchable import RECALL_TOOL, digest, item_text, passages, split_column, summary_of


class RecordIndexer:
    """Adds records to an index holding the first ``count`` records of a rollout, which had
    ``turn`` user messages. Not thread-safe: the index holds its lock while it adds."""

    __slots__ = ("_calls", "count", "turn")

    def __init__(self, count: int = 0, turn: int = 0) -> None:
        self.count = count
        self.turn = turn
        self._calls: dict[str, str] = {}  # call ids seen, and the tool each called

    def add(
        self, conn: sqlite3.Connection, seq: int, type: str, timestamp: str, payload: Any
    ) -> None:
        """Index rollout record ``seq`` (the next one: records are added in order)."""
        self.count = seq + 1
        if not isinstance(payload, dict):
            return
        item = payload.get("item")
        ref = str(item.get("call_id", "")) if isinstance(item, dict) else ""
        for role, tool, text in self.entries(conn, type, payload):
            known_by = digest(text)
            for passage in passages(text):
                cursor = conn.execute(
                    "INSERT INTO passages(seq, turn, role, tool, time, ref, digest, text) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (seq, self.turn, role, tool, timestamp, ref, known_by,
                     zlib.compress(passage.encode("utf-8"), 1)),
                )
                conn.execute(
                    "INSERT INTO fts(rowid, body, parts) VALUES (?, ?, ?)",
                    (cursor.lastrowid, passage, split_column(passage)),
                )

    def entries(
        self, conn: sqlite3.Connection, type: str, payload: dict[str, Any]
    ) -> Iterable[tuple[str, str, str]]:
        """(role, tool, text) of what a record adds to the conversation."""
        if type == "compacted":
            summary = summary_of(payload)
            if summary:
                yield "summary", "", summary
            return
        # A cut tool output's whole (``tool_output``) is indexed, so recall finds its middle.
        item = payload.get("item") if type in ("response_item", "tool_output") else None
        if not isinstance(item, dict):
            return
        found = item_text(item)
        if found is None:
            return
        kind, text = found
        if kind == "user" and not is_summary_message(item):
            self.turn += 1
        if kind == "call":
            call_id, name = str(item.get("call_id", "")), str(item.get("name", ""))
            self._calls[call_id] = name
            conn.execute("INSERT OR REPLACE INTO calls(call_id, name) VALUES (?, ?)",
                         (call_id, name))
            if name != RECALL_TOOL:  # the question asked, not something to find again
                yield "assistant", name, text
        elif kind == "output":
            name = self._call_name(conn, str(item.get("call_id", "")))
            if name != RECALL_TOOL:
                yield "tool", name, text
        elif kind == "user" and is_summary_message(item):
            yield "summary", "", text
        elif text.strip():
            yield kind, "", text

    def _call_name(self, conn: sqlite3.Connection, call_id: str) -> str:
        name = self._calls.get(call_id)
        if name is None:
            row = conn.execute("SELECT name FROM calls WHERE call_id = ?", (call_id,)).fetchone()
            name = str(row[0]) if row else ""
        return name
