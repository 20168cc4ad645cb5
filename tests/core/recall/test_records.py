"""Rollout records into the index's tables: passages with their turn, role and tool, the
recall tool's own calls and outputs left out, and outputs named by the call they answer."""

from __future__ import annotations

import sqlite3
import zlib
from typing import Any

from app.core.compaction.prompts import summary_prefix
from app.core.items import (
    assistant_message,
    function_call,
    function_call_output,
    user_message,
)
from app.core.recall.records import RecordIndexer
from app.core.recall.store import open_memory


def rows(conn: sqlite3.Connection) -> list[tuple[int, int, str, str, str, str]]:
    """(seq, turn, role, tool, ref, text) of every passage, in order."""
    return [
        (seq, turn, role, tool, ref, zlib.decompress(blob).decode())
        for seq, turn, role, tool, ref, blob in conn.execute(
            "SELECT seq, turn, role, tool, ref, text FROM passages ORDER BY id"
        )
    ]


def add_items(indexer: RecordIndexer, conn: sqlite3.Connection, items: list[Any]) -> None:
    for item in items:
        indexer.add(conn, indexer.count, "response_item", "2026-11-25T14:00:00Z", {"item": item})


def test_messages_and_tools_with_where_they_come_from() -> None:
    conn, indexer = open_memory(), RecordIndexer()
    add_items(indexer, conn, [
        user_message("Read the cluster file."),
        function_call("read_file", '{"path": "cluster.toml"}', "c1"),
        function_call_output("c1", "shardCount = 12"),
        assistant_message("There are 12 shards."),
        user_message("Thanks."),
    ])
    assert indexer.count == 5 and indexer.turn == 2
    assert rows(conn) == [
        (0, 1, "user", "", "", "Read the cluster file."),
        (1, 1, "assistant", "read_file", "c1", 'read_file {"path": "cluster.toml"}'),
        (2, 1, "tool", "read_file", "c1", "shardCount = 12"),
        (3, 1, "assistant", "", "", "There are 12 shards."),
        (4, 2, "user", "", "", "Thanks."),
    ]
    # Each passage is in the full-text table too, camelCase in its parts.
    found = conn.execute("SELECT rowid FROM fts WHERE fts MATCH 'count'").fetchall()
    assert found == [(3,)]


def test_the_recall_tools_own_calls_and_outputs_are_not_indexed() -> None:
    conn, indexer = open_memory(), RecordIndexer()
    add_items(indexer, conn, [
        function_call("recall", '{"query": "zebra"}', "r1"),
        function_call_output("r1", "1 excerpt about the zebra database"),
    ])
    assert indexer.count == 2
    assert rows(conn) == []


def test_an_output_is_named_by_a_call_indexed_before() -> None:
    conn = open_memory()
    first = RecordIndexer()
    add_items(first, conn, [function_call("run", '{"cmd": "ls"}', "c9")])
    # Another indexer on the same tables (the index reopened): the call is found in them.
    second = RecordIndexer(first.count, first.turn)
    add_items(second, conn, [function_call_output("c9", "README.md")])
    assert rows(conn)[-1] == (1, 0, "tool", "run", "c9", "README.md")


def test_summaries_are_found_as_summaries() -> None:
    conn, indexer = open_memory(), RecordIndexer()
    summary = user_message(f"{summary_prefix()}\nThe zebra database moves on Friday.")
    add_items(indexer, conn, [user_message("hello"), summary])
    indexer.add(conn, indexer.count, "compacted", "t", {"message": "An older summary."})
    assert indexer.turn == 1  # a summary is not a turn of the user's
    assert [(role, text) for _, _, role, _, _, text in rows(conn)] == [
        ("user", "hello"),
        ("summary", summary["content"][0]["text"]),
        ("summary", "An older summary."),
    ]


def test_records_with_nothing_to_find_are_counted_all_the_same() -> None:
    conn, indexer = open_memory(), RecordIndexer(count=3, turn=1)
    indexer.add(conn, 3, "session_meta", "t", {"id": "s1"})
    indexer.add(conn, 4, "event", "t", ["not", "a", "dict"])
    indexer.add(conn, 5, "response_item", "t", {"item": {"type": "reasoning"}})
    indexer.add(conn, 6, "response_item", "t", {"item": assistant_message("   ")})
    assert (indexer.count, indexer.turn) == (7, 1)
    assert rows(conn) == []
