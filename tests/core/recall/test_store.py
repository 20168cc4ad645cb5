"""The recall index's database: its file beside the rollout, its tables, the state it keeps,
a file of another version refused, transactions, and its troubles in words."""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

import pytest

from app.core.recall.store import (
    SCHEMA_VERSION,
    load_state,
    open_file,
    open_memory,
    recall_index_path,
    save_state,
    transaction,
    unwritable,
    words,
)


def tables(conn: sqlite3.Connection) -> set[str]:
    return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def test_the_index_lives_beside_its_rollout(tmp_path: Path) -> None:
    rollout = tmp_path / "2026" / "abc.jsonl"
    assert recall_index_path(rollout) == tmp_path / "2026" / "abc.recall.sqlite"


def test_a_new_file_has_the_tables_and_holds_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.recall.sqlite"
    conn = open_file(path)
    assert path.exists()
    assert {"meta", "passages", "calls", "fts"} <= tables(conn)
    assert load_state(conn) == (0, 0)
    conn.close()


def test_the_state_is_saved_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "s.recall.sqlite"
    conn = open_file(path)
    save_state(conn, 12, 3)
    conn.close()
    again = open_file(path)
    assert load_state(again) == (12, 3)
    again.close()
    memory = open_memory()
    save_state(memory, 5, 1)
    assert load_state(memory) == (5, 1)


def test_an_index_of_another_version_is_refused(tmp_path: Path) -> None:
    conn = open_memory()
    conn.execute("INSERT INTO meta(key, value) VALUES ('schema', ?)", (SCHEMA_VERSION + "x",))
    with pytest.raises(sqlite3.DatabaseError, match="another version"):
        load_state(conn)


def test_a_damaged_file_does_not_open(tmp_path: Path) -> None:
    path = tmp_path / "s.recall.sqlite"
    path.write_bytes(b"not a database at all" * 100)
    with pytest.raises(sqlite3.DatabaseError):
        open_file(path)


def test_a_failed_transaction_leaves_nothing() -> None:
    conn = open_memory()
    with pytest.raises(RuntimeError), transaction(conn):
        conn.execute("INSERT INTO calls(call_id, name) VALUES ('c1', 'read_file')")
        raise RuntimeError("the indexing failed")
    assert conn.execute("SELECT count(*) FROM calls").fetchone() == (0,)
    with transaction(conn):
        conn.execute("INSERT INTO calls(call_id, name) VALUES ('c1', 'read_file')")
    assert conn.execute("SELECT name FROM calls").fetchall() == [("read_file",)]


def test_an_unwritable_file_is_told_apart_from_a_damaged_one() -> None:
    assert unwritable(sqlite3.OperationalError("attempt to write a readonly database"))
    assert unwritable(sqlite3.OperationalError("unable to open database file"))
    assert not unwritable(sqlite3.DatabaseError("file is not a database"))


def test_troubles_in_words() -> None:
    assert words(PermissionError(errno.EACCES, "Permission denied")) == "permission denied"
    assert words(sqlite3.OperationalError("disk I/O error")) == "disk I/O error"
    assert words(sqlite3.OperationalError()) == "OperationalError"
