"""``RecallIndex`` on its own: a closed index, the one worker, and each trouble of its database
(damaged while searching, not writable, not buildable at all) answered in words, with the
search it was asked made again as asked. The tool's view of it is ``test_recall.py``'s."""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from app.core.items import user_message
from app.core.recall import index as index_module
from app.core.recall.index import RecallIndex, run_in_worker
from app.core.recall.query import build_query
from app.core.recall.results import RecallResult
from app.core.recall.searchable import item_digest
from app.core.recall.store import recall_index_path
from app.core.rollout.store import RolloutWriter

MESSAGES = [f"The otter number {n} swims in river {n}." for n in range(6)]


def rollout(tmp_path: Path) -> Path:
    path = tmp_path / "s.jsonl"
    with RolloutWriter(path) as writer:
        writer.append("session_meta", {"id": "s"})
        for n, text in enumerate(MESSAGES):
            writer.append("response_item", {"item": user_message(text), "turn_id": f"t{n}"})
    return path


def search(index: RecallIndex, **options: Any) -> RecallResult:
    query = build_query("otter river")
    assert query is not None
    return index.search(query, options.pop("limit", 10), **options)


def in_memory(why: str) -> str:
    """The note of an index kept in memory because its file could not be written."""
    return (
        f"the search index could not be saved beside the conversation ({why}); it was built "
        "in memory"
    )


def counting_reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The rollouts the index reads from now on, in order."""
    reads: list[Path] = []
    real = index_module.read_rollout

    def read_rollout(rollout_path: Path) -> Any:
        reads.append(rollout_path)
        return real(rollout_path)

    monkeypatch.setattr(index_module, "read_rollout", read_rollout)
    return reads


def texts(result: RecallResult) -> list[str]:
    return [hit.text for hit in result.hits]


def test_a_closed_index_finds_nothing_and_says_why(tmp_path: Path) -> None:
    index = RecallIndex(rollout(tmp_path))
    assert len(search(index).hits) == 6
    index.close()
    assert search(index) == RecallResult([], False, "the conversation is closed")
    index.close()  # closing again is harmless


def test_the_worker_is_a_daemon_that_outlives_a_failing_job(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken() -> None:
        raise RuntimeError("boom")

    done = threading.Event()
    with caplog.at_level(logging.ERROR, logger=index_module.__name__):
        run_in_worker(broken)
        run_in_worker(done.set)
        assert done.wait(timeout=60)  # a hang guard only
    (worker,) = [t for t in threading.enumerate() if t.name == "recall-index"]
    assert worker.daemon  # never holds up the process's exit
    assert [r.getMessage() for r in caplog.records] == [
        "The recall index failed to index new records"
    ]


def _fails_once(monkeypatch: pytest.MonkeyPatch, error: Exception) -> list[tuple[Any, ...]]:
    """``ranked`` raises ``error`` at its first call; every call's arguments are kept."""
    real = index_module.ranked
    calls: list[tuple[Any, ...]] = []

    def ranked(*args: Any) -> Any:
        calls.append(args[1:])
        if len(calls) == 1:
            raise error
        return real(*args)

    monkeypatch.setattr(index_module, "ranked", ranked)
    return calls


def test_a_database_error_while_searching_rebuilds_and_asks_the_same_search_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = rollout(tmp_path)
    seen = frozenset({item_digest(user_message(MESSAGES[0]))})
    gone = frozenset({item_digest(user_message(MESSAGES[1]))})
    options: dict[str, Any] = {
        "limit": 3,
        "in_view": seen,
        "exclude": gone,
        "where": lambda seq: seq != 3,
    }
    expected = search(RecallIndex(path), **options)
    assert len(expected.hits) == 3 and expected.note == ""
    calls = _fails_once(monkeypatch, sqlite3.DatabaseError("database disk image is malformed"))
    fresh = RecallIndex(path)
    result = search(fresh, **options)
    assert texts(result) == texts(expected)
    assert [hit.in_view for hit in result.hits] == [hit.in_view for hit in expected.hits]
    assert result.note == "the search index was damaged and has been rebuilt"
    assert calls[0] == calls[1]  # the same query, limit, view, filter and exclusions
    assert recall_index_path(path).exists()  # rebuilt as a file


def _failing_add(monkeypatch: pytest.MonkeyPatch, error: Exception) -> None:
    """Indexing a record raises ``error`` once."""
    from app.core.recall.records import RecordIndexer

    real = RecordIndexer.add
    failed: list[bool] = []

    def add(self: RecordIndexer, *args: Any) -> None:
        if not failed:
            failed.append(True)
            raise error
        real(self, *args)

    monkeypatch.setattr(RecordIndexer, "add", add)


@pytest.mark.parametrize(
    ("error", "note"),
    [
        # The file cannot be written: the index moves to memory and reads the rollout there.
        (
            sqlite3.OperationalError("attempt to write a readonly database"),
            in_memory("attempt to write a readonly database"),
        ),
        # The file is damaged: rebuilt from the rollout.
        (
            sqlite3.DatabaseError("database disk image is malformed"),
            "the search index was damaged and has been rebuilt",
        ),
    ],
)
def test_a_database_failing_while_indexing_is_replaced_and_the_search_still_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: Exception, note: str
) -> None:
    _failing_add(monkeypatch, error)
    result = search(RecallIndex(rollout(tmp_path)))
    assert len(result.hits) == 6 and result.note == note


def test_an_index_that_cannot_be_built_at_all_says_nothing_can_be_searched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _failing_add(monkeypatch, sqlite3.DatabaseError("database disk image is malformed"))

    def unreadable(path: Path) -> Any:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(index_module, "read_rollout", unreadable)
    index = RecallIndex(rollout(tmp_path))
    result = search(index)
    assert result.hits == []
    assert result.note == (
        "the search index could not be built ([Errno 5] Input/output error); nothing can be "
        "searched"
    )


def test_a_rebuild_clears_what_the_damaged_file_left_beside_it(tmp_path: Path) -> None:
    path = rollout(tmp_path)
    index_path = recall_index_path(path)
    index_path.write_bytes(b"this is not a database" * 200)
    leftovers = [Path(f"{index_path}{suffix}") for suffix in ("-journal", "-wal", "-shm")]
    for leftover in leftovers:
        leftover.write_bytes(b"stale")
    result = search(RecallIndex(path))
    assert len(result.hits) == 6
    assert result.note == "the search index was damaged and has been rebuilt"
    assert not any(
        leftover.exists() and leftover.read_bytes() == b"stale" for leftover in leftovers
    )


def test_an_index_of_a_longer_rollout_is_rebuilt_for_this_one(tmp_path: Path) -> None:
    path = rollout(tmp_path)
    assert len(search(RecallIndex(path)).hits) == 6  # an index of all seven records
    for records, note in (
        (5, "the search index did not match the conversation and was rebuilt"),
        (7, ""),  # as many as it holds: kept
    ):
        index = RecallIndex(path)
        with RolloutWriter(path) as writer:
            index.follow(writer, records=records)
            assert search(index).note == note
        index.close()


def test_flush_brings_a_resumed_index_up_to_date_now(tmp_path: Path) -> None:
    from app.core.recall.store import load_state

    path = rollout(tmp_path)
    index = RecallIndex(path)
    with RolloutWriter(path) as writer:
        index.follow(writer, records=7)  # resumed: nothing read until it is used
        index.flush()
        with sqlite3.connect(index.path) as conn:
            assert load_state(conn)[0] == 7
    index.close()
    index.flush()  # closed: nothing to do, no error


def test_a_session_opened_without_a_writer_is_indexed_in_memory(tmp_path: Path) -> None:
    path = rollout(tmp_path)
    index = RecallIndex(path)
    index.follow(None, records=7)
    assert len(search(index).hits) == 6
    assert not recall_index_path(path).exists()


def test_the_rollout_is_read_once_then_only_what_is_appended_is_indexed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = rollout(tmp_path)
    reads = counting_reads(monkeypatch)
    index = RecallIndex(path)
    with RolloutWriter(path) as writer:
        index.follow(writer, records=7)
        assert len(search(index).hits) == 6
        writer.append(
            "response_item",
            {
                "item": {
                    "type": "function_call_output",
                    "call_id": "c9",
                    "output": "otter river log",
                },
                "turn_id": "t9",
            },
        )
        result = search(index)
    assert reads == [path]
    (hit,) = [hit for hit in result.hits if hit.role == "tool"]
    assert hit.call_id == "c9" and hit.text == "otter river log"
    last = json.loads(path.read_text().splitlines()[-1])
    assert hit.time == last["timestamp"] and hit.seq == 7
    index.close()


def test_an_index_file_that_cannot_be_opened_is_kept_in_memory_saying_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = rollout(tmp_path)

    def refused(index_path: Path) -> Any:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(index_module, "open_file", refused)
    result = search(RecallIndex(path))
    assert len(result.hits) == 6
    assert result.note == in_memory("permission denied")


def test_an_index_whose_place_is_taken_says_it_cannot_be_opened(tmp_path: Path) -> None:
    path = rollout(tmp_path)
    recall_index_path(path).mkdir()  # a folder where the file would be
    result = search(RecallIndex(path))
    assert len(result.hits) == 6
    assert result.note == in_memory("unable to open database file")


def test_a_new_session_s_rollout_is_read_once_however_often_it_is_searched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "new.jsonl"
    reads = counting_reads(monkeypatch)
    index = RecallIndex(path)
    with RolloutWriter(path) as writer:
        index.follow(writer)
        for n, text in enumerate(MESSAGES):
            writer.append("response_item", {"item": user_message(text), "turn_id": f"t{n}"})
            assert len(search(index).hits) == n + 1
    assert reads == [path]
    index.close()
