"""What the carried notes are made from (issue 22, compaction): the session's reader gives what a
fresh read gives, reads the same history once and a longer one only where it goes on, and reads
again whatever history does not begin with the one it read."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.core.compaction.notes import material as notes_material
from app.core.compaction.notes.block import CarriedOver
from app.core.compaction.notes.material import NotesReader, read_notes_material
from app.core.compaction.prompts import summary_text
from app.core.compaction.rebuild import real_user_messages, select_with_notes
from app.core.items import (
    assistant_message,
    function_call,
    function_call_output,
    user_message,
)
from app.core.tokens.counter import approx_tokens

Item = dict[str, Any]


def _turn(i: int) -> list[Item]:
    call = f"call_{i}"
    return [
        user_message(f"Turn {i}: the service listens on port {8000 + i}. Never restart db{i}."),
        function_call("read_file", json.dumps({"path": f"src/module_{i}.py"}), call),
        function_call_output(call, f"contents of module {i}"),
        assistant_message(f"Answer {i}: done with src/module_{i}.py."),
    ]


def _history(turns: int, start: int = 0) -> list[Item]:
    items = [user_message("<environment_context>cwd=/srv</environment_context>")]
    for i in range(start, start + turns):
        items += _turn(i)
    return items


def _notes_block(*notes: str) -> Item:
    return CarriedOver(notes=notes, files_read=("old/file.py",)).item()


def _same(a: Any, b: Any) -> bool:
    return (
        list(a.messages) == list(b.messages)
        and a.previous == b.previous
        and list(a.tools) == list(b.tools)
        and a.traffic == b.traffic
    )


class _CountingScan:
    """Counts the items the reader reads (its ``_Scan.read`` watched)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.read = 0
        original = notes_material._Scan.read

        def read(scan: Any, items: Any) -> None:
            items = list(items)
            self.read += len(items)
            original(scan, items)

        monkeypatch.setattr(notes_material._Scan, "read", read)


def test_the_fresh_read_finds_the_users_messages_the_block_and_the_tool_traffic() -> None:
    history = [
        *_history(3),
        _notes_block("The budget is $12,500."),
        user_message(summary_text("an earlier summary")),
        *_turn(3),
    ]
    material = read_notes_material(history)
    assert list(material.messages) == real_user_messages(history)
    assert len(material.messages) == 4  # no context block, no notes block, no summary
    assert material.previous.notes == ("The budget is $12,500.",)
    assert len(material.tools) == 8
    assert material.traffic[1][0] == "src/module_3.py"  # newest first


def test_the_same_history_again_is_not_read_again(monkeypatch: pytest.MonkeyPatch) -> None:
    history = _history(20)
    watch = _CountingScan(monkeypatch)
    reader = NotesReader()
    first = reader(history)
    assert watch.read == len(history)
    again = reader(list(history))  # a copy of the list: the same items
    assert again is first and watch.read == len(history)
    assert _same(first, read_notes_material(history))


def test_a_longer_history_is_read_only_where_it_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    history = _history(10)
    reader = NotesReader()
    reader(history)
    watch = _CountingScan(monkeypatch)
    longer = [*history, _notes_block("Deploys must go through the pipeline."), *_turn(10)]
    got = reader(longer)
    assert watch.read == len(longer) - len(history)
    expected = read_notes_material(longer)
    assert _same(got, expected)
    # What came on is in it: the new block, the new call's file, the new message.
    assert got.previous.notes == ("Deploys must go through the pipeline.",)
    assert got.traffic[1][0] == "src/module_10.py"
    assert got.messages[-1].startswith("Turn 10:")


def test_a_history_that_does_not_begin_with_the_last_one_is_read_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reader = NotesReader()
    reader(_history(10))
    watch = _CountingScan(monkeypatch)
    # A compacted history (other items), a shorter one, one with an item replaced.
    compacted = [user_message("Turn 9: kept."), user_message(summary_text("the summary"))]
    got = reader(compacted)
    assert watch.read == len(compacted)
    assert _same(got, read_notes_material(compacted))
    shorter = _history(4)
    assert _same(reader(shorter), read_notes_material(shorter))
    changed = list(shorter)
    changed[1] = user_message("Turn 0, said otherwise: port 9999.")
    assert _same(reader(changed), read_notes_material(changed))
    assert reader(changed).messages[0] == "Turn 0, said otherwise: port 9999."


def test_an_equal_item_that_is_another_object_reads_the_same() -> None:
    history = _history(5)
    reader = NotesReader()
    first = reader(history)
    copied = json.loads(json.dumps(history))  # equal items, none the same object
    assert _same(reader(copied), first)


def test_select_with_notes_gives_the_same_with_the_reader_as_without() -> None:
    history = [*_history(60), _notes_block("The stand-up is at 9:30 am."), *_turn(60)]
    reader = NotesReader()
    plain = select_with_notes(history, 600, 300, approx_tokens)
    for _ in range(3):  # the first read, then the remembered one
        assert select_with_notes(history, 600, 300, approx_tokens, reader) == plain
    longer = [*history, *_turn(61), *_turn(62)]
    assert select_with_notes(longer, 600, 300, approx_tokens, reader) == select_with_notes(
        longer, 600, 300, approx_tokens
    )


def test_the_notes_of_the_leaving_messages_are_read_once_per_material(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from app.core.compaction.notes.cache import extract_many

    material = NotesReader()(_history(30))
    calls: list[int] = []

    def counted(texts: Any, limit: Any = None) -> Any:
        calls.append(len(texts))
        return extract_many(texts, limit)

    monkeypatch.setattr(notes_material, "extract_many", counted)
    first = material.notes_of(0, 20, 48)
    assert first == extract_many(list(material.messages[:20]), 48)
    first.append(("changed by the caller", 0))  # a copy: what is remembered stays
    assert material.notes_of(0, 20, 48) == extract_many(list(material.messages[:20]), 48)
    assert calls == [20]
    # Other messages, or another limit, are read.
    assert material.notes_of(20, 25, 48) == extract_many(list(material.messages[20:25]), 48)
    assert material.notes_of(0, 20, 4) == extract_many(list(material.messages[:20]), 4)
    assert calls == [20, 5, 20]


def test_the_users_messages_are_read_without_injected_blocks_and_with_their_attachments() -> None:
    from app.core.attachments.parts import stand_in
    from app.core.items import ATTACHMENT, INJECTED_PREFIXES

    part = {"type": ATTACHMENT, "kind": "file", "name": "notes.txt", "size": 12, "text": "x"}
    with_file = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "See the file."}, part],
    }
    history = [
        user_message(f"  \n{INJECTED_PREFIXES[0]}cwd</environment_context>"),
        with_file,
        user_message("Thanks."),
    ]
    material = read_notes_material(history)
    assert list(material.messages) == [f"See the file.\n\n{stand_in(part)}", "Thanks."]
    assert "notes.txt" in stand_in(part)


def test_a_history_given_as_a_tuple_is_read_once_too() -> None:
    reader = NotesReader()
    history = tuple(item for i in range(3) for item in _turn(i))
    first = reader(history)  # type: ignore[arg-type]
    assert reader(history) is first  # type: ignore[arg-type]
    fresh = read_notes_material(list(history))
    assert list(first.messages) == list(fresh.messages) and first.traffic == fresh.traffic
