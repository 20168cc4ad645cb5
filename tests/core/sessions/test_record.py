"""The session's record on disk (``app.core.sessions.record``): the meta record first and without
the key, read-only refusals in words, titles, and the session list's entry."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core import CoreConfig
from app.core import protocol as p
from app.core.conversation.transcript import Transcript
from app.core.conversation.tree import TurnTree
from app.core.items import user_message
from app.core.rollout.store import RolloutWriter
from app.core.sessions.index import SessionIndex
from app.core.sessions.record import (
    TITLE_LENGTH,
    ReadOnlySession,
    SessionRecord,
    title_from,
)

KEY = "sk-record-SECRET-1234"


class Index:
    """The recall index's part the record uses: it follows the writer once one is open."""

    def __init__(self) -> None:
        self.followed: list[tuple[RolloutWriter | None, int | None]] = []

    def follow(self, writer: RolloutWriter | None, *, records: int | None = None) -> None:
        self.followed.append((writer, records))


def make(tmp_path: Path, transcript: Transcript | None = None) -> tuple[SessionRecord, Index, list[p.Event]]:
    config = CoreConfig(
        base_url=f"http://localhost:1/v1?key={KEY}", api_key=KEY, model="m",
        data_dir=tmp_path / "data",
    )
    index = Index()
    events: list[p.Event] = []
    shown = transcript or Transcript()
    record = SessionRecord(
        "sid", config.sessions_dir / "sid.jsonl", config=lambda: config,
        recall_index=index, tree=TurnTree(), transcript=lambda: shown, usage=lambda: 1234,
        emit=events.append,
    )
    return record, index, events


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_first_record_opens_the_file_with_the_meta_first_and_no_key(tmp_path: Path) -> None:
    record, index, _ = make(tmp_path)
    assert record.writer is None and not record.path.exists()  # nothing written yet
    record.record("event", {"kind": "warning", "message": "hello"})
    written = lines(record.path)
    assert [line["type"] for line in written] == ["session_meta", "event"]
    assert written[0]["payload"]["id"] == "sid"
    assert KEY not in record.path.read_text()
    assert index.followed == [(record.writer, 0)]  # a fresh file: the index starts at 0
    record.close()


def test_a_read_only_session_refuses_every_write_in_words(tmp_path: Path) -> None:
    record, _, _ = make(tmp_path)
    record.read_only = "Another Coco writes this conversation."
    with pytest.raises(ReadOnlySession, match="Another Coco"):
        record.record("event", {})
    assert not record.path.exists()


def test_rename_records_the_title_and_refuses_an_empty_one(tmp_path: Path) -> None:
    record, _, _ = make(tmp_path)
    with pytest.raises(ValueError):
        record.rename("   ")
    assert record.rename("  Trip plans ") == "Trip plans"
    assert record.title == "Trip plans"
    assert lines(record.path)[-1]["payload"] == {"title": "Trip plans"}
    record.close()


async def test_the_session_list_entry_takes_its_title_from_the_first_message(
    tmp_path: Path,
) -> None:
    transcript = Transcript()
    record, _, _ = make(tmp_path, transcript)
    await record.flush_in_worker()  # nothing written: no entry for a conversation not saved
    assert SessionIndex(record.path.parent).get("sid") is None
    item = user_message("Where  do\nwe go?")
    record.record("response_item", {"item": item, "turn_id": "t1"})
    transcript.add_item(item, "t1")
    await record.flush_in_worker()
    info = SessionIndex(record.path.parent).get("sid")
    assert info is not None
    assert (info.title, info.tokens) == ("Where do we go?", 1234)
    record.close()


def test_a_long_first_message_makes_a_cut_title() -> None:
    assert title_from(None) == title_from("  ") == "New conversation"
    title = title_from("word " * 100)
    assert len(title) == TITLE_LENGTH and title.endswith("…")


async def test_the_turn_end_flush_writes_in_a_worker_thread_and_reports_on_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    transcript = Transcript()
    record, _, events = make(tmp_path, transcript)
    item = user_message("Plan the trip")
    record.record("response_item", {"item": item, "turn_id": "t1"})
    transcript.add_item(item, "t1")
    writers: list[threading.Thread] = []
    upsert = SessionIndex.upsert

    def watched(index: SessionIndex, info: Any) -> None:
        writers.append(threading.current_thread())
        upsert(index, info)

    monkeypatch.setattr(SessionIndex, "upsert", watched)
    await record.flush_in_worker()
    # The index file is rewritten off the loop's thread, and is up to date once awaited.
    assert writers and threading.main_thread() not in writers
    info = SessionIndex(record.path.parent).get("sid")
    assert info is not None and info.title == "Plan the trip"
    assert events == []

    def refuse(index: SessionIndex, info: Any) -> None:
        raise PermissionError("read-only folder")

    monkeypatch.setattr(SessionIndex, "upsert", refuse)
    await record.flush_in_worker()
    # What went wrong is said as an event, in words; the session goes on.
    assert [type(event).__name__ for event in events] == ["Warning"]
    assert "Could not update the session list" in events[0].message  # type: ignore[union-attr]
    record.close()
