"""Reading chosen lines of a rollout: a branch's records, the others' lines not even parsed.

A switch to a branch of a 5 000-turn conversation needs the records on its path; parsing every
line of the file was most of what it cost. The session's tree knows each record's line (noted
as the file was read back and as each record was written), so only those lines are parsed
here; the rest are stepped over. The file is still read whole (its lines are found by their
newlines), so the count of its lines is checked against the tree's: a file that changed since
(:class:`RolloutChanged`) is read whole again by the caller.

A caller that needs only some of the chosen records parsed (a fork sums up its path from a few
kinds of record) takes the spans (:func:`read_spans_at`) and looks at each line's head first
(:func:`head_of`): the time and type the writer puts at the start of every line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from .reader import DAMAGED_LINE_RECORD, RolloutRecord, read_in_steps, record_at


class RolloutChanged(Exception):
    """The file does not hold the lines the tree says it does."""


class LineChanged(RolloutChanged):
    """A chosen line holds no record: raised while the records are handed out, so what was
    handed out before it is not to be trusted either."""


# What a consumer is handed: the file's bytes and each chosen line's record with its span.
Chosen = Iterator[tuple[RolloutRecord, int, int]]
# The chosen lines' spans in the bytes (newline left out), in the order of their line numbers.
Spans = list[tuple[int, int]]

# A line as the writer makes it (``RolloutWriter``: one compact JSON object, its keys in this
# order) starts with its time and type, then its payload, and ends with its id.
_HEAD = re.compile(
    rb'\{"timestamp":"(?P<time>[0-9T:.Z+-]+)","type":"(?P<type>[a-z_]+)","payload":(?=\{)'
)
_TAIL = re.compile(rb'\},"id":"[0-9a-f]{16}"\}')
_TAIL_BYTES = 26


def head_of(data: bytes | bytearray, start: int, end: int) -> re.Match[bytes] | None:
    """The head of the record on the line ``data[start:end]``, read from its first bytes: its
    ``time`` and ``type`` (groups, bytes), and its payload from ``end()``; ``None`` for a line
    that does not start and end as the writer writes one (only parsing it tells what it
    holds)."""
    head = _HEAD.match(data, start, end)
    if head is None or not _TAIL.fullmatch(data, max(head.end(), end - _TAIL_BYTES), end):
        return None
    return head


def read_lines_at(
    path: Path,
    lines: Sequence[int],
    total: int,
    consume: Callable[[bytes | bytearray, Chosen], None],
) -> None:
    """Hand ``consume`` the file's bytes and the records of ``lines`` (1-based, rising), each
    with its line's span in the bytes (newline left out), parsed one at a time as it goes
    through them. Raises :class:`RolloutChanged` before ``consume`` is called when the file
    holds other than ``total`` lines, and :class:`LineChanged` from the records it is handed
    when a chosen line holds no record."""

    def parsed(data: bytes | bytearray, spans: Spans) -> None:
        chosen = _records(data, spans, lines)
        consume(data, chosen)
        for _ in chosen:  # whatever ``consume`` left is checked too
            pass

    read_spans_at(path, lines, total, parsed)


def read_spans_at(
    path: Path,
    lines: Sequence[int],
    total: int,
    consume: Callable[[bytes | bytearray, Spans], None],
) -> None:
    """Hand ``consume`` the file's bytes and the spans of ``lines`` (1-based, rising), none
    parsed (:func:`record_of` parses one). Raises :class:`RolloutChanged` before ``consume``
    is called when the file holds other than ``total`` lines."""
    data = read_in_steps(path)
    consume(data, _spans_of(data, lines, total))


def record_of(data: bytes | bytearray, start: int, end: int, line_no: int) -> RolloutRecord:
    """The record on line ``line_no`` (``data[start:end]``); :class:`LineChanged` when it
    holds none."""
    with memoryview(data) as view:
        return _held(record_at(data, view, start, end, line_no), line_no)


def _held(record: RolloutRecord | None, line_no: int) -> RolloutRecord:
    """``record``, the one line ``line_no`` was parsed to; :class:`LineChanged` when that line
    holds none (not a record, or a damaged line's mark)."""
    if record is None or record.type == DAMAGED_LINE_RECORD:
        raise LineChanged(f"line {line_no} holds no record")
    return record


def _spans_of(data: bytes | bytearray, lines: Sequence[int], total: int) -> list[tuple[int, int]]:
    """Where ``lines`` are in ``data``; raises :class:`RolloutChanged` unless it holds
    ``total`` lines (the empty one after a final newline is none)."""
    size, find = len(data), data.find
    spans: list[tuple[int, int]] = []
    start, line_no = 0, 1
    for wanted in lines:
        while line_no < wanted:  # stepped over
            newline = find(b"\n", start)
            if newline < 0:
                raise RolloutChanged(f"the file ends before line {wanted}")
            start, line_no = newline + 1, line_no + 1
        end = find(b"\n", start)
        end = size if end < 0 else end
        spans.append((start, end))
        start, line_no = end + 1, line_no + 1
    while start < size:  # the lines after the last chosen one, counted
        newline = find(b"\n", start)
        start, line_no = (size if newline < 0 else newline) + 1, line_no + 1
    if line_no - 1 != total:
        raise RolloutChanged(f"the file holds {line_no - 1} lines, not {total}")
    return spans


def _records(data: bytes | bytearray, spans: list[tuple[int, int]], lines: Sequence[int]) -> Chosen:
    with memoryview(data) as view:
        for (start, end), line_no in zip(spans, lines, strict=True):
            record = _held(record_at(data, view, start, end, line_no), line_no)
            yield record, start, end
            del record
