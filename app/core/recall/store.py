"""The recall index's SQLite database: where its file lives, its schema and version, opening
it on disk or in memory, its saved state, transactions, and its troubles in words."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

INDEX_SUFFIX = ".recall.sqlite"
SCHEMA_VERSION = "2"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS passages(
    id INTEGER PRIMARY KEY, seq INTEGER NOT NULL, turn INTEGER NOT NULL, role TEXT NOT NULL,
    tool TEXT NOT NULL, time TEXT NOT NULL, ref TEXT NOT NULL, digest BLOB NOT NULL,
    text BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS calls(call_id TEXT PRIMARY KEY, name TEXT NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    body, parts, content='', tokenize='porter unicode61 remove_diacritics 2');
"""


def recall_index_path(rollout: Path) -> Path:
    """Where the index of the rollout at ``rollout`` lives: beside it, ``<id>.recall.sqlite``."""
    return rollout.with_name(rollout.stem + INDEX_SUFFIX)


def open_file(path: Path) -> sqlite3.Connection:
    """The index in the file at ``path`` (created when missing), with its tables."""
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=MEMORY")
        conn.execute("PRAGMA synchronous=OFF")  # derived data: a damaged file is rebuilt
        conn.executescript(_SCHEMA)
    except BaseException:
        conn.close()
        raise
    return conn


def open_memory() -> sqlite3.Connection:
    """An empty index in memory, with its tables."""
    conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    conn.executescript(_SCHEMA)
    return conn


def load_state(conn: sqlite3.Connection) -> tuple[int, int]:
    """The rollout records the index holds and the turn the last of them was in. Raises
    ``sqlite3.DatabaseError`` for an index of another schema version (it is rebuilt)."""
    state = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    if state and state.get("schema") != SCHEMA_VERSION:
        raise sqlite3.DatabaseError("an index written by another version")
    return int(state.get("records", 0)), int(state.get("turn", 0))


def save_state(conn: sqlite3.Connection, records: int, turn: int) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
        [("schema", SCHEMA_VERSION), ("records", str(records)), ("turn", str(turn))],
    )


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
    conn.execute("BEGIN")
    try:
        yield
    except BaseException:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass  # a damaged file: it is rebuilt
        raise
    conn.execute("COMMIT")


def unwritable(exc: Exception) -> bool:
    """Whether ``exc`` says the index's file cannot be written (a read-only folder)."""
    message = str(exc).lower()
    return "readonly" in message or "read-only" in message or "unable to open" in message


def words(exc: Exception) -> str:
    """``exc`` as a few words for a note to the user."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return str(exc) or type(exc).__name__
