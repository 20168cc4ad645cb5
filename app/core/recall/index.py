"""The recall index: every message, tool call, tool output and summary of a session's rollout in
a full-text index (SQLite FTS5, Porter stemming), in a file beside the rollout.

The rollout stays the one source of truth: the index is derived from it, records the number of
rollout records it holds, and catches up from the file when it is behind (opened after another
writer added records), rebuilds itself when it is missing, damaged or from another rollout, and
lives in memory when its file cannot be written (a read-only data folder).

Nothing here runs on the event loop or while a session opens: records written by the session
are queued as they are appended (:meth:`RecallIndex.add`) and indexed by a short-lived worker
thread; a search first indexes what is queued, in the caller's thread (the tool calls it off
the loop). Texts are kept zlib-compressed beside a contentless FTS table, so the index stays
smaller than the rollout.
"""

from __future__ import annotations

import hashlib
import sqlite3
import string
import threading
import zlib
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..compaction.prompts import is_summary_message
from ..items import Item, is_injected_context, item_type, message_text
from ..rollout import RolloutWriter, read_rollout
from .query import BOUNDARY, WORD, SearchQuery, split_form
from .tool import RECALL_TOOL  # its own calls and outputs are not indexed

INDEX_SUFFIX = ".recall.sqlite"
SCHEMA_VERSION = "2"
# Long texts are indexed in passages of about this many characters (cut at line ends).
PASSAGE_CHARS = 1600
# Candidates read per search before in-view ones are put last.
CANDIDATES = 200
# Longer tokens (hashes, base64) are not split into parts.
MAX_SPLIT_TOKEN = 64
# Each ASCII letter or digit by its class, to find camelCase or letter-digit boundaries fast.
_SHAPES = str.maketrans(
    string.ascii_lowercase + string.ascii_uppercase + string.digits, "a" * 26 + "A" * 26 + "0" * 10
)
_BOUNDARY_SHAPES = ("aA", "a0", "A0", "0a", "0A")

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


def item_digest(item: Item) -> bytes | None:
    """The digest a history item is known by in the index (``None``: never indexed)."""
    found = _item_text(item)
    return None if found is None else _digest(found[1])


@dataclass(frozen=True)
class RecallHit:
    """One passage found: where it comes from, its text, and whether the model still sees the
    item it belongs to."""

    turn: int  # the user message it follows (1 = the first); 0 before any
    role: str  # "user", "assistant", "tool", "summary"
    tool: str  # the tool that was called or answered ("" for messages)
    time: str  # the record's timestamp (ISO-8601 UTC)
    text: str
    in_view: bool
    seq: int  # the rollout record it comes from (0-based, in order)
    call_id: str = ""  # the tool call it made or answered


@dataclass(frozen=True)
class RecallResult:
    hits: list[RecallHit]
    all_words: bool  # every word matched (else: the best passages with some of them)
    note: str = ""  # how the index is kept, when it is not as usual (in memory, rebuilt)


class RecallIndex:
    """The index of one session's rollout. Thread-safe; every method but :meth:`search` is
    cheap enough for the event loop."""

    def __init__(self, rollout: Path) -> None:
        self._rollout = rollout
        self._path = recall_index_path(rollout)
        self._db_lock = threading.Lock()  # held while the database is used
        self._queue_lock = threading.Lock()  # guards the queue and the worker
        self._pending: deque[tuple[int, str, str, dict[str, Any]]] = deque()
        self._next_seq = 0  # the number the next appended record gets
        self._worker: threading.Thread | None = None
        self._closed = False
        self._conn: sqlite3.Connection | None = None
        self._in_memory = False
        self._resumed = False  # told how many records the rollout held when opened
        self._checked = False  # the rollout file was read once
        self._note = ""
        self._count = 0  # rollout records the index holds
        self._turn = 0
        self._calls: dict[str, str] = {}

    @property
    def path(self) -> Path:
        return self._path

    # ------------------------------------------------------------------------ feeding

    def add(self, type: str, timestamp: str, payload: dict[str, Any]) -> None:
        """A record was appended to the rollout (the rollout writer's listener): queue it and
        let a worker thread index it."""
        with self._queue_lock:
            if self._closed:
                return
            self._pending.append((self._next_seq, type, timestamp, payload))
            self._next_seq += 1
            if self._worker is not None:
                return
            self._worker = threading.Thread(target=self._work, name="recall-index", daemon=True)
            worker = self._worker
        worker.start()

    def follow(self, writer: RolloutWriter | None, *, records: int | None = None) -> None:
        """Index what ``writer`` appends from now on. ``records``: the session was opened from
        a rollout holding that many records; nothing is read now, the index is checked (and
        caught up) when it is next used. Opened without a writer (another Coco writes it),
        the session is indexed in memory."""
        if writer is not None:
            writer.on_append = self.add
        if records is not None:
            with self._queue_lock:
                self._next_seq = records
                self._resumed = True
                self._in_memory = writer is None

    def flush(self) -> None:
        """Bring the index up to date with the rollout now, in this thread."""
        with self._db_lock:
            if not self._closed:
                self._drain_safely(catch_up=True)

    def close(self) -> None:
        """Stop indexing and close the database, without waiting for a worker (it closes the
        database when it stops). What was queued is in the rollout: the next open catches up."""
        with self._queue_lock:
            self._closed = True
            self._pending.clear()
            if self._worker is not None:
                return
        with self._db_lock:
            self._close_connection()

    def _work(self) -> None:
        while True:
            with self._db_lock:
                if not self._closed:
                    self._drain_safely(catch_up=False)
            with self._queue_lock:
                if self._closed or not self._pending:
                    self._worker = None
                    closed = self._closed
                    break
        if closed:
            with self._db_lock:
                self._close_connection()

    # ------------------------------------------------------------------------ searching

    def search(
        self, query: SearchQuery, limit: int, in_view: frozenset[bytes] = frozenset()
    ) -> RecallResult:
        """The best ``limit`` passages for ``query``, those whose item is not in ``in_view``
        (digests of the model's view, see :func:`item_digest`) first. Blocking: call it off
        the event loop. Raises ``OSError``/``sqlite3.Error`` only when even an index in memory
        cannot be built."""
        with self._db_lock:
            if self._closed:
                return RecallResult([], False, "the conversation is closed")
            self._drain_safely(catch_up=True)
            try:
                return self._search(query, limit, in_view)
            except sqlite3.DatabaseError:
                self._rebuild("the search index was damaged and has been rebuilt")
                return self._search(query, limit, in_view)

    def _search(self, query: SearchQuery, limit: int, in_view: frozenset[bytes]) -> RecallResult:
        conn = self._connection()
        all_words = True
        rows = self._candidates(conn, query.match)
        if not rows:
            all_words = False
            rows = self._candidates(conn, query.any_match)
        fresh = [row for row in rows if row[1] not in in_view]
        seen = [row for row in rows if row[1] in in_view]
        chosen = (fresh + seen)[:limit]
        hits: list[RecallHit] = []
        for rowid, digest in chosen:
            seq, turn, role, tool, time, ref, blob = conn.execute(
                "SELECT seq, turn, role, tool, time, ref, text FROM passages WHERE id = ?",
                (rowid,),
            ).fetchone()
            hits.append(
                RecallHit(
                    turn=turn,
                    role=role,
                    tool=tool,
                    time=time,
                    text=zlib.decompress(blob).decode("utf-8"),
                    in_view=digest in in_view,
                    seq=seq,
                    call_id=ref,
                )
            )
        return RecallResult(hits, all_words and bool(hits), self._note)

    @staticmethod
    def _candidates(conn: sqlite3.Connection, match: str) -> list[tuple[int, bytes]]:
        return conn.execute(
            "SELECT fts.rowid, passages.digest FROM fts JOIN passages ON passages.id = fts.rowid "
            "WHERE fts MATCH ? ORDER BY bm25(fts, 1.0, 0.5) LIMIT ?",
            (match, CANDIDATES),
        ).fetchall()

    # ------------------------------------------------------------------------ storage

    def _drain_safely(self, *, catch_up: bool) -> None:
        """Index the queue; a damaged file is rebuilt, an unwritable one replaced by an index
        in memory. Never raises for the index's own troubles."""
        try:
            self._drain(catch_up)
        except sqlite3.DatabaseError as exc:
            # What was queued is in the rollout already: the rebuilt index reads it there.
            try:
                if _unwritable(exc) and not self._in_memory:
                    self._to_memory(exc)
                else:
                    self._rebuild("the search index was damaged and has been rebuilt")
            except (OSError, sqlite3.Error) as again:
                self._fail(again)
        except OSError as exc:
            self._fail(exc)

    def _fail(self, exc: Exception) -> None:
        """The index could not be kept at all (the rollout unreadable too): an empty one in
        memory, saying why."""
        self._close_connection()
        self._conn = self._open_memory()
        self._in_memory = True
        self._reset_state()
        self._note = f"the search index could not be built ({exc}); nothing can be searched"

    def _drain(self, catch_up: bool) -> None:
        """Index the queued records. An index behind the rollout (missing, or opened after
        another writer added records) first reads what it lacks from the file; the worker
        leaves that to the next search when the session was opened from a long rollout, so
        building an index never competes with a turn or a compaction."""
        conn = self._connection()
        with self._queue_lock:
            batch = list(self._pending)
            self._pending.clear()
            known, resumed = self._next_seq, self._resumed
        before = batch[0][0] if batch else known  # the records written before this batch
        if self._count < before or not (resumed or self._checked):
            if not (catch_up or not resumed):
                return  # what was queued is in the rollout: the catch-up reads it there
            self._catch_up(conn)
        if not batch:
            return
        with _transaction(conn):
            for seq, type, timestamp, payload in batch:
                if seq == self._count:
                    self._index_record(conn, seq, type, timestamp, payload)
            self._save_state(conn)

    def _connection(self) -> sqlite3.Connection:
        """The database, opened (no record is read here: see :meth:`_drain`)."""
        if self._conn is not None:
            return self._conn
        if self._in_memory:
            self._conn = self._open_memory()
            self._reset_state()
            return self._conn
        try:
            conn = self._open_file()
        except sqlite3.DatabaseError as exc:
            if _unwritable(exc):
                return self._to_memory(exc)
            self._close_connection()
            self._remove_file()
            self._note = "the search index was damaged and has been rebuilt"
            try:
                conn = self._open_file()
            except sqlite3.DatabaseError as again:
                return self._to_memory(again)
        except OSError as exc:
            return self._to_memory(exc)
        self._conn = conn
        with self._queue_lock:
            known, resumed = self._next_seq, self._resumed
        if resumed and self._count > known:  # an index of a longer (other) rollout
            self._close_connection()
            self._remove_file()
            self._note = "the search index did not match the conversation and was rebuilt"
            try:
                self._conn = self._open_file()
            except (OSError, sqlite3.DatabaseError) as exc:
                return self._to_memory(exc)
        return self._conn

    def _open_file(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self._path, check_same_thread=False, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=MEMORY")
            conn.execute("PRAGMA synchronous=OFF")  # derived data: a damaged file is rebuilt
            conn.executescript(_SCHEMA)
            self._load_state(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _open_memory(self) -> sqlite3.Connection:
        conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        conn.executescript(_SCHEMA)
        return conn

    def _to_memory(self, exc: Exception) -> sqlite3.Connection:
        self._close_connection()
        self._in_memory = True
        self._note = (
            f"the search index could not be saved beside the conversation ({_words(exc)}); "
            "it was built in memory"
        )
        self._conn = self._open_memory()
        self._reset_state()
        return self._conn

    def _rebuild(self, note: str) -> None:
        self._close_connection()
        self._note = note
        self._reset_state()
        if not self._in_memory:
            self._remove_file()
            try:
                self._conn = self._open_file()
            except (OSError, sqlite3.DatabaseError) as exc:
                self._to_memory(exc)
        else:
            self._conn = self._open_memory()
        assert self._conn is not None
        self._catch_up(self._conn)

    def _catch_up(self, conn: sqlite3.Connection) -> None:
        """Index the rollout's records the index does not hold yet, from the file."""
        self._checked = True
        try:
            records, _warnings = read_rollout(self._rollout)
        except FileNotFoundError:
            return  # a new session: nothing written yet
        with _transaction(conn):
            for seq in range(self._count, len(records)):
                record = records[seq]
                self._index_record(conn, seq, record.type, record.timestamp, record.payload)
            self._save_state(conn)

    def _close_connection(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
            self._conn = None

    def _remove_file(self) -> None:
        for suffix in ("", "-journal", "-wal", "-shm"):
            try:
                Path(str(self._path) + suffix).unlink(missing_ok=True)
            except OSError:
                pass

    def _reset_state(self) -> None:
        self._count, self._turn, self._calls = 0, 0, {}
        self._checked = False

    def _load_state(self, conn: sqlite3.Connection) -> None:
        state = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        if state and state.get("schema") != SCHEMA_VERSION:
            raise sqlite3.DatabaseError("an index written by another version")
        self._count = int(state.get("records", 0))
        self._turn = int(state.get("turn", 0))
        self._calls = {}

    def _save_state(self, conn: sqlite3.Connection) -> None:
        conn.executemany(
            "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
            [("schema", SCHEMA_VERSION), ("records", str(self._count)), ("turn", str(self._turn))],
        )

    # ------------------------------------------------------------------------ records

    def _index_record(
        self, conn: sqlite3.Connection, seq: int, type: str, timestamp: str, payload: Any
    ) -> None:
        self._count = seq + 1
        if not isinstance(payload, dict):
            return
        item = payload.get("item")
        ref = str(item.get("call_id", "")) if isinstance(item, dict) else ""
        for role, tool, text in self._entries(conn, type, payload):
            digest = _digest(text)
            for passage in _passages(text):
                cursor = conn.execute(
                    "INSERT INTO passages(seq, turn, role, tool, time, ref, digest, text) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (seq, self._turn, role, tool, timestamp, ref, digest,
                     zlib.compress(passage.encode("utf-8"), 1)),
                )
                conn.execute(
                    "INSERT INTO fts(rowid, body, parts) VALUES (?, ?, ?)",
                    (cursor.lastrowid, passage, _split_column(passage)),
                )

    def _entries(
        self, conn: sqlite3.Connection, type: str, payload: dict[str, Any]
    ) -> Iterable[tuple[str, str, str]]:
        """(role, tool, text) of what a record adds to the conversation."""
        if type == "compacted":
            summary = _summary_of(payload)
            if summary:
                yield "summary", "", summary
            return
        item = payload.get("item") if type == "response_item" else None
        if not isinstance(item, dict):
            return
        found = _item_text(item)
        if found is None:
            return
        kind, text = found
        if kind == "user" and not is_summary_message(item):
            self._turn += 1
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


@contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
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


def _item_text(item: Item) -> tuple[str, str] | None:
    """What an item says, and what it is ("user", "assistant", "call", "output"); ``None`` for
    items with nothing to search (reasoning, injected context, compaction items)."""
    kind = item_type(item)
    if kind == "message":
        role = item.get("role")
        if role not in ("user", "assistant") or is_injected_context(item):
            return None
        return str(role), message_text(item)
    if kind == "function_call":
        return "call", f"{item.get('name', '')} {item.get('arguments', '')}"
    if kind == "function_call_output":
        output = item.get("output", "")
        if isinstance(output, list):
            output = "\n".join(
                str(part.get("text", "")) for part in output if isinstance(part, dict)
            )
        return "output", str(output)
    return None


def _summary_of(payload: dict[str, Any]) -> str:
    replacement = payload.get("replacement_history")
    if isinstance(replacement, list):
        for item in replacement:
            if isinstance(item, dict) and is_summary_message(item):
                return message_text(item)
    return str(payload.get("message") or "")


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=8).digest()


def _passages(text: str) -> Sequence[str]:
    """``text`` in pieces of about :data:`PASSAGE_CHARS`, cut at a line end or a space."""
    if len(text) <= PASSAGE_CHARS:
        return [text] if text.strip() else []
    pieces: list[str] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + PASSAGE_CHARS)
        if end < len(text):
            cut = text.rfind("\n", start + PASSAGE_CHARS // 2, end)
            if cut < 0:
                cut = text.rfind(" ", start + PASSAGE_CHARS // 2, end)
            if cut > start:
                end = cut + 1
        piece = text[start:end]
        if piece.strip():
            pieces.append(piece)
        start = end
    return pieces


def _split_column(text: str) -> str:
    """The camelCase and letter-digit tokens of ``text`` in their parts (``svc41`` → svc 41),
    so a part finds them; "_" and "-" already separate words in the tokenizer."""
    shape = text.translate(_SHAPES)  # fast: most passages have no such boundary at all
    if not any(pair in shape for pair in _BOUNDARY_SHAPES):
        return ""
    parts: list[str] = []
    done = -1  # the end of the last token split
    for match in BOUNDARY.finditer(text):
        at = match.start()
        if at < done:
            continue
        start = at
        while start > 0 and text[start - 1].isalnum():
            start -= 1
        word = WORD.match(text, at)
        done = word.end() if word else at + 1
        if done - start <= MAX_SPLIT_TOKEN:  # not hex blobs or base64
            parts.append(" ".join(split_form(text[start:done])))
    return " ".join(parts)


def _unwritable(exc: Exception) -> bool:
    message = str(exc).lower()
    return "readonly" in message or "read-only" in message or "unable to open" in message


def _words(exc: Exception) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return str(exc) or type(exc).__name__
