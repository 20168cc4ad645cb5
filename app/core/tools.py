"""Read-only workspace tools the model may call: list a folder, read a file, search text.

Everything is confined to one folder. Every path is resolved with symlinks followed and must land
inside the (resolved) workspace root; anything else is refused before a byte is read. Tool errors
come back as a ``ToolResult`` with ``ok=False`` and a message for the model, never as exceptions.
"""

from __future__ import annotations

import asyncio
import json
import os
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
                "Read a UTF-8 text file in the workspace. Lines are numbered; use start_line and "
                "end_line to read part of a long file.",
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
        shown: list[str] = []
        total = 0
        try:
            with path.open("rb") as handle:
                if b"\0" in handle.read(BINARY_SNIFF_BYTES):
                    raise ToolError(f"binary file, not shown: {raw}")
                handle.seek(0)
                for total, line in enumerate(_text_lines(handle), start=1):
                    if total >= first and (end is None or total <= end):
                        shown.append(line)
        except UnicodeDecodeError as exc:
            raise ToolError(f"binary file, not shown: {raw}") from exc
        rel = self._display(path)
        if total == 0:
            return f"{rel}: empty file (0 lines)"
        if first > total:
            raise ToolError(f"start_line ({first}) is past the end of {raw} ({total} lines)")
        last = first + len(shown) - 1
        width = max(4, len(str(last)))
        header = f"{rel}: lines {first}-{last} of {total}"
        body = [f"{number:>{width}}\t{text}" for number, text in enumerate(shown, start=first)]
        return "\n".join([header, *body])

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


def _text_lines(handle: BinaryIO) -> Iterator[str]:
    """Lines of a binary handle decoded as strict UTF-8, without their line endings."""
    for line in handle:
        yield line.decode("utf-8").rstrip("\r\n")


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
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return []
    if needle not in text.casefold():  # most files do not match: skip the per-line work
        return []
    return [
        (number, line)
        for number, line in enumerate(text.splitlines(), start=1)
        if needle in line.casefold()
    ]


def _clip(line: str) -> str:
    if len(line) <= MAX_MATCH_LINE_CHARS:
        return line
    return line[:MAX_MATCH_LINE_CHARS] + "…"
