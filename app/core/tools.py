"""Read-only workspace tools the model may call: list a folder, read a file, search text.

Everything is confined to one folder. Every path is resolved with symlinks followed and must land
inside the (resolved) workspace root; anything else is refused before a byte is read. Tool errors
come back as a ``ToolResult`` with ``ok=False`` and a message for the model, never as exceptions.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from .tokens import truncate_middle

BINARY_SNIFF_BYTES = 8192
MAX_LIST_ENTRIES = 500
MAX_SEARCH_FILE_BYTES = 2 * 1024 * 1024
MAX_SEARCH_FILES = 20_000
MAX_SEARCH_RESULTS = 1000
DEFAULT_SEARCH_RESULTS = 50
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
SKIPPED_DIRS = frozenset({".git"})


@dataclass(frozen=True)
class ToolResult:
    """What a tool call returns to the model: its text output, and whether it succeeded."""

    output: str
    ok: bool


class ToolError(Exception):
    """A tool failure whose message is meant for the model."""


class WorkspaceTools:
    """The read-only tools over one workspace folder (disabled when there is none)."""

    def __init__(self, root: Path | None, output_budget_tokens: int = 10_000) -> None:
        self._root = root.expanduser().resolve() if root is not None else None
        self._budget = output_budget_tokens

    @property
    def root(self) -> Path | None:
        """The resolved workspace folder, if one is configured."""
        return self._root

    @property
    def enabled(self) -> bool:
        """True when a workspace folder is configured and is a directory."""
        return self._root is not None and self._root.is_dir()

    # --- what the model sees ---------------------------------------------------------------

    def specs(self) -> list[dict[str, Any]]:
        """Responses-API function tool definitions (empty when no workspace is usable)."""
        if not self.enabled:
            return []
        return [
            _function_spec(
                "list_directory",
                "List the entries of a folder in the workspace (one level, sorted). Folders end "
                "with '/', files show their size in bytes.",
                {
                    "path": {
                        "type": "string",
                        "description": "Folder relative to the workspace root. Default: '.'.",
                    }
                },
                required=[],
            ),
            _function_spec(
                "read_file",
                "Read a text file in the workspace (UTF-8, or Windows-1252/Latin-1, named in "
                "the header). Lines are numbered; use start_line and end_line to read part of a "
                "long file.",
                {
                    "path": {
                        "type": "string",
                        "description": "File relative to the workspace root.",
                    },
                    "start_line": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "First line to show (1-based). Default: 1.",
                    },
                    "end_line": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "Last line to show. Default: end of file.",
                    },
                },
                required=["path"],
            ),
            _function_spec(
                "search_text",
                "Case-insensitive plain-text search in the workspace's text files. Returns "
                "'path:line: text' for each matching line.",
                {
                    "query": {"type": "string", "description": "Text to look for (not a regex)."},
                    "path": {
                        "type": "string",
                        "description": "Folder or file to search, "
                        "relative to the workspace root. Default: '.'.",
                    },
                    "max_results": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_SEARCH_RESULTS,
                        "description": "Most matches to return. Default: 50.",
                    },
                },
                required=["query"],
            ),
        ]

    def environment_context(self) -> str:
        """The ``<environment_context>`` block telling the model about the workspace ("" when
        no workspace is usable)."""
        if not self.enabled or self._root is None:
            return ""
        return (
            "<environment_context>\n"
            f"  <workspace>{self._root}</workspace>\n"
            "  <tools>list_directory, read_file and search_text are read-only; paths are "
            "relative to the workspace folder, and nothing outside it can be read.</tools>\n"
            "</environment_context>"
        )

    # --- calling -----------------------------------------------------------------------------

    async def call(self, name: str, arguments: str) -> ToolResult:
        """Run tool ``name`` with its JSON ``arguments``. Never raises; output is truncated to
        the output budget."""
        if self._root is None:
            return ToolResult("no workspace folder is configured", ok=False)
        if not self._root.is_dir():
            return ToolResult(f"the workspace folder does not exist: {self._root}", ok=False)
        handlers: dict[str, Callable[[dict[str, Any]], str]] = {
            "list_directory": self._list_directory,
            "read_file": self._read_file,
            "search_text": self._search_text,
        }
        handler = handlers.get(name)
        if handler is None:
            return ToolResult(
                f"unknown tool: {name!r} (available: {', '.join(handlers)})", ok=False
            )
        try:
            args = _parse_arguments(name, arguments)
            output = await asyncio.to_thread(handler, args)
            ok = True
        except ToolError as exc:
            output, ok = str(exc), False
        except OSError as exc:  # permission denied, vanished file, I/O error…
            where = f": {exc.filename}" if exc.filename else ""
            output, ok = f"{name} failed: {exc.strerror or exc}{where}", False
        except Exception as exc:  # noqa: BLE001 - a tool bug must not end the turn
            output, ok = f"{name} failed: {exc}", False
        truncated, _ = truncate_middle(output, self._budget)
        return ToolResult(truncated, ok=ok)

    # --- confinement ---------------------------------------------------------------------------

    def _resolve(self, raw: str) -> Path:
        """``raw`` (relative to the root, or absolute) with every symlink followed; refuses any
        path that ends up outside the root."""
        root = self._root
        assert root is not None
        try:
            candidate = Path(raw)
            if not candidate.is_absolute():
                candidate = root / candidate
            resolved = candidate.resolve()
        except (OSError, ValueError, RuntimeError) as exc:  # NUL byte, symlink loop…
            raise ToolError(f"invalid path: {raw} ({exc})") from exc
        if not resolved.is_relative_to(root):
            raise ToolError(f"path is outside the workspace: {raw}")
        return resolved

    def _display(self, path: Path) -> str:
        assert self._root is not None
        rel = path.relative_to(self._root).as_posix()
        return rel if rel != "." else "."

    def _inside(self, path: Path) -> Path | None:
        """``path`` resolved, if it stays inside the root (for entries met while walking)."""
        assert self._root is not None
        try:
            resolved = path.resolve()
        except (OSError, RuntimeError):
            return None
        return resolved if resolved.is_relative_to(self._root) else None

    # --- list_directory --------------------------------------------------------------------

    def _list_directory(self, args: dict[str, Any]) -> str:
        raw = _str_arg(args, "path", default=".")
        folder = self._resolve(raw)
        if not folder.exists():
            raise ToolError(f"no such directory: {raw}")
        if not folder.is_dir():
            raise ToolError(f"not a directory: {raw} (use read_file for files)")
        with os.scandir(folder) as scan:
            entries = sorted(scan, key=lambda e: e.name)
        lines = [f"{self._display(folder)}/ ({len(entries)} entries)"]
        for entry in entries[:MAX_LIST_ENTRIES]:
            lines.append(self._describe_entry(entry))
        if len(entries) > MAX_LIST_ENTRIES:
            lines.append(
                f"… {len(entries) - MAX_LIST_ENTRIES} more entries not shown "
                f"(only the first {MAX_LIST_ENTRIES} are listed)"
            )
        return "\n".join(lines)

    def _describe_entry(self, entry: os.DirEntry[str]) -> str:
        name = entry.name
        suffix = ""
        if entry.is_symlink():
            if self._inside(Path(entry.path)) is None:
                return f"{name} (symlink to outside the workspace)"
            suffix = " (symlink)"
        try:
            if entry.is_dir():
                return f"{name}/{suffix}"
            size = entry.stat().st_size
        except OSError:
            return f"{name} (unreadable)"
        return f"{name}  ({size} bytes){suffix}"

    # --- read_file ---------------------------------------------------------------------------

    def _read_file(self, args: dict[str, Any]) -> str:
        raw = _str_arg(args, "path")
        start = _int_arg(args, "start_line", minimum=1)
        end = _int_arg(args, "end_line", minimum=1)
        if start is not None and end is not None and end < start:
            raise ToolError(f"end_line ({end}) is before start_line ({start})")
        path = self._resolve(raw)
        info = _stat_or_none(path)
        if info is None:
            raise ToolError(f"no such file: {raw}")
        if stat.S_ISDIR(info.st_mode):
            raise ToolError(f"is a directory, not a file: {raw} (use list_directory)")
        if not stat.S_ISREG(info.st_mode):  # a FIFO or device would block or never end
            raise ToolError(f"not a regular file: {raw}")
        if start is None and end is None and info.st_size > MAX_WHOLE_READ_BYTES:
            raise ToolError(
                f"file is too large to show whole ({info.st_size} bytes): {raw}; "
                "read part of it with start_line and end_line"
            )
        first = start or 1
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
        return _format_excerpt(excerpt, self._display(path), raw, first, info.st_size)

    # --- search_text -------------------------------------------------------------------------

    def _search_text(self, args: dict[str, Any]) -> str:
        query = _str_arg(args, "query")
        if not query.strip():
            raise ToolError("query must not be empty")
        raw = _str_arg(args, "path", default=".")
        limit = _int_arg(args, "max_results", minimum=1)
        limit = min(limit or DEFAULT_SEARCH_RESULTS, MAX_SEARCH_RESULTS)
        base = self._resolve(raw)
        if not base.exists():
            raise ToolError(f"no such file or directory: {raw}")
        needle = query.casefold()
        results: list[str] = []
        capped = ""
        for files_seen, file in enumerate(self._files_under(base), start=1):
            if files_seen > MAX_SEARCH_FILES:
                capped = f"(stopped after searching {MAX_SEARCH_FILES} files; narrow the path)"
                break
            for number, line in _matching_lines(file, needle):
                if len(results) >= limit:
                    capped = f"(stopped at {limit} matches; narrow the query or the path)"
                    break
                results.append(f"{self._display(file)}:{number}: {_clip(line.strip())}")
            if capped:
                break
        if not results:
            note = f"no matches for {query!r} in {raw}"
            return f"{note} {capped}" if capped else note
        return "\n".join([*results, capped] if capped else results)

    def _files_under(self, base: Path) -> Iterator[Path]:
        """Regular files under ``base`` in sorted order, inside the root, skipping ``.git`` and
        symlinks that leave the workspace."""
        if not base.is_dir():
            yield base
            return
        for dirpath, dirnames, filenames in os.walk(base):  # followlinks=False: no loops
            dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
            for name in sorted(filenames):
                path = Path(dirpath) / name
                if path.is_symlink():
                    target = self._inside(path)
                    if target is None:
                        continue
                    path_for_reading = target
                else:
                    path_for_reading = path
                if path_for_reading.is_file():
                    yield path


# --- helpers ---------------------------------------------------------------------------------


def _function_spec(
    name: str, description: str, properties: dict[str, Any], required: list[str]
) -> dict[str, Any]:
    return {
        "type": "function",
        "name": name,
        "description": description,
        "parameters": {
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": False,
        },
        "strict": False,
    }


def _parse_arguments(name: str, arguments: str) -> dict[str, Any]:
    if not arguments.strip():  # some models send "" for a call without arguments
        return {}
    try:
        parsed = json.loads(arguments)
    except json.JSONDecodeError as exc:
        raise ToolError(f"invalid JSON arguments for {name}: {exc}") from exc
    if not isinstance(parsed, dict):
        raise ToolError(f"arguments for {name} must be a JSON object")
    return parsed


def _str_arg(args: dict[str, Any], key: str, default: str | None = None) -> str:
    value = args.get(key)
    if value is None:
        if default is None:
            raise ToolError(f"missing required argument: {key}")
        return default
    if not isinstance(value, str):
        raise ToolError(f"argument {key} must be a string")
    return value


def _int_arg(args: dict[str, Any], key: str, minimum: int) -> int | None:
    value = args.get(key)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolError(f"argument {key} must be an integer")
    if value < minimum:
        raise ToolError(f"argument {key} must be at least {minimum}")
    return value


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
