"""A session's list entry summed up from its rollout: title, times, messages, tokens; in full
or from the records appended since."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from app.core import items
from app.core.rollout.store import RolloutWriter
from app.core.sessions.summary import SessionInfo, _summarize_appended, summarize_rollout
from app.core.sessions.titles import NEW_CONVERSATION_TITLE, SESSION_TITLE_RECORD


def write(path: Path, records: list[tuple[str, dict[str, object]]]) -> None:
    with RolloutWriter(path) as writer:
        for kind, payload in records:
            writer.append(kind, payload)


def test_a_rollout_sums_up_to_its_entry(tmp_path: Path) -> None:
    path = tmp_path / "abc.jsonl"
    write(path, [
        ("session_meta", {"id": "abc", "created_at": "2024-05-01T10:00:00.000Z"}),
        ("response_item", items.user_message("<environment_context>x</environment_context>")),
        ("response_item", items.user_message("  First   question ")),
        ("response_item", {"item": items.assistant_message("An answer")}),  # wrapped form
        ("response_item", items.developer_message("not a conversation message")),
        ("event", {"kind": "token_count", "total": 1234}),
    ])
    info = summarize_rollout(path)
    assert (info.id, info.title, info.created_at) == (
        "abc", "First question", "2024-05-01T10:00:00.000Z",
    )
    assert (info.message_count, info.tokens) == (2, 1234)
    assert info.updated_at >= info.created_at


def test_a_rename_names_the_session_without_being_activity(tmp_path: Path) -> None:
    path = tmp_path / "abc.jsonl"
    write(path, [("response_item", items.user_message("question"))])
    before = summarize_rollout(path)
    write(path, [(SESSION_TITLE_RECORD, {"title": "  My name  "})])
    after = summarize_rollout(path)
    assert after.title == "My name"
    assert after.updated_at == before.updated_at


def test_an_empty_rollout_is_a_new_conversation_dated_by_its_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    info = summarize_rollout(path)
    assert info.title == NEW_CONVERSATION_TITLE
    assert info.created_at == info.updated_at and info.created_at.endswith("Z")
    assert info.message_count == 0


def test_appended_records_update_an_entry_without_the_earlier_ones(tmp_path: Path) -> None:
    path = tmp_path / "abc.jsonl"
    write(path, [("response_item", items.user_message("question"))])
    size = path.stat().st_size
    # An entry that disagrees with the file's start shows the earlier records are not read.
    known = SessionInfo("abc", "Kept title", "2020-01-01T00:00:00.000Z", "x", 5, 7)
    write(path, [
        ("response_item", items.assistant_message("answer")),
        ("event", {"type": "token_count", "total": 99}),
    ])
    info, read_to = _summarize_appended(known, path, size)
    assert read_to == path.stat().st_size
    assert dataclasses.astuple(info)[:3] == ("abc", "Kept title", "2020-01-01T00:00:00.000Z")
    assert (info.message_count, info.tokens) == (8, 99)
    with pytest.raises(ValueError, match="line boundary"):  # inside a line: read it all
        _summarize_appended(known, path, size - 1)
