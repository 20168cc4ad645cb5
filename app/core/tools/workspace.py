"""Read-only workspace tools the model may call: list a folder, read a file, search text.

Everything is confined to one folder. Every path is resolved with symlinks followed and must land
inside the (resolved) workspace root; anything else is refused before a byte is read. Tool errors
come back as a ``ToolResult`` with ``ok=False`` and a message for the model, never as exceptions.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..tokens.counter import truncate_middle
from .calls import (
    ToolError,
    ToolResult,
    function_spec,
    int_arg,
    parse_arguments,
    str_arg,
)
from .workspace_files import (
    MAX_WHOLE_READ_BYTES,
    _clip,
    _file_excerpt,
    _format_excerpt,
    _matching_lines,
    _stat_or_none,
)

__all__ = [
    "DEFAULT_SEARCH_RESULTS",
    "MAX_LIST_ENTRIES",
    "MAX_SEARCH_FILES",
    "MAX_SEARCH_RESULTS",
    "SKIPPED_DIRS",
    "ToolError",
    "ToolResult",
    "WorkspaceTools",
]

MAX_LIST_ENTRIES = 500
MAX_SEARCH_FILES = 20_000
MAX_SEARCH_RESULTS = 1000
DEFAULT_SEARCH_RESULTS = 50
SKIPPED_DIRS = frozenset({".git"})


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
            function_spec(
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
            function_spec(
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
            function_spec(
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
        handlers: dict[str, Callable[[dict[str, Any]], str]] = {
            "list_directory": self._list_directory,
            "read_file": self._read_file,
            "search_text": self._search_text,
        }
        handler = handlers.get(name)
        if handler is None:  # a name no tool has: said so, whatever the workspace
            offered = f" (available: {', '.join(handlers)})" if self._root is not None else ""
            return ToolResult(f"unknown tool: {name!r}{offered}", ok=False)
        if self._root is None:
            return ToolResult("no workspace folder is configured", ok=False)
        if not self._root.is_dir():
            return ToolResult(f"the workspace folder does not exist: {self._root}", ok=False)
        try:
            args = parse_arguments(name, arguments)
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
        raw = str_arg(args, "path", default=".")
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
        raw = str_arg(args, "path")
        start = int_arg(args, "start_line", minimum=1)
        end = int_arg(args, "end_line", minimum=1)
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
        excerpt = _file_excerpt(path, raw, first, end)
        return _format_excerpt(excerpt, self._display(path), raw, first, info.st_size)

    # --- search_text -------------------------------------------------------------------------

    def _search_text(self, args: dict[str, Any]) -> str:
        query = str_arg(args, "query")
        if not query.strip():
            raise ToolError("query must not be empty")
        raw = str_arg(args, "path", default=".")
        limit = int_arg(args, "max_results", minimum=1)
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
