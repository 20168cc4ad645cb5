"""What a fork copies, read mostly from the lines' heads: the same list entry and stored files
as parsing every record gives, with only the records that say more parsed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.core.conversation.tree import TurnTree
from app.core.items import (
    ATTACHMENT,
    assistant_message,
    function_call,
    function_call_output,
    user_message,
)
from app.core.rollout.reader import read_rollout
from app.core.rollout.writer import RolloutWriter
from app.core.sessions import fork_path
from app.core.sessions.fork_path import NOT_COPIED, Kept, path_lines
from app.core.sessions.summary import SessionSummary


def _attached(item: dict[str, Any], name: str) -> dict[str, Any]:
    return {**item, "content": [*item["content"], {"type": ATTACHMENT, "file": name}]}


# (kind, payload, parsed by the fork): t1 then t2, as Coco's writer writes them.
RECORDS: list[tuple[str, dict[str, Any], bool]] = [
    ("session_meta", {"id": "src", "created_at": "2026-01-01T00:00:00.000Z"}, False),
    ("session_title", {"title": "Soil"}, False),
    ("turn_context", {"turn_id": "t1", "parent": None}, False),
    ("response_item", {"item": user_message("<environment_context>cwd</environment_context>")},
     True),  # injected: no message of the person's
    ("response_item", {"item": _attached(user_message("q1"), "aa.png")}, True),
    ("response_item", {"item": user_message("q1b, plain")}, False),
    ("response_item", {"item": user_message(" <environment_context>x")}, True),  # injected too
    ("response_item", {"item": user_message("éclair")}, True),  # beyond ASCII: parsed to tell
    ("response_item", {"item": assistant_message("A1")}, False),
    ("response_item", {"item": _attached(assistant_message("A1b"), "bb.txt")}, True),
    ("event", {"kind": "token_count", "total": 120}, False),
    ("response_item", {"item": function_call("read_file", "{}", "c1")}, True),
    ("response_item", {"item": function_call_output("c1", "text")}, True),
    ("event", {"kind": "item_pinned", "item_id": "x"}, False),
    ("compacted", {"message": "summary", "replacement_history": [
        _attached(user_message("kept"), "cc.pdf")]}, True),
    ("event", {"kind": "token_count", "total": 300}, True),
    ("event", {"kind": "token_count", "total": "n/a"}, True),  # says none: the one before counts
    ("branch_switched", {"turn_id": "t1"}, False),
    ("turn_context", {"turn_id": "t2", "parent": "t1"}, False),
    ("response_item", {"item": assistant_message("A2")}, False),
]


def _source(folder: Path) -> tuple[Path, TurnTree]:
    path = folder / "src.jsonl"
    with RolloutWriter(path) as writer:
        for kind, payload, _parsed in RECORDS:
            writer.append(kind, payload)
    tree = TurnTree()
    for record in read_rollout(path)[0]:
        tree.note(record.type, record.payload, record.line_no)
    return path, tree


def _parsing_all(path: Path) -> Kept:
    """What the fork's path holds, every record parsed (as forks were made before)."""
    summary = SessionSummary("fork")
    kept = Kept(summary)
    for record in read_rollout(path)[0]:
        if record.type not in NOT_COPIED:
            kept.see(record)
    return kept


def test_what_the_heads_tell_is_what_parsing_every_record_tells(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, tree = _source(tmp_path)
    parsed: list[int] = []
    real = fork_path.record_of

    def counted(data: Any, start: int, end: int, line_no: int) -> Any:
        parsed.append(line_no)
        return real(data, start, end, line_no)

    monkeypatch.setattr(fork_path, "record_of", counted)
    lines, kept = path_lines(path, tree, "t2", SessionSummary("fork"))
    whole = _parsing_all(path)
    assert (kept.summary.message_count, kept.summary.tokens, kept.summary.updated_at) == (
        whole.summary.message_count, whole.summary.tokens, whole.summary.updated_at,
    ) == (6, 300, whole.summary.updated_at)  # q1, q1b, éclair, A1, A1b, A2; 300 the last said
    assert kept.stored_names == whole.stored_names == ["aa.png", "", "bb.txt", "", "cc.pdf", ""]
    # Only the records that say more than their heads are parsed (the token counts from the last).
    expected = [n for n, (_k, _p, is_parsed) in enumerate(RECORDS, 1) if is_parsed]
    assert sorted(parsed) == expected and parsed[-2:] == [expected[-1], expected[-2]]
    # The lines copied are the path's, byte for byte: all but the meta, title and switch.
    source = path.read_bytes().splitlines(keepends=True)
    copied = [line for line, (kind, _p, _x) in zip(source, RECORDS, strict=True)
              if kind not in NOT_COPIED]
    assert lines == b"".join(copied)


def test_a_line_not_as_the_writer_writes_it_is_parsed(tmp_path: Path) -> None:
    path, tree = _source(tmp_path)
    data = path.read_bytes().replace(  # the assistant's A1 line with a space after its type
        b'"type":"response_item","payload":{"item":{"type":"message","role":"assistant",'
        b'"content":[{"type":"output_text","text":"A1"',
        b'"type": "response_item","payload":{"item":{"type":"message","role":"assistant",'
        b'"content":[{"type":"output_text","text":"A1"',
    )
    path.write_bytes(data)
    _lines, kept = path_lines(path, tree, "t2", SessionSummary("fork"))
    assert kept.summary.message_count == _parsing_all(path).summary.message_count == 6


def test_a_line_of_the_path_cut_short_is_refused(tmp_path: Path) -> None:
    from app.core.rollout.lines_at import LineChanged

    path, tree = _source(tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[8] = lines[8][:-30] + b'"}\n'  # A1's line: its head whole, its id gone
    path.write_bytes(b"".join(lines))
    with pytest.raises(LineChanged):
        path_lines(path, tree, "t2", SessionSummary("fork"))
