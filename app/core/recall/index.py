"""The recall index: every message, tool call, tool output and summary of a session's rollout in
a full-text index (SQLite FTS5, Porter stemming), in a file beside the rollout.

The rollout stays the one source of truth: the index is derived from it, records the number of
rollout records it holds, and catches up from the file when it is behind (opened after another
writer added records), rebuilds itself when it is missing, damaged or from another rollout, and
lives in memory when its file cannot be written (a read-only data folder).

Nothing here runs on the event loop or while a session opens: records written by the session
are queued as they are appended (:meth:`RecallIndex.add`) and indexed by the process's one
recall worker thread (started once: starting a thread makes the caller wait until it runs, which
on a busy machine held the window's thread for milliseconds at every turn); a search first indexes what is queued, in the caller's thread (the tool calls it off
the loop). Texts are kept zlib-compressed beside a contentless FTS table, so the index stays
smaller than the rollout.
"""

from __future__ import annotations

import logging
import queue
import sqlite3
import threading
import zlib
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..rollout.store import RolloutWriter, read_rollout
from ..system.background import yield_to_window
from .query import SearchQuery
from .ranking import ANY_WORDS, ranked
from .records import RecordIndexer
from .results import RecallHit, RecallResult
from .store import (
    load_state,
    open_file,
    open_memory,
    recall_index_path,
    save_state,
    transaction,
    unwritable,
    words,
)

__all__ = ["RecallIndex"]


log = logging.getLogger(__name__)
_jobs: queue.SimpleQueue[Callable[[], None]] | None = None  # the worker's, once it runs
_jobs_lock = threading.Lock()


def run_in_worker(job: Callable[[], None]) -> None:
    """Run ``job`` on the recall worker thread, which is started by the first job of the
    process and then waits for the next (a daemon: it never holds up the process's exit)."""
    global _jobs
    with _jobs_lock:
        if _jobs is None:
            _jobs = queue.SimpleQueue()
            threading.Thread(target=_serve, args=(_jobs,), name="recall-index", daemon=True).start()
        jobs = _jobs
    jobs.put(job)


def _serve(jobs: queue.SimpleQueue[Callable[[], None]]) -> None:
    yield_to_window()  # indexing is background work (see ``system.background``)
    while True:
        job = jobs.get()
        try:
            job()
        except Exception:
            log.exception("The recall index failed to index new records")
        # Not held while the worker waits: it would keep a closed session's index alive.
        del job


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
        self._working = False  # the worker has this index's queue in hand
        self._closed = False
        self._conn: sqlite3.Connection | None = None
        self._in_memory = False
        self._resumed = False  # told how many records the rollout held when opened
        self._checked = False  # the rollout file was read once
        self._note = ""
        self._records = RecordIndexer()  # what the index holds

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
            if self._working:
                return
            self._working = True
        run_in_worker(self._work)

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
            if self._working:
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
                    self._working = False
                    closed = self._closed
                    break
        if closed:
            with self._db_lock:
                self._close_connection()

    # ------------------------------------------------------------------------ searching

    def search(
        self,
        query: SearchQuery,
        limit: int,
        in_view: frozenset[bytes] = frozenset(),
        where: Callable[[int], bool] | None = None,
        exclude: frozenset[bytes] = frozenset(),
    ) -> RecallResult:
        """The best ``limit`` passages for ``query``: those whose item is not in ``in_view``
        (digests of the model's view, see :func:`item_digest`) first, then the exact phrase,
        then every word, then any of them, each by BM25; never those of the items in
        ``exclude`` (the message that asked). With ``where``, only those of the records it
        accepts (by their number in the rollout: a branch's). Blocking: call it off the event
        loop. Raises ``OSError``/``sqlite3.Error`` only when even an index in memory cannot be
        built."""
        with self._db_lock:
            if self._closed:
                return RecallResult([], False, "the conversation is closed")
            self._drain_safely(catch_up=True)
            try:
                return self._search(query, limit, in_view, where, exclude)
            except sqlite3.DatabaseError:
                self._rebuild("the search index was damaged and has been rebuilt")
                return self._search(query, limit, in_view, where, exclude)

    def _search(
        self,
        query: SearchQuery,
        limit: int,
        in_view: frozenset[bytes],
        where: Callable[[int], bool] | None,
        exclude: frozenset[bytes],
    ) -> RecallResult:
        conn = self._connection()
        chosen = ranked(conn, query, limit, in_view, where, exclude)
        hits: list[RecallHit] = []
        for rowid, digest, tier in chosen:
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
                    all_words=tier < ANY_WORDS,
                )
            )
        return RecallResult(hits, any(hit.all_words for hit in hits), self._note)

    # ------------------------------------------------------------------------ storage

    def _drain_safely(self, *, catch_up: bool) -> None:
        """Index the queue; a damaged file is rebuilt, an unwritable one replaced by an index
        in memory. Never raises for the index's own troubles."""
        try:
            self._drain(catch_up)
        except sqlite3.DatabaseError as exc:
            # What was queued is in the rollout already: the rebuilt index reads it there.
            try:
                if unwritable(exc) and not self._in_memory:
                    self._to_memory(exc)
                    self._drain(catch_up)  # the index in memory reads it now, as a rebuild does
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
        self._conn = open_memory()
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
        if self._records.count < before or not (resumed or self._checked):
            if not (catch_up or not resumed):
                return  # what was queued is in the rollout: the catch-up reads it there
            self._catch_up(conn)
        if not batch:
            return
        with transaction(conn):
            for seq, type, timestamp, payload in batch:
                if seq == self._records.count:
                    self._records.add(conn, seq, type, timestamp, payload)
            save_state(conn, self._records.count, self._records.turn)

    def _connection(self) -> sqlite3.Connection:
        """The database, opened (no record is read here: see :meth:`_drain`)."""
        if self._conn is not None:
            return self._conn
        if self._in_memory:
            self._conn = open_memory()
            self._reset_state()
            return self._conn
        try:
            conn = self._open_file()
        except sqlite3.DatabaseError as exc:
            if unwritable(exc):
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
        if resumed and self._records.count > known:  # an index of a longer (other) rollout
            self._close_connection()
            self._remove_file()
            self._note = "the search index did not match the conversation and was rebuilt"
            try:
                self._conn = self._open_file()
            except (OSError, sqlite3.DatabaseError) as exc:
                return self._to_memory(exc)
        return self._conn

    def _open_file(self) -> sqlite3.Connection:
        conn = open_file(self._path)
        try:
            self._records = RecordIndexer(*load_state(conn))
        except BaseException:
            conn.close()
            raise
        return conn

    def _to_memory(self, exc: Exception) -> sqlite3.Connection:
        self._close_connection()
        self._in_memory = True
        self._note = (
            f"the search index could not be saved beside the conversation ({words(exc)}); "
            "it was built in memory"
        )
        self._conn = open_memory()
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
            self._conn = open_memory()
        assert self._conn is not None
        self._catch_up(self._conn)

    def _catch_up(self, conn: sqlite3.Connection) -> None:
        """Index the rollout's records the index does not hold yet, from the file."""
        self._checked = True
        try:
            records, _warnings = read_rollout(self._rollout)
        except FileNotFoundError:
            return  # a new session: nothing written yet
        with transaction(conn):
            for seq in range(self._records.count, len(records)):
                record = records[seq]
                self._records.add(conn, seq, record.type, record.timestamp, record.payload)
            save_state(conn, self._records.count, self._records.turn)

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
        self._records = RecordIndexer()
        self._checked = False
