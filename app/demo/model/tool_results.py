"""What the demo model says about a tool's output: a directory's entries, the start of a file,
a search's matches, what the recall search found, or the problem the tool reported."""

from __future__ import annotations

import json
import re
from pathlib import PurePosixPath
from typing import Any

from ..conversation import Conversation, Entry
from ..phrasing import join_words, quote, shorten
from .look_back import RECALL_TOOL, answer_from_recall
from .mcp_calls import describe_example
from .tool_calls import LIST_TOOL, READ_TOOL, SEARCH_TOOL

_EXT_LANG = {
    ".py": "python",
    ".js": "javascript",
    ".ts": "typescript",
    ".rs": "rust",
    ".go": "go",
    ".sh": "bash",
    ".md": "markdown",
    ".json": "json",
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".sql": "sql",
    ".html": "html",
    ".css": "css",
}


def describe_output(conv: Conversation, output: Entry) -> str:
    """What the demo model says about a tool's output: the entries, the start of a file,
    the matches, what recall found, or the problem the tool reported."""
    call = conv.calls_by_id().get(output.call_id)
    name = call.name if call else "the tool"
    args = _json_object(call.text) if call else {}
    text = output.text.rstrip()
    lines = text.splitlines()
    if not text:
        return f"`{name}` returned nothing at all, so there is nothing to show."
    example = describe_example(name, text)
    if example is not None:
        return example
    if _looks_like_error(lines[0]):
        return (
            f"`{name}` reported a problem:\n\n{quote(lines[0], 200)}\n\n"
            "Check the path or the wording and ask me again."
        )
    if name == LIST_TOOL:
        path = str(args.get("path", "."))
        # The tool's first line is a header ("./ (N entries)"), not an entry.
        if lines and lines[0].rstrip().endswith(("entries)", "entry)")):
            lines = lines[1:]
        shown = "\n".join(f"- `{line.strip()}`" for line in lines[:10])
        more = f"\n\n…and {len(lines) - 10} more." if len(lines) > 10 else ""
        return (
            f"The directory `{path}` has **{len(lines)}** entries:\n\n{shown}{more}\n\n"
            "Ask me to read one of them if you want to see what is inside."
        )
    if name == READ_TOOL:
        path = str(args.get("path", "the file"))
        lang = _EXT_LANG.get(PurePosixPath(path).suffix.lower(), "")
        head = "\n".join(lines[:8])
        return (
            f"`{path}` has **{len(lines)}** line(s) in the part I read "
            f"({len(text)} characters). It starts like this:\n\n"
            f"```{lang}\n{head}\n```\n\n{_file_remark(lines)}"
        )
    if name == RECALL_TOOL:
        return answer_from_recall(conv, str(args.get("query", "")), text)
    if name == SEARCH_TOOL:
        query = str(args.get("query", ""))
        shown = "\n".join(f"- `{shorten(line, 100)}`" for line in lines[:6])
        more = f"\n\n…and {len(lines) - 6} more." if len(lines) > 6 else ""
        return (
            f"The search for “{query}” found **{len(lines)}** matching line(s):\n\n"
            f"{shown}{more}"
        )
    return (
        f"`{name}` returned {len(lines)} line(s), {len(text)} characters. "
        f"The first lines are:\n\n```\n" + "\n".join(lines[:6]) + "\n```"
    )


def _looks_like_error(line: str) -> bool:
    lowered = line.lower()
    return (
        lowered.startswith(("error", "failed"))
        or "no such file" in lowered
        or "not found" in lowered
    )


def _json_object(text: str) -> dict[str, Any]:
    try:
        parsed = json.loads(text)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _file_remark(lines: list[str]) -> str:
    defs = [line.strip() for line in lines if re.match(r"\s*(def|class|fn|func|function)\s", line)]
    headings = [
        line.strip("# ").strip()
        for line in lines
        if line.startswith("#") and not line.startswith("#!")
    ]
    if defs:
        names = [re.split(r"[\s(:<{]+", d)[1] for d in defs[:4] if len(d.split()) > 1]
        return f"It defines {join_words(names, '`')}, among what I read."
    if headings:
        return f"Its headings include {join_words(headings[:3], '“')}."
    return "Ask me to search it for something specific if you need more."
