"""Reading a rollout: its lines parsed into records, bad and repeated lines skipped with a
warning in words, huge lines decoded in steps so a 50 MB line never holds the GIL at once."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple, cast

from orjson import loads as orjson_loads

from ..system.fastjson import loads
from .open_progress import progress_reporter
from .stepwise_join import join_in_steps

# What an incomplete last line becomes once repaired: a record keeping its bytes, which
# readers skip silently (the damage was reported once, on the open that repaired it).
DAMAGED_LINE_RECORD = "damaged_line"
# Up to this many bad lines are each named in a warning; more are summarised in one.
_MAX_NAMED_BAD_LINES = 3

# The file is read in steps of this many bytes, so progress can be told as it goes (and each
# step's copy into the buffer, which holds the GIL, stays short: 4 MB steps held it 8-18 ms).
READ_STEP = 1024 * 1024


def read_in_steps(path: Path) -> bytes | bytearray:
    """The file's bytes, read :data:`READ_STEP` at a time when someone follows the progress.

    Grown step by step (a large buffer grows in place): allocating and zeroing the whole
    buffer first, or joining the steps at the end, are single calls of 50+ ms for 50 MB."""
    report = progress_reporter("reading")
    if report is None:
        return path.read_bytes()
    with path.open("rb") as file:
        total = os.fstat(file.fileno()).st_size
        buffer = bytearray()
        report(0, total)
        while chunk := file.read(READ_STEP):
            buffer += chunk
            report(len(buffer), max(total, len(buffer)))
    return buffer


class RolloutRecord(NamedTuple):
    """One parsed line of a rollout; ``line_no`` is 1-based, as shown in warnings. ``id`` is
    the record's identity (``None`` in rollouts written before records had one). A named
    tuple: a long session has tens of thousands, and a frozen dataclass took several times
    longer to build."""

    line_no: int
    timestamp: str
    type: str
    payload: dict[str, Any]
    id: str | None = None


def parse_record(line: bytes, line_no: int) -> RolloutRecord | None:
    """One line as a record, or ``None`` if it is not valid JSON with ``type`` and ``payload``."""
    try:
        data = loads(line)
    except TypeError:  # a view of the line, which only orjson reads: ``json`` gets bytes
        try:
            data = loads(bytes(line))
        except ValueError:
            return None
    except ValueError:  # JSONDecodeError and UnicodeDecodeError alike
        return None
    return _record_from(data, line_no)


def _record_from(data: Any, line_no: int) -> RolloutRecord | None:
    """The record a parsed line holds, or ``None`` if it has no ``type`` and ``payload``."""
    if not isinstance(data, dict):
        return None
    kind = data.get("type")
    payload = data.get("payload")
    if not isinstance(kind, str) or not isinstance(payload, dict):
        return None
    timestamp = data.get("timestamp", "")
    record_id = data.get("id")
    return RolloutRecord(
        line_no,
        timestamp if isinstance(timestamp, str) else str(timestamp),
        kind,
        payload,
        record_id if isinstance(record_id, str) else None,
    )


def _bad_lines_warning(name: str, bad: list[int], incomplete_last: int | None) -> list[str]:
    """The warnings for skipped lines: each named when there are a few, else one summary."""
    if len(bad) <= _MAX_NAMED_BAD_LINES:
        return [
            f"Skipped line {line_no} of {name}: incomplete last line "
            "(the app may have stopped while writing)"
            if line_no == incomplete_last
            else f"Skipped line {line_no} of {name}: not a valid record"
            for line_no in bad
        ]
    shown = ", ".join(str(n) for n in bad[:5])
    more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
    summary = (
        f"Skipped {len(bad)} damaged lines of {name} (lines {shown}{more}): the file is "
        "partly unreadable, and what could be read is shown"
    )
    return [summary]


# A line this long has its long strings decoded in steps (see :func:`_loads_huge`).
HUGE_LINE_BYTES = 4 * 1024 * 1024
_HUGE_STRING_BYTES = 1024 * 1024
_DECODE_STEP = 256 * 1024  # each step copies its bytes a few times: kept short
_BACKSLASH = 0x5C
_MAX_QUOTES = 200_000  # quotes scanned in Python before the plain parser is used instead
_MAX_BACKOFF = 4096
_FIND_WINDOW = 4 * 1024 * 1024  # bytes one search for a closing quote looks through


def _string_end(data: bytes | bytearray, after: int, end: int) -> int:
    """The offset of the quote closing the JSON string whose content starts at ``after``,
    -1 if there is none before ``end``."""
    close = after
    while True:
        # Searched a window at a time: one search through a 50 MB string held the GIL long.
        window_end = min(end, close + _FIND_WINDOW)
        close = data.find(b'"', close, window_end)
        if close < 0:
            if window_end >= end:
                return -1
            close = window_end
            continue
        back = close - 1
        while back >= after and data[back] == _BACKSLASH:
            back -= 1
        if (close - 1 - back) % 2 == 0:  # not escaped
            return close
        close += 1


def _long_strings(data: bytes | bytearray, start: int, end: int) -> list[tuple[int, int]] | None:
    """The (start, end) of the content of each string of ``data[start:end]`` longer than
    ``_HUGE_STRING_BYTES``; None when the line is not worth it or not well formed."""
    spans: list[tuple[int, int]] = []
    pos = start
    for _ in range(_MAX_QUOTES):
        opening = data.find(b'"', pos, end)
        if opening < 0:
            return spans
        close = _string_end(data, opening + 1, end)
        if close < 0:
            return None
        if close - opening - 1 >= _HUGE_STRING_BYTES:
            spans.append((opening + 1, close))
        pos = close + 1
    return None


def _safe_cut(data: bytes | bytearray, start: int, cut: int) -> bool:
    """True when a JSON string's content (from ``start``) can be split before ``cut``: not
    inside a UTF-8 sequence, an escape, or between the two halves of a surrogate pair."""
    if 0x80 <= data[cut] < 0xC0:
        return False
    last = data.rfind(b"\\", max(start, cut - 12), cut)
    if last < 0:
        return True
    first = last
    while first > start and data[first - 1] == _BACKSLASH:
        first -= 1
    if (last - first) % 2 == 1:
        return True  # an even run: escaped backslashes, each pair complete before ``cut``
    # ``last`` starts an escape: \uXXXX is six bytes, the others two.
    if data[last + 1 : last + 2] != b"u":
        return cut >= last + 2
    if cut < last + 6:
        return False
    high = data[last + 2 : last + 4].lower()
    return not (cut == last + 6 and high in (b"d8", b"d9", b"da", b"db"))


def _decode_in_steps(data: bytes | bytearray, start: int, end: int) -> str | None:
    """The JSON string content ``data[start:end]`` decoded :data:`_DECODE_STEP` bytes at a
    time (never inside an escape or a UTF-8 sequence); None when no such place is found."""
    parts: list[str] = []
    pos = start
    while pos < end:
        cut = min(end, pos + _DECODE_STEP)
        if cut < end:
            floor = max(pos + 1, cut - _MAX_BACKOFF)
            while cut > floor and not _safe_cut(data, pos, cut):
                cut -= 1
            if cut <= floor:
                return None
        part = loads(b'"' + bytes(data[pos:cut]) + b'"')
        if not isinstance(part, str):
            return None
        parts.append(part)
        pos = cut
    return join_in_steps(parts)  # "".join held the GIL for the whole copy (30-60 ms)


def _put_back(value: Any, texts: dict[str, str]) -> Any:
    """``value`` with each placeholder string replaced by the text it stands for."""
    if isinstance(value, str):
        return texts.get(value, value)
    if isinstance(value, list):
        return [_put_back(entry, texts) for entry in value]
    if isinstance(value, dict):
        return {key: _put_back(entry, texts) for key, entry in value.items()}
    return value


def _loads_huge(data: bytes | bytearray, start: int, end: int) -> Any:
    """The JSON value of the line ``data[start:end]``, its long strings decoded in steps.

    One parse of a 50 MB line holds the GIL for 100+ ms, blocking the window's thread while
    a worker thread reads the session; in steps, the longest hold is the final joining of each
    long string. Falls back to one parse when the line does not lend itself to it."""
    spans = _long_strings(data, start, end)
    if not spans:
        return loads(bytes(data[start:end]))
    pieces: list[bytes] = []
    texts: dict[str, str] = {}
    pos = start
    for index, (first, last) in enumerate(spans):
        text = _decode_in_steps(data, first, last)
        if text is None:
            return loads(bytes(data[start:end]))
        placeholder = f"\x00coco-long-string-{index}\x00"
        texts[placeholder] = text
        pieces.append(bytes(data[pos:first]))
        pieces.append(b"\\u0000coco-long-string-%d\\u0000" % index)
        pos = last
    pieces.append(bytes(data[pos:end]))
    return _put_back(loads(b"".join(pieces)), texts)


def _line_spans(data: bytes | bytearray) -> list[tuple[int, int]]:
    """Where the lines of ``data`` (split at LF) start and end: splitting a 50 MB file copied
    all of it in one call, a block of 50–100 ms for whoever waits for the GIL."""
    spans: list[tuple[int, int]] = []
    start = 0
    while True:
        end = data.find(b"\n", start)
        if end < 0:
            spans.append((start, len(data)))
            return spans
        spans.append((start, end))
        start = end + 1


def line_count(spans: list[tuple[int, int]]) -> int:
    """How many lines the spans of :func:`_line_spans` are: the empty one after a final
    newline is none."""
    return len(spans) - (spans[-1][0] == spans[-1][1])


def record_at(
    data: bytes | bytearray, view: memoryview, start: int, end: int, line_no: int
) -> RolloutRecord | None:
    """The record of the line ``data[start:end]`` (``view`` is ``data``'s), or ``None``."""
    if end - start <= HUGE_LINE_BYTES:  # the usual line, parsed here without detours
        try:
            return _record_from(orjson_loads(view[start:end]), line_no)
        except ValueError:  # orjson refused it: the careful path says why
            pass
    return _parse_line(data, start, end, line_no)


def _parse_line(data: bytes | bytearray, start: int, end: int, line_no: int) -> RolloutRecord | None:
    if end - start <= HUGE_LINE_BYTES:
        with memoryview(data) as view:
            return parse_record(cast(bytes, view[start:end]), line_no)
    try:
        return _record_from(_loads_huge(data, start, end), line_no)
    except ValueError:
        return None


def _blank(data: bytes | bytearray, start: int, end: int) -> bool:
    """True when ``data[start:end]`` holds only whitespace (looking at its start first)."""
    if data[start : min(end, start + 64)].strip():
        return False
    return end - start <= 64 or not data[start:end].strip()


def read_rollout(
    path: Path,
    consume: Callable[[Iterable[RolloutRecord]], None] | None = None,
    *,
    lines: Callable[[int], None] | None = None,
) -> tuple[list[RolloutRecord], list[str]]:
    """Read every record of a rollout, skipping bad lines and repeated records with warnings.

    Blank lines and repaired damaged lines (:data:`DAMAGED_LINE_RECORD`) are ignored silently.
    One bad line is named in its warning (an unparsable unterminated last line as incomplete:
    the app stopped mid-write); several are summarised in one warning. A record whose ``id``
    was already read (the same line saved twice) is skipped, with one warning for all of them.
    Raises ``FileNotFoundError`` if the file does not exist.

    With ``consume``, the records are handed to it as they are read (an iterable it must go
    through) and not kept: what a line held besides what ``consume`` keeps is freed before
    the next line is parsed, so its memory is reused at once instead of leaving tens of
    thousands of holes between the objects a long session keeps (megabytes the process never
    gave back). The list returned is then empty. ``lines`` is told how many lines the file
    holds (blank and bad ones too) once all are read.
    """
    warnings: list[str] = []
    records = _records(read_in_steps(path), path.name, warnings, lines=lines)
    if consume is None:
        return list(records), warnings
    consume(records)
    for _ in records:  # whatever ``consume`` left is read too (its warnings count)
        pass
    return [], warnings


def _records(
    data: bytes | bytearray,
    name: str,
    warnings: list[str],
    *,
    lines: Callable[[int], None] | None = None,
) -> Iterator[RolloutRecord]:
    """The records of :func:`read_rollout`, one at a time; ``warnings`` gets its warnings
    once the last has been read (``name``: the file's, to name it in them); ``lines`` is
    told the number of lines once they are all read."""
    spans = _line_spans(data)
    # With a trailing newline the last line is empty; otherwise it is unterminated.
    unterminated_index = len(spans) - 1 if not _blank(data, *spans[-1]) else -1
    bad: list[int] = []
    seen_ids: set[str] = set()
    repeated = 0
    with memoryview(data) as view:
        for index, (start, end) in enumerate(spans):
            if start == end:
                continue
            record = record_at(data, view, start, end, index + 1)
            if record is None:
                if not _blank(data, start, end):
                    bad.append(index + 1)
                continue
            if record.id is not None:
                if record.id in seen_ids:
                    repeated += 1
                    continue
                seen_ids.add(record.id)
            if record.type != DAMAGED_LINE_RECORD:
                yield record
            del record
    if lines is not None:
        lines(line_count(spans))
    warnings.extend(_bad_lines_warning(name, bad, unterminated_index + 1 or None))
    if repeated:
        plural = "s" if repeated != 1 else ""
        warnings.append(
            f"Skipped {repeated} repeated record{plural} in {name} (the same line was "
            "saved more than once); each is shown once"
        )
