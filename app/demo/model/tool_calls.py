"""The workspace tool calls of the demo model: which tool a request about files asks for (list,
read or search), with its arguments. (A question looking back searches with recall: see
``look_back``.)"""

from __future__ import annotations

import re
from typing import Any

LIST_TOOL = "list_directory"
READ_TOOL = "read_file"
SEARCH_TOOL = "search_text"
_WORDS = re.compile(r"[a-z']+")
# A file name or path. It never starts inside a name (the look-behind), and its name part is
# read once (the look-ahead finds its letter, the possessive run takes it):
# "[\w-]*[A-Za-z][\w-]*" tried every split of the run at every position of it, so a pasted
# 6 000-character run without a dot took minutes here, holding the GIL (the window froze).
_FILE_TOKEN = re.compile(
    r"(?<![\w-])[`'\"]?"
    r"((?:\.{1,2}/)?(?:[\w.-]+/)*(?=[\w-]*[A-Za-z])[\w-]*+\.[A-Za-z][A-Za-z0-9]{0,7})[`'\"]?"
)
_QUOTED = re.compile(r"[`\"“'‘]([^`\"”'’]{1,80})[`\"”'’]")
_IN_PATH = re.compile(
    r"\b(?:in|under|inside|within|of)\s+(?:the\s+)?[`'\"]?([\w./-]+?)[`'\"]?"
    r"(?:\s+(?:folder|directory|dir))?\s*[?.!]*$",
    re.IGNORECASE,
)
_SEARCH_TAIL = re.compile(
    r"\b(?:search(?:\s+the\s+\w+)?\s+for|grep(?:\s+for)?|look\s+for|find(?:\s+all)?|"
    r"where\s+is|occurrences\s+of)\s+(.+)$",
    re.IGNORECASE,
)
# Words that make a request about the workspace's files rather than about the world.
_WORKSPACE_WORDS = frozenset(
    {"file", "files", "folder", "folders", "directory", "directories", "dir", "repo",
     "repository", "codebase", "workspace"}
)
# Dotted names that are not files.
_NOT_FILES = frozenset(
    {"e.g", "i.e", "node.js", "vue.js", "next.js", "nuxt.js", "react.js", "express.js", "d3.js",
     "three.js", "chart.js", "socket.io", "asp.net", "vs.code"}
)
# A search query that names code: snake_case, dotted.names, calls(), CamelCase, CONSTANTS.
_IDENTIFIER = re.compile(
    r"\w_\w|\w\.\w|\(\)|\b[a-z]+[A-Z]\w*|\b[A-Z][a-z]+[A-Z]\w*|\b[A-Z_]{4,}\b"
)
_GENERIC_PLACES = frozenset(
    {
        "this",
        "the",
        "here",
        "project",
        "workspace",
        "repo",
        "repository",
        "folder",
        "directory",
        "codebase",
        "code",
        "files",
        "it",
    }
)


def file_intent(text: str) -> tuple[str, dict[str, Any]] | None:
    """Which workspace tool ``text`` asks for, with its arguments; None when it asks for none.

    Only requests that are about files say so: "list the files", "read app/main.py", "search
    for `compact_locally`". "A Markdown list", "a binary tree" or "look for a good hotel" are
    ordinary requests, answered in words.
    """
    lowered = text.lower()
    words = set(_WORDS.findall(lowered))
    file_token = _file_token(text)
    about_files = bool(words & _WORKSPACE_WORDS)
    if (
        words & {"search", "grep", "occurrences"}
        or "look for" in lowered
        or (
            words & {"find", "where"}
            and file_token is None
            and (words & {"defined", "used", "mentioned", "declared"} or about_files)
        )
    ):
        query = _search_query(text)
        if query and (about_files or file_token is not None or words & {"grep", "occurrences"}
                      or words & {"defined", "used", "mentioned", "declared"}
                      or _QUOTED.search(text) or _IDENTIFIER.search(query)):
            return SEARCH_TOOL, {"query": query, "path": _place(text) or "."}
    reading = words & {"read", "open", "cat", "show", "display", "print", "contents", "view"} or (
        "what's in" in lowered or "what is in" in lowered or "look at" in lowered
    )
    if file_token and reading:
        return READ_TOOL, {"path": file_token, "start_line": 1, "end_line": 200}
    if "ls" in words or (
        words & {"files", "folder", "directory", "folders", "directories", "dir"}
        and words & {"list", "tree", "what", "which", "show", "see", "there"}
    ):
        return LIST_TOOL, {"path": _place(text) or "."}
    return None


def _file_token(text: str) -> str | None:
    """The first thing in ``text`` that looks like a file name or path ("app/main.py")."""
    for match in _FILE_TOKEN.finditer(text):
        token = match.group(1)
        if token.lower() not in _NOT_FILES:
            return token
    return None


def _place(text: str) -> str | None:
    match = _IN_PATH.search(text.strip())
    if match is None:
        return None
    place = match.group(1).strip("./") or "."
    return None if place.lower() in _GENERIC_PLACES else match.group(1)


def _search_query(text: str) -> str | None:
    quoted = _QUOTED.search(text)
    if quoted:
        return quoted.group(1).strip()
    match = _SEARCH_TAIL.search(text.strip())
    if match is None:
        return None
    tail = re.split(r"\s+(?:in|inside|under|within)\s+", match.group(1), maxsplit=1)[0]
    named = [w.strip("`'\"?.!,") for w in tail.split() if _IDENTIFIER.search(w)]
    if named:
        return named[0]  # "find where parse_config is defined": the name, not the sentence
    tail = re.sub(r"^(?:the\s+(?:word|text|string)\s+)", "", tail.strip(), flags=re.IGNORECASE)
    words = tail.strip(" ?.!").split()
    return " ".join(words[:5]) or None
