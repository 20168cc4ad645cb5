"""Reading chosen lines of a rollout: only they are parsed, each with its span; a file that
does not hold the lines the tree says is refused before anything is handed out
(``app.core.rollout.lines_at``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core.rollout.lines_at import (
    Chosen,
    LineChanged,
    RolloutChanged,
    head_of,
    read_lines_at,
    read_spans_at,
    record_of,
)
from app.core.rollout.reader import DAMAGED_LINE_RECORD, HUGE_LINE_BYTES
from tests.core.rollout.test_reader import line


def chosen_of(path: Path, lines: list[int], total: int) -> list[tuple[int, object, bytes]]:
    """(line, payload, the line's bytes by its span) of each chosen record."""
    got: list[tuple[int, object, bytes]] = []

    def consume(data: bytes | bytearray, chosen: Chosen) -> None:
        for record, start, end in chosen:
            got.append((record.line_no, record.payload.get("n"), bytes(data[start:end])))

    read_lines_at(path, lines, total, consume)
    return got


def test_the_chosen_lines_come_with_their_spans_and_no_other_is_parsed(
    tmp_path: Path, parsed_lines: list[int]
) -> None:
    path = tmp_path / "s.jsonl"
    rows = [line("event", {"n": n}) for n in range(1, 7)]
    rows[1] = b"{not json, never parsed\n"
    path.write_bytes(b"".join(rows))
    got = chosen_of(path, [1, 3, 6], 6)
    assert got == [(n, n, rows[n - 1].rstrip(b"\n")) for n in (1, 3, 6)]
    assert parsed_lines == [1, 3, 6]


def test_an_unterminated_last_line_is_one_and_a_final_newline_ends_it(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    rows = [line("event", {"n": n}) for n in (1, 2)]
    path.write_bytes(rows[0] + rows[1].rstrip(b"\n"))
    assert chosen_of(path, [2], 2) == [(2, 2, rows[1].rstrip(b"\n"))]
    path.write_bytes(rows[0] + rows[1])
    assert chosen_of(path, [1], 2) == [(1, 1, rows[0].rstrip(b"\n"))]
    path.write_bytes(rows[0] + rows[1] + b"\n")  # a blank line after them is a third
    assert chosen_of(path, [], 3) == []


@pytest.mark.parametrize(
    ("lines", "total", "why"),
    [([1], 3, "holds 2 lines, not 3"), ([1], 1, "holds 2 lines, not 1"),
     ([4], 4, "ends before line 4")],
)
def test_a_file_with_other_lines_is_refused_before_any_record_is_handed_out(
    tmp_path: Path, lines: list[int], total: int, why: str
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(line("event", {"n": 1}) + line("event", {"n": 2}))
    handed: list[object] = []
    with pytest.raises(RolloutChanged, match=why):
        read_lines_at(path, lines, total, lambda data, chosen: handed.append(data))
    assert handed == []


@pytest.mark.parametrize("bad", [b"{not json", line(DAMAGED_LINE_RECORD, {}).rstrip(b"\n")])
def test_a_chosen_line_holding_no_record_stops_the_records_in_words(
    tmp_path: Path, bad: bytes
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(line("event", {"n": 1}) + bad + b"\n" + line("event", {"n": 3}))
    seen: list[object] = []

    def consume(_data: bytes | bytearray, chosen: Chosen) -> None:
        for record, _start, _end in chosen:
            seen.append(record.payload["n"])

    with pytest.raises(LineChanged, match="line 2 holds no record"):
        read_lines_at(path, [1, 2, 3], 3, consume)
    assert seen == [1]


def test_records_left_by_the_consumer_are_still_checked(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(line("event", {"n": 1}) + b"{not json\n")
    with pytest.raises(RolloutChanged, match="line 2"):
        read_lines_at(path, [1, 2], 2, lambda data, chosen: None)


def test_a_huge_chosen_line_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    text = "x" * (HUGE_LINE_BYTES + 10)
    path.write_bytes(line("event", {"n": 1}) + line("event", {"n": 2, "text": text}))
    got: list[str] = []

    def consume(_data: bytes | bytearray, chosen: Chosen) -> None:
        got.extend(record.payload["text"] for record, _start, _end in chosen)

    read_lines_at(path, [2], 2, consume)
    assert got == [text]


def test_a_blank_first_line_is_a_line_stepped_over_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    rows = [line("event", {"n": n}) for n in (2, 3)]
    path.write_bytes(b"\n" + rows[0] + rows[1].rstrip(b"\n"))
    assert chosen_of(path, [2], 3) == [(2, 2, rows[0].rstrip(b"\n"))]
    assert chosen_of(path, [], 3) == []  # counted from the start: the blank one is the first
    assert chosen_of(path, [3], 3) == [(3, 3, rows[1].rstrip(b"\n"))]
    with pytest.raises(RolloutChanged, match="holds 3 lines, not 2"):
        chosen_of(path, [2], 2)


def test_the_lines_after_the_last_chosen_one_are_counted_to_the_end(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    rows = [line("event", {"n": n}) for n in (1, 2, 3, 4)]
    path.write_bytes(b"".join(rows)[:-1])  # the last one unterminated
    assert chosen_of(path, [1], 4) == [(1, 1, rows[0].rstrip(b"\n"))]
    with pytest.raises(RolloutChanged, match="holds 4 lines, not 5"):
        chosen_of(path, [1], 5)


def test_a_chosen_blank_first_line_is_no_record_once_the_count_is_right(tmp_path: Path) -> None:
    """Its span is empty (not the rest of the file): the count is checked first, then the
    record it does not hold is said."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n" + line("event", {"n": 2}))
    with pytest.raises(RolloutChanged, match="line 1 holds no record"):
        chosen_of(path, [1, 2], 2)


# --- a line's head: its time and type read from its first bytes -----------------------------------


def _written(tmp_path: Path) -> bytes:
    from app.core.rollout.writer import RolloutWriter

    path = tmp_path / "w.jsonl"
    with RolloutWriter(path) as writer:
        writer.append("turn_context", {"turn_id": "t1"})
    return path.read_bytes().rstrip(b"\n")


def test_a_written_lines_head_gives_its_time_type_and_payload(tmp_path: Path) -> None:
    written = _written(tmp_path)
    data = b"xx" + written + b"\n"  # found by its span inside the bytes
    head = head_of(data, 2, 2 + len(written))
    assert head is not None
    record = json.loads(written)
    assert (head["time"], head["type"]) == (record["timestamp"].encode(), b"turn_context")
    assert data[head.end():].startswith(b'{"turn_id":"t1"}')


@pytest.mark.parametrize(
    "change",
    [
        lambda w: w.replace(b'","type":"', b'", "type": "'),  # written by another program
        lambda w: w[: w.rindex(b',"id":')] + b"}",  # no id at its end
        lambda w: w[:-2] + b'"',  # its end cut
        lambda w: w.replace(b'"type":"turn_context"', b'"type":"Turn"'),  # not a writer's type
        lambda w: w.replace(b'"payload":{', b'"payload":['),  # a payload that is no object
        lambda w: w[w.index(b'"type"') - 1 :],  # no time first
        lambda w: w[: w.index(b'"timestamp":"') + 13] + w[w.index(b'","type"') :],  # time empty
    ],
)
def test_a_line_not_as_the_writer_writes_it_has_no_head(tmp_path: Path, change: Any) -> None:
    changed = change(_written(tmp_path))
    assert head_of(changed, 0, len(changed)) is None


def test_spans_are_handed_out_unparsed_and_a_file_of_other_lines_refused(
    tmp_path: Path, parsed_lines: list[int]
) -> None:
    path = tmp_path / "s.jsonl"
    rows = [line("event", {"n": n}) for n in range(1, 5)]
    path.write_bytes(b"".join(rows))
    got: list[bytes] = []
    read_spans_at(path, [2, 4], 4, lambda data, spans: got.extend(data[a:b] for a, b in spans))
    assert got == [rows[1].rstrip(b"\n"), rows[3].rstrip(b"\n")] and parsed_lines == []
    with pytest.raises(RolloutChanged):
        read_spans_at(path, [2], 5, lambda data, spans: got.append(b"handed out"))
    assert got[-1] != b"handed out"
    data = path.read_bytes()
    first = record_of(data, 0, len(rows[0]) - 1, 1)
    assert (first.line_no, first.payload) == (1, {"n": 1})
    with pytest.raises(LineChanged, match="line 3 holds no record"):
        record_of(b"{not a record}", 0, 14, 3)
