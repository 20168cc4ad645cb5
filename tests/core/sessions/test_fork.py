"""``write_fork``: the lines of a path copied byte for byte, read once, listed without being
read again (issue 36)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core.config import CoreConfig
from app.core.conversation.tree import TurnTree
from app.core.rollout.reader import read_rollout
from app.core.sessions import fork as fork_module
from app.core.sessions.fork import ForkError, write_fork
from app.core.sessions.index import SessionIndex


def _line(kind: str, payload: dict[str, Any], record_id: str | None = None,
          stamp: str = "2026-01-01T00:00:00.000Z") -> bytes:
    record: dict[str, Any] = {"timestamp": stamp, "type": kind, "payload": payload}
    if record_id is not None:
        record["id"] = record_id
    return json.dumps(record).encode() + b"\n"


def _message(role: str, text: str) -> dict[str, Any]:
    kind = "input_text" if role == "user" else "output_text"
    return {"item": {"type": "message", "role": role,
                     "content": [{"type": kind, "text": text}]}}


def _source(folder: Path, tail: bytes = b"") -> tuple[Path, TurnTree, list[bytes]]:
    """A session with turns t1 → t2 and t1 → t3 (an edit of t2, active), some lines written
    as no writer of ours would (keys in another order, no id, spaces): copied as they are."""
    lines = [
        _line("session_meta", {"id": "src"}, "m0"),
        _line("session_title", {"title": "Soil"}, "m1"),
        _line("turn_context", {"turn_id": "t1", "parent": None}, "a1"),
        (
            b'{"type": "response_item", "payload": {"item": {"type": "message", "role": '
            b'"user", "content": [{"type": "input_text", "text": "q1"}]}}, '
            b'"timestamp": "2026-01-01T00:00:01.000Z"}\n'
        ),
        _line("response_item", _message("assistant", "A1"), "a3", "2026-01-01T00:00:02.000Z"),
        _line("event", {"kind": "token_count", "total": 120}, "a4"),
        _line("turn_context", {"turn_id": "t2", "parent": "t1"}, "b1"),
        _line("response_item", _message("user", "q2"), "b2"),
        _line("event", {"kind": "token_count", "total": 999}, "b3"),
        _line("turn_context", {"turn_id": "t3", "parent": "t1", "branch_reason": "edit"}, "c1"),
        _line("response_item", _message("user", "q2, edited"), "c2", "2026-01-01T00:00:09.000Z"),
        _line("branch_switched", {"turn_id": "t3"}, "c3"),
    ]
    path = folder / "src.jsonl"
    path.write_bytes(b"".join(lines) + tail)
    tree = _tree_of(path)
    return path, tree, lines


def _tree_of(path: Path) -> TurnTree:
    """The tree of ``path``, noted as a session notes it when it opens the file."""
    tree, told = TurnTree(), []
    records, _warnings = read_rollout(path, lines=told.append)
    for record in records:
        tree.note(record.type, record.payload, record.line_no)
    tree.read_to(*told)  # the lines after the last record, whatever they hold
    return tree


@pytest.fixture
def config(tmp_path: Path) -> CoreConfig:
    return CoreConfig(data_dir=tmp_path, model="demo")


def _fork_lines(config: CoreConfig, fork_id: str) -> list[bytes]:
    return (config.sessions_dir / f"{fork_id}.jsonl").read_bytes().splitlines(keepends=True)


def test_the_paths_lines_are_copied_byte_for_byte(config: CoreConfig) -> None:
    config.sessions_dir.mkdir(parents=True)
    path, tree, lines = _source(config.sessions_dir)
    made = write_fork(path, config, source_id="src", turn_id="t3", title="Soil", tree=tree)
    copied = _fork_lines(config, made.session_id)
    meta = json.loads(copied[0])
    assert meta["type"] == "session_meta"
    assert meta["payload"]["forked_from"] == {"session_id": "src", "turn_id": "t3"}
    assert json.loads(copied[1])["payload"] == {"title": "Soil (fork)"}
    # t1's and t3's lines, as they were (the one without an id keeps none); t2's and the
    # source's own meta, title and branch record are not copied.
    assert copied[2:] == [*lines[2:6], *lines[9:11]]

    at_t2 = write_fork(path, config, source_id="src", turn_id="t2", title="Soil", tree=tree)
    assert _fork_lines(config, at_t2.session_id)[2:] == lines[2:9]


def test_a_last_line_without_its_newline_gets_one(config: CoreConfig) -> None:
    config.sessions_dir.mkdir(parents=True)
    path, tree, lines = _source(
        config.sessions_dir, tail=_line("response_item", _message("assistant", "A3"), "c4")[:-1]
    )
    made = write_fork(path, config, source_id="src", turn_id="t3", title=None, tree=tree)
    copied = _fork_lines(config, made.session_id)
    assert copied[-1] == _line("response_item", _message("assistant", "A3"), "c4")
    assert copied[-2] == lines[10]
    assert [r.payload for r in read_rollout(config.sessions_dir / f"{made.session_id}.jsonl")[0]][
        -1
    ] == _message("assistant", "A3")


def test_bad_and_repeated_lines_are_left_behind(config: CoreConfig) -> None:
    config.sessions_dir.mkdir(parents=True)
    path, _tree, lines = _source(config.sessions_dir)
    # A damaged line and a line saved twice: not records, so not copied, and the records
    # after them still line up with the tree's count.
    path.write_bytes(b"".join([*lines[:4], b"{not json\n", lines[4], lines[4], *lines[5:]]))
    tree = _tree_of(path)
    made = write_fork(path, config, source_id="src", turn_id="t3", title=None, tree=tree)
    assert _fork_lines(config, made.session_id)[2:] == [*lines[2:6], *lines[9:11]]


def test_the_list_entry_comes_from_what_was_copied_and_the_fork_is_not_read_again(
    config: CoreConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    config.sessions_dir.mkdir(parents=True)
    path, tree, _lines = _source(config.sessions_dir)
    SessionIndex(config.sessions_dir)  # the list exists, as the app's sidebar keeps it
    read: list[str] = []
    real = fork_module.SessionIndex._add_from_rollout

    def noted(index: SessionIndex, rollout: Path) -> None:
        read.append(rollout.stem)
        real(index, rollout)

    monkeypatch.setattr(fork_module.SessionIndex, "_add_from_rollout", noted)
    made = write_fork(path, config, source_id="src", turn_id="t3", title="Soil", tree=tree)
    assert made.session_id not in read  # its entry is made from the records it copied
    monkeypatch.undo()
    entry = SessionIndex(config.sessions_dir).get(made.session_id)
    assert entry is not None
    assert (entry.title, entry.forked_from, entry.message_count, entry.tokens) == (
        "Soil (fork)", "src", 3, 120,  # q1, A1, the edited q2; t2's count is not on the path
    )
    assert entry.updated_at == "2026-01-01T00:00:09.000Z"
    # The same entry the list makes when it reads the fork's file (a rebuild agrees).
    from app.core.sessions.summary import summarize_rollout

    read_back = summarize_rollout(config.sessions_dir / f"{made.session_id}.jsonl")
    assert (read_back.title, read_back.forked_from, read_back.message_count, read_back.tokens,
            read_back.updated_at) == (entry.title, entry.forked_from, entry.message_count,
                                      entry.tokens, entry.updated_at)


def test_an_unknown_turn_and_a_changed_file_are_refused_in_words(config: CoreConfig) -> None:
    config.sessions_dir.mkdir(parents=True)
    path, tree, _lines = _source(config.sessions_dir)
    with pytest.raises(ForkError, match="has no turn 'nope'"):
        write_fork(path, config, source_id="src", turn_id="nope", title=None, tree=tree)
    with path.open("ab") as file:
        file.write(_line("event", {"kind": "note"}, "z9"))  # a record the tree never noted
    with pytest.raises(ForkError, match="changed while it was open"):
        write_fork(path, config, source_id="src", turn_id="t3", title=None, tree=tree)
    assert sorted(p.name for p in config.sessions_dir.glob("*.jsonl")) == ["src.jsonl"]
