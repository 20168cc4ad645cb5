"""The session index: sidebar list from index.json, rebuilt from rollouts when needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core import items
from app.core.rollout import writer as rollout_module
from app.core.rollout.store import RolloutWriter, read_rollout, repair_tail, rollout_path
from app.core.sessions import summary as session_index_module
from app.core.sessions.index import SessionIndex, SessionInfo, make_title


def write_session(
    sessions_dir: Path,
    session_id: str,
    messages: list[tuple[str, str]],
    *,
    extra: list[tuple[str, dict[str, object]]] | None = None,
) -> Path:
    """A rollout with a session_meta record, injected context, then the given messages."""
    path = rollout_path(sessions_dir, session_id)
    with RolloutWriter(path) as writer:
        writer.append("session_meta", {"id": session_id, "timestamp": "2024-05-01T10:00:00.000Z"})
        writer.append(
            "response_item", items.user_message("<environment_context>cwd</environment_context>")
        )
        for role, text in messages:
            item = items.user_message(text) if role == "user" else items.assistant_message(text)
            writer.append("response_item", item)
        for kind, payload in extra or []:
            writer.append(kind, payload)
    return path


def info(session_id: str, updated_at: str, title: str = "t") -> SessionInfo:
    return SessionInfo(
        id=session_id, title=title, created_at="2024-01-01T00:00:00.000Z", updated_at=updated_at
    )


def test_empty_directory_gives_an_empty_list(tmp_path: Path) -> None:
    index = SessionIndex(tmp_path / "sessions")
    assert index.list() == []
    assert index.warnings == []


def test_upsert_lists_newest_first_and_persists(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    index = SessionIndex(sessions)
    for session_id, updated in [("a", "2024-01-02"), ("b", "2024-01-03"), ("c", "2024-01-01")]:
        write_session(sessions, session_id, [("user", session_id)])
        index.upsert(info(session_id, updated))
    index.upsert(info("a", "2024-02-01", title="A again"))  # replaces, moves to the top

    assert [s.id for s in index.list()] == ["a", "b", "c"]
    assert index.get("a") == info("a", "2024-02-01", title="A again")
    assert index.get("zzz") is None

    on_disk = json.loads((sessions / "index.json").read_text(encoding="utf-8"))
    entry = next(e for e in on_disk["sessions"] if e["id"] == "a")
    assert {"id", "title", "created_at", "updated_at", "tokens", "message_count", "path"} <= set(
        entry
    )
    reloaded = SessionIndex(sessions)
    assert [s.id for s in reloaded.list()] == ["a", "b", "c"]
    assert reloaded.get("a") == info("a", "2024-02-01", title="A again")


def test_list_is_served_from_the_index_not_the_rollouts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sessions = tmp_path / "sessions"
    for n in range(20):
        write_session(sessions, f"s{n:03}", [("user", f"question {n}")])
    SessionIndex(sessions)  # builds index.json

    def no_reads(path: Path) -> object:
        raise AssertionError(f"rollout {path.name} was read")

    monkeypatch.setattr(session_index_module, "read_rollout", no_reads)
    index = SessionIndex(sessions)
    assert len(index.list()) == 20


def test_returned_entries_are_copies(tmp_path: Path) -> None:
    index = SessionIndex(tmp_path)
    write_session(tmp_path, "a", [])
    index.upsert(info("a", "2024-01-01", title="kept"))
    index.list()[0].title = "changed"
    got = index.get("a")
    assert got is not None
    got.title = "changed"
    assert index.get("a") == info("a", "2024-01-01", title="kept")


def test_rename_updates_index_and_survives_rebuild(tmp_path: Path) -> None:
    path = write_session(tmp_path, "a", [("user", "first question")])
    index = SessionIndex(tmp_path)
    before = index.get("a")
    assert before is not None and before.title == "first question"

    index.rename("a", "  My project  ")

    after = index.get("a")
    assert after is not None
    assert after.title == "My project"
    assert after.updated_at == before.updated_at  # a rename is not activity
    records, _ = read_rollout(path)
    assert (records[-1].type, records[-1].payload) == ("session_title", {"title": "My project"})
    (tmp_path / "index.json").unlink()
    assert SessionIndex(tmp_path).get("a") == after


def test_rename_rejects_unknown_session_and_empty_title(tmp_path: Path) -> None:
    write_session(tmp_path, "a", [("user", "q")])
    index = SessionIndex(tmp_path)
    with pytest.raises(KeyError):
        index.rename("nope", "x")
    with pytest.raises(ValueError):
        index.rename("a", "   ")
    assert index.get("a") is not None and index.get("a").title == "q"  # type: ignore[union-attr]


def test_delete_moves_the_rollout_to_trash(tmp_path: Path) -> None:
    path = write_session(tmp_path, "a", [("user", "keep me")])
    content = path.read_bytes()
    index = SessionIndex(tmp_path)

    moved = index.delete("a")

    assert moved == tmp_path / "trash" / "a.jsonl"
    assert moved.read_bytes() == content
    assert not path.exists()
    assert index.get("a") is None
    assert SessionIndex(tmp_path).get("a") is None  # gone from the saved index, not rebuilt back


def test_deleting_the_same_id_twice_keeps_both_files(tmp_path: Path) -> None:
    write_session(tmp_path, "a", [("user", "one")])
    index = SessionIndex(tmp_path)
    first = index.delete("a")
    write_session(tmp_path, "a", [("user", "two")])
    index.upsert(info("a", "2024-01-01"))
    second = index.delete("a")
    assert first != second
    assert first.exists() and second.exists()


def test_delete_moves_the_sessions_attachments_to_trash_with_it(tmp_path: Path) -> None:
    path = write_session(tmp_path, "a", [("user", "see the picture")])
    files = path.with_name("a.files")
    files.mkdir()
    (files / "abc.png").write_bytes(b"png bytes")
    index = SessionIndex(tmp_path)

    moved = index.delete("a")

    assert not files.exists()
    assert (moved.with_name("a.files") / "abc.png").read_bytes() == b"png bytes"
    # Deleted again under the same id: both sets of attachments are kept, each by its file.
    path = write_session(tmp_path, "a", [("user", "another")])
    path.with_name("a.files").mkdir()
    (path.with_name("a.files") / "def.txt").write_text("notes")
    index.upsert(info("a", "2024-01-01"))
    second = index.delete("a")
    assert (second.with_name(second.stem + ".files") / "def.txt").read_text() == "notes"
    assert (moved.with_name("a.files") / "abc.png").exists()


def test_delete_unknown_session_raises(tmp_path: Path) -> None:
    index = SessionIndex(tmp_path)
    with pytest.raises(KeyError):
        index.delete("nope")


def test_search_by_title_and_by_message_content(tmp_path: Path) -> None:
    write_session(tmp_path, "a", [("user", "Plan the trip"), ("assistant", "Visit KYOTO first")])
    write_session(tmp_path, "b", [("user", "Fix the build"), ("assistant", "Done.")])
    write_session(
        tmp_path,
        "c",
        [("user", "unrelated")],
        # The word appears only in non-message records: no match.
        extra=[("event", {"type": "error", "message": "kyoto"})],
    )
    index = SessionIndex(tmp_path)

    assert [s.id for s in index.search("FIX THE")] == ["b"]  # title, any case
    assert [s.id for s in index.search("kyoto")] == ["a"]  # assistant content
    assert [s.id for s in index.search("environment_context")] == []  # injected, not a message
    assert {s.id for s in index.search("")} == {"a", "b", "c"}


def test_search_matches_text_with_json_escaped_characters(tmp_path: Path) -> None:
    write_session(tmp_path, "a", [("user", "hi"), ("assistant", 'say "yes"\nthen go')])
    index = SessionIndex(tmp_path)
    assert [s.id for s in index.search('"yes"\nthen')] == ["a"]


def test_rebuild_when_index_is_missing(tmp_path: Path) -> None:
    long_text = "word " * 40
    write_session(
        tmp_path,
        "a",
        [("user", long_text), ("assistant", "answer"), ("user", "second")],
        extra=[("event", {"type": "token_count", "total": 1234})],
    )
    write_session(tmp_path, "empty", [])

    index = SessionIndex(tmp_path)

    a = index.get("a")
    assert a is not None
    assert a.title == make_title(long_text)
    assert len(a.title) == 80 and a.title.endswith("…")
    assert a.message_count == 3  # injected context not counted
    assert a.tokens == 1234
    assert a.created_at == "2024-05-01T10:00:00.000Z"
    empty = index.get("empty")
    assert empty is not None and empty.title == "New conversation"
    assert (tmp_path / "index.json").exists()


def test_rebuild_when_index_is_corrupt(tmp_path: Path) -> None:
    write_session(tmp_path, "a", [("user", "hello")])
    (tmp_path / "index.json").write_text("{ this is not json", encoding="utf-8")

    index = SessionIndex(tmp_path)

    got = index.get("a")
    assert got is not None and got.title == "hello"
    assert any("rebuilt" in warning for warning in index.warnings)
    assert json.loads((tmp_path / "index.json").read_text(encoding="utf-8"))["sessions"]


def test_rebuild_when_index_has_wrong_shape(tmp_path: Path) -> None:
    write_session(tmp_path, "a", [("user", "hello")])
    (tmp_path / "index.json").write_text(json.dumps({"sessions": [{"id": 3}]}), encoding="utf-8")
    got = SessionIndex(tmp_path).get("a")
    assert got is not None and got.title == "hello"


def test_load_picks_up_rollouts_the_index_missed(tmp_path: Path) -> None:
    write_session(tmp_path, "a", [("user", "one")])
    SessionIndex(tmp_path)
    # The app crashed after writing rollouts but before updating the index.
    write_session(tmp_path, "b", [("user", "two")])
    with RolloutWriter(rollout_path(tmp_path, "a")) as writer:
        writer.append("response_item", items.assistant_message("reply"))
    rollout_path(tmp_path, "gone").write_text("")
    SessionIndex(tmp_path)
    rollout_path(tmp_path, "gone").unlink()

    index = SessionIndex(tmp_path)

    assert {s.id for s in index.list()} == {"a", "b"}
    a = index.get("a")
    assert a is not None and a.message_count == 2


def test_grown_rollout_is_updated_from_its_appended_records_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_session(tmp_path, "a", [])
    before = SessionIndex(tmp_path).get("a")
    assert before is not None and before.title == "New conversation"
    # The new records are written later than the first read (a fixed clock, not a race).
    monkeypatch.setattr(rollout_module, "utc_timestamp", lambda: "2099-01-01T00:00:00.000Z")
    with RolloutWriter(path) as writer:
        writer.append("response_item", {"item": items.user_message("late question")})
        writer.append("event", {"type": "token_count", "total": 77})

    def no_full_reads(path: Path) -> object:
        raise AssertionError("the whole rollout was re-read")

    monkeypatch.setattr(session_index_module, "read_rollout", no_full_reads)
    after = SessionIndex(tmp_path).get("a")

    assert after is not None
    assert (after.title, after.message_count, after.tokens) == ("late question", 1, 77)
    assert after.updated_at > before.updated_at
    assert after.created_at == before.created_at


def test_grown_rollout_after_a_torn_line_is_read_in_full(tmp_path: Path) -> None:
    path = write_session(tmp_path, "a", [("user", "one")])
    with open(path, "ab") as file:
        file.write(b'{"type": "resp')  # torn write, then the index was saved
    SessionIndex(tmp_path).upsert(info("a", "2024-01-01", title="one"))
    repair_tail(path)
    with RolloutWriter(path) as writer:
        writer.append("response_item", items.assistant_message("two"))

    got = SessionIndex(tmp_path).get("a")

    assert got is not None and got.message_count == 2


def test_trash_is_not_listed_on_rebuild(tmp_path: Path) -> None:
    write_session(tmp_path, "a", [("user", "one")])
    SessionIndex(tmp_path).delete("a")
    (tmp_path / "index.json").unlink()
    assert SessionIndex(tmp_path).list() == []


def test_title_rules() -> None:
    assert make_title("  hello\n  world ") == "hello world"
    assert make_title("") == "New conversation"
    assert make_title("x" * 80) == "x" * 80
    assert make_title("x" * 81) == "x" * 79 + "…"


def test_rebuild_reads_token_counts_as_the_core_writes_them(tmp_path: Path) -> None:
    # The session writes {"kind": "token_count", "total": …} event records.
    write_session(
        tmp_path, "s", [("user", "hello")], extra=[("event", {"kind": "token_count", "total": 321})]
    )
    info = SessionIndex(tmp_path).get("s")
    assert info is not None and info.tokens == 321
