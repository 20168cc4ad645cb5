"""Reading workspace files as text for the tools: an excerpt of a line range with bounded
memory (UTF-8 or Windows-1252, binary refused), and the lines of a file matching a search."""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from .calls import ToolError

BINARY_SNIFF_BYTES = 8192
MAX_SEARCH_FILE_BYTES = 2 * 1024 * 1024
MAX_MATCH_LINE_CHARS = 300
# Reading a whole file this big would only be middle-truncated anyway; ask for a range instead.
MAX_WHOLE_READ_BYTES = 32 * 1024 * 1024
# The most read_file reads for one call, whatever the range asked for (it stops there and says
# where to continue), and the longest line it holds (longer ones are cut, the rest skipped).
MAX_READ_BYTES = MAX_WHOLE_READ_BYTES
MAX_LINE_BYTES = 256 * 1024
READ_CHUNK_BYTES = 64 * 1024
# After the requested range, the rest of the file is scanned for its line count up to this size.
MAX_COUNT_BYTES = 8 * 1024 * 1024
# Lines before the requested range are skipped (counted, not kept) through at most this much.
MAX_SCAN_BYTES = 1024 * 1024 * 1024
# Text that is not UTF-8 is tried as Windows-1252, the usual "Latin-1" of Western files.
TEXT_ENCODINGS = ("utf-8", "cp1252")
ENCODING_NAMES = {"utf-8": "UTF-8", "cp1252": "Windows-1252 (Latin-1)"}


def _stat_or_none(path: Path) -> os.stat_result | None:
    try:
        return path.stat()
    except FileNotFoundError:
        return None

class _BinaryContent(Exception):
    """Raised while reading when the bytes are not text in any encoding tried."""


@dataclass
class _Excerpt:
    """The lines of a file's requested range, and how much of the file was looked at."""

    lines: list[str]
    total: int  # lines seen (the whole file's count when ``at_eof``)
    at_eof: bool  # the end of the file was reached, so ``total`` is its line count
    encoding: str
    stopped_at: int | None = None  # the size guard stopped the read before this line


# Control characters that do not occur in text: a "Latin-1" file holding them is binary.
_BINARY_CONTROLS = re.compile(r"[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f]")


def _decode_line(raw: bytes, encoding: str, cut: bool) -> str:
    """One line's bytes as text, without its ending. A ``cut`` line may end inside a
    multi-byte character, which is dropped rather than counted as undecodable."""
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as exc:
        if not cut or exc.start < len(raw) - 3 or exc.reason != "unexpected end of data":
            raise
        text = raw[: exc.start].decode(encoding)
    if encoding != "utf-8" and _BINARY_CONTROLS.search(text):
        raise _BinaryContent
    return text.rstrip("\r\n")


def _skip_rest_of_line(handle: BinaryIO) -> int:
    """Read past the rest of an over-long line in bounded chunks; returns how many bytes of
    text were skipped (its line ending not counted)."""
    skipped = 0
    while True:
        chunk = handle.readline(READ_CHUNK_BYTES)
        if b"\0" in chunk:
            raise _BinaryContent
        if not chunk or chunk.endswith(b"\n"):
            return skipped + len(chunk.rstrip(b"\r\n"))
        skipped += len(chunk)


def _count_remaining_lines(handle: BinaryIO) -> int | None:
    """Lines left after the current position, or ``None`` when the rest is too big to count."""
    here = handle.tell()
    remaining = handle.seek(0, os.SEEK_END) - here
    handle.seek(here)
    if remaining > MAX_COUNT_BYTES:
        return None
    count = 0
    last = b"\n"
    while chunk := handle.read(READ_CHUNK_BYTES):
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (last != b"\n")


def _skip_lines(handle: BinaryIO, count: int) -> int:
    """Move past ``count`` lines without decoding or holding them; returns how many lines
    were passed (fewer at the end of the file, where an unterminated last line counts).

    Reads in chunks and counts newlines, so lines deep into a big file are reached quickly
    with bounded memory; gives up after ``MAX_SCAN_BYTES``."""
    passed = 0
    scanned = 0
    tail = b"\n"
    while passed < count:
        start = handle.tell()
        chunk = handle.read(READ_CHUNK_BYTES)
        if not chunk:
            return passed + (tail != b"\n")
        scanned += len(chunk)
        if scanned > MAX_SCAN_BYTES:
            raise ToolError(
                f"line {count + 1} is more than {MAX_SCAN_BYTES} bytes into the file; "
                "this tool does not scan that far"
            )
        newlines = chunk.count(b"\n")
        if passed + newlines < count:
            if b"\0" in chunk:
                raise _BinaryContent
            passed += newlines
            tail = chunk[-1:]
            continue
        index = -1
        while passed < count:
            index = chunk.index(b"\n", index + 1)
            passed += 1
        if b"\0" in chunk[: index + 1]:  # only what was skipped: the rest is not read yet
            raise _BinaryContent
        handle.seek(start + index + 1)
    return passed


def _read_excerpt(handle: BinaryIO, first: int, end: int | None, encoding: str) -> _Excerpt:
    """Stream lines ``first`` to ``end`` from ``handle`` and stop there.

    Memory is bounded whatever the file: lines before the range are skipped in chunks, a line
    longer than ``MAX_LINE_BYTES`` is cut (its rest skipped, never held), and the read stops
    once ``MAX_READ_BYTES`` of the range have been read. After the range, the remaining lines
    are counted only when the rest is small. Raises ``UnicodeDecodeError`` when a line is not
    ``encoding``, ``_BinaryContent`` for a NUL byte or control characters.
    """
    number = _skip_lines(handle, first - 1)
    lines: list[str] = []
    read = 0
    while True:
        if end is not None and number >= end:
            more = _count_remaining_lines(handle)
            if more is None:
                return _Excerpt(lines, number, False, encoding)
            return _Excerpt(lines, number + more, True, encoding)
        if read >= MAX_READ_BYTES:
            return _Excerpt(lines, number, False, encoding, stopped_at=number + 1)
        raw = handle.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return _Excerpt(lines, number, True, encoding)
        number += 1
        read += len(raw)
        if b"\0" in raw:
            raise _BinaryContent
        cut = len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n")
        skipped = _skip_rest_of_line(handle) if cut else 0
        text = _decode_line(raw[:MAX_LINE_BYTES] if cut else raw, encoding, cut)
        if cut:
            text += f" … [line cut: {skipped + len(raw) - MAX_LINE_BYTES} more bytes]"
        lines.append(text)


def _file_excerpt(path: Path, raw: str, first: int, end: int | None) -> _Excerpt:
    """Lines ``first`` to ``end`` of the file at ``path`` (``raw`` as the model named it), in
    the first of :data:`TEXT_ENCODINGS` that fits; :class:`ToolError` for a binary file."""
    with path.open("rb") as handle:
        if b"\0" in handle.read(BINARY_SNIFF_BYTES):
            raise ToolError(f"binary file, not shown: {raw}")
        excerpt = None
        for encoding in TEXT_ENCODINGS:
            handle.seek(0)
            try:
                excerpt = _read_excerpt(handle, first, end, encoding)
                break
            except UnicodeDecodeError:
                continue  # not this encoding: read again with the next one
            except _BinaryContent:
                break
        if excerpt is None:
            raise ToolError(f"binary file, not shown: {raw}")
    return excerpt


def _format_excerpt(excerpt: _Excerpt, rel: str, raw: str, first: int, size: int) -> str:
    """The numbered lines of ``excerpt`` under a header saying which lines of how many."""
    if excerpt.total == 0 and excerpt.at_eof:
        return f"{rel}: empty file (0 lines)"
    if not excerpt.lines:
        raise ToolError(f"start_line ({first}) is past the end of {raw} ({excerpt.total} lines)")
    last = first + len(excerpt.lines) - 1
    width = max(4, len(str(last)))
    if excerpt.at_eof:
        header = f"{rel}: lines {first}-{last} of {excerpt.total}"
    else:
        header = f"{rel}: lines {first}-{last} of a {size}-byte file (more lines follow)"
    if excerpt.encoding != "utf-8":
        header += f" (not UTF-8: decoded as {ENCODING_NAMES[excerpt.encoding]})"
    body = [f"{number:>{width}}\t{text}" for number, text in enumerate(excerpt.lines, start=first)]
    if excerpt.stopped_at is not None:
        body.append(
            f"(stopped after line {last}: more than {MAX_READ_BYTES} bytes were read; "
            f"continue with start_line={excerpt.stopped_at})"
        )
    return "\n".join([header, *body])


def _matching_lines(path: Path, needle: str) -> list[tuple[int, str]]:
    """(line number, line) pairs containing ``needle``; nothing for binary, huge or unreadable
    files."""
    try:
        info = path.stat()
        # Not regular (a FIFO would block the read) or too big to be worth scanning.
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SEARCH_FILE_BYTES:
            return []
        data = path.read_bytes()
    except OSError:
        return []
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        return []
    text = _decode_whole(data)
    # Most files do not match: skip the per-line work.
    if text is None or needle not in text.casefold():
        return []
    return [
        (number, line)
        for number, line in enumerate(text.splitlines(), start=1)
        if needle in line.casefold()
    ]


def _decode_whole(data: bytes) -> str | None:
    """``data`` as text in the first of :data:`TEXT_ENCODINGS` that fits, ``None`` if none
    does (binary)."""
    for encoding in TEXT_ENCODINGS:
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        if encoding != "utf-8" and _BINARY_CONTROLS.search(text):
            return None
        return text
    return None


def _clip(line: str) -> str:
    if len(line) <= MAX_MATCH_LINE_CHARS:
        return line
    return line[:MAX_MATCH_LINE_CHARS] + "…"
