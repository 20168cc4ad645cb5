"""The rollout reader's rules at their edges: where a JSON string may be cut (UTF-8 sequences,
escapes, surrogate pairs), where a string ends, which strings count as long, lines that start
with a newline or hold only spaces, the reading's progress, a record's number and time."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.rollout import reader
from app.core.rollout.open_progress import OPEN_PROGRESS, OpenProgress
from app.core.rollout.reader import (
    _blank,
    _decode_in_steps,
    _line_spans,
    _loads_huge,
    _long_strings,
    _safe_cut,
    _string_end,
    parse_record,
    read_in_steps,
    read_rollout,
    record_at,
)

# --- where a string's content may be cut ----------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "cut", "safe"),
    [
        (b"abcdef", 3, True),  # no escape near
        (b"a\xc3\xa9b", 2, False),  # inside "é"
        (b"a\xc3\xa9b", 1, True),  # before it
        (b"\\u00e9x", 3, False),  # inside an escape at the very start
        (b"\\u00e9x", 6, True),  # after it
        (b"a\\nb", 2, False),  # between "\" and "n"
        (b"a\\nb", 3, True),  # just after "\n"
        (b"a\\\\b", 3, True),  # after an escaped backslash ("\\" is complete)
        (b"ab\\\\c", 4, True),
        (b"a\\\\\\nb", 5, True),  # three: an escaped backslash, then "\n"
        (b"a\\\\\\nb", 4, False),  # inside that "\n"
    ],
)
def test_a_cut_is_safe_only_outside_sequences_and_escapes(
    content: bytes, cut: int, safe: bool
) -> None:
    assert _safe_cut(content, 0, cut) is safe


@pytest.mark.parametrize("high", [b"d8", b"d9", b"da", b"db", b"D8", b"D9", b"DA", b"DB"])
def test_a_cut_between_the_halves_of_a_surrogate_pair_is_not_safe(high: bytes) -> None:
    content = b"x\\u" + high + b"3d\\ude00y"
    assert _safe_cut(content, 0, 7) is False  # after the high half
    assert _safe_cut(content, 0, 13) is True  # after the pair


def test_a_cut_after_an_escape_that_is_no_high_surrogate_is_safe() -> None:
    assert _safe_cut(b"x\\udc00\\u0041y", 0, 7) is True


# --- where a string ends --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "end", "close"),
    [
        (b'"', 1, 0),  # the closing quote first
        (b'abc"', 3, -1),  # the quote is beyond the end: none
        (b'\\"x"', 4, 3),  # an escaped quote, its backslash the string's first byte
        (b'\\""', 3, 2),  # an escaped quote right before the closing one
        (b'a\\\\"', 4, 3),  # an escaped backslash, then the closing quote
        (b'a\\\\\\"b"', 7, 6),  # an escaped backslash and an escaped quote
    ],
)
def test_a_string_ends_at_its_first_unescaped_quote_before_the_end(
    data: bytes, end: int, close: int
) -> None:
    assert _string_end(data, 0, end) == close


# --- which strings are long -----------------------------------------------------------------------


@pytest.fixture
def long_is_64(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader, "_HUGE_STRING_BYTES", 64)


@pytest.mark.parametrize(("length", "long"), [(63, False), (64, True), (65, True)])
def test_a_string_is_long_from_the_limit_on(long_is_64: None, length: int, long: bool) -> None:
    data = b'{"a":"' + b"x" * length + b'"}'
    assert _long_strings(data, 0, len(data)) == ([(6, 6 + length)] if long else [])


def test_long_strings_are_looked_for_from_the_lines_start(long_is_64: None) -> None:
    data = b'"x"\n' + b'"' + b"y" * 70 + b'"'
    assert _long_strings(data, 4, len(data)) == [(5, 75)]
    assert _long_strings(data[4:], 0, len(data) - 4) == [(1, 71)]  # a quote at the very start


def test_an_empty_string_before_a_long_one(long_is_64: None) -> None:
    data = b'["", "' + b"z" * 70 + b'"]'
    assert _long_strings(data, 0, len(data)) == [(6, 76)]


# --- decoding a long string in steps ----------------------------------------------------------------


def test_a_step_ends_at_the_last_safe_cut_before_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader, "_DECODE_STEP", 7)
    assert _decode_in_steps(b"ab\\u00e9cd", 0, 10) == "abécd"  # the first step ends at 2
    assert _decode_in_steps(b"abc\\u00e9", 0, 9) == "abcé"  # the escape ends the buffer


def test_no_safe_cut_within_a_step_gives_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader, "_DECODE_STEP", 4)
    assert _decode_in_steps(b"\\u00e9abc", 0, 9) is None  # the whole step is an escape


def test_a_huge_line_with_no_long_string_is_parsed_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader, "_HUGE_STRING_BYTES", 64)
    line = b'{"type":"event","payload":{"n":[' + b",".join([b'"ab"'] * 40) + b"]}}"
    assert _loads_huge(line, 0, len(line)) == {
        "type": "event", "payload": {"n": ["ab"] * 40}
    }


def test_a_huge_line_after_another_is_read_from_its_own_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(reader, "_HUGE_STRING_BYTES", 64)
    monkeypatch.setattr(reader, "_DECODE_STEP", 16)
    first = b'{"a":"' + b"q" * 80 + b'"}\n'
    second = b'{"type":"event","payload":{"text":"' + b"w" * 90 + b'"}}'
    data = first + second
    assert _loads_huge(data, len(first), len(data)) == {
        "type": "event", "payload": {"text": "w" * 90}
    }


def test_a_huge_lines_record_keeps_its_number(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader, "HUGE_LINE_BYTES", 50)
    line = b'{"type":"event","payload":{"text":"' + b"v" * 60 + b'"}}'
    with memoryview(line) as view:
        record = record_at(line, view, 0, len(line), 7)
    assert record is not None and record.line_no == 7 and record.payload == {"text": "v" * 60}


# --- lines, blanks, records -----------------------------------------------------------------------


def test_a_file_that_starts_with_a_newline() -> None:
    assert _line_spans(b"\nabc\n") == [(0, 0), (1, 4), (5, 5)]


def test_spaces_alone_are_blank_whatever_their_length_and_a_long_indent_is_not() -> None:
    assert _blank(b" " * 100, 0, 100)
    assert not _blank(b" " * 70 + b"x", 0, 71)
    assert not _blank(b" " * 64 + b"x", 0, 65)  # its first 64 bytes spaces, its last not


def test_a_long_indented_line_is_a_bad_line_and_a_long_blank_one_is_not(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    record = b'{"type":"event","payload":{"n":1}}\n'
    path.write_bytes(record + b" " * 100 + b"\n" + b" " * 70 + b"x\n" + record)
    records, warnings = read_rollout(path)
    assert len(records) == 2
    assert warnings == [f"Skipped line 3 of {path.name}: not a valid record"]


def test_a_record_takes_its_number_and_its_time_as_text() -> None:
    record = parse_record(b'{"timestamp":17,"type":"event","payload":{}}', 3)
    assert record is not None and (record.line_no, record.timestamp) == (3, "17")


def test_reading_in_steps_reports_from_nothing_to_the_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reader, "READ_STEP", 10)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"x" * 25)
    reports: list[tuple[int, int]] = []

    class Heard(OpenProgress):
        def report(self, stage: str, done: int, total: int) -> None:
            reports.append((done, total))

    token = OPEN_PROGRESS.set(Heard())
    try:
        assert bytes(read_in_steps(path)) == b"x" * 25
    finally:
        OPEN_PROGRESS.reset(token)
    assert reports == [(0, 25), (10, 25), (20, 25), (25, 25)]


def test_a_line_only_the_careful_parser_reads_keeps_its_number() -> None:
    line = b'{"type":"event","payload":{"x":NaN}}'  # orjson refuses NaN; json reads it
    with memoryview(line) as view:
        record = record_at(line, view, 0, len(line), 4)
    assert record is not None and record.line_no == 4 and record.payload["x"] != record.payload["x"]


def test_a_long_string_that_cannot_be_cut_has_its_line_parsed_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(reader, "_HUGE_STRING_BYTES", 8)
    monkeypatch.setattr(reader, "_DECODE_STEP", 4)  # shorter than the escape it starts with
    line = b'{"type":"event","payload":{"t":"\\u00e9abcdefgh"}}'
    assert _loads_huge(line, 0, len(line)) == {"type": "event", "payload": {"t": "éabcdefgh"}}
