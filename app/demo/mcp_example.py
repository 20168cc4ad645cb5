"""A tiny MCP server shipped with Coco (the official SDK's ``MCPServer``, formerly FastMCP): the
offline demo model calls its tools, so a newcomer sees an MCP tool, its approval card and its
output with no key and no network.

Run it as ``python -m app.demo.mcp_example [--notes-dir FOLDER]`` (stdio). Its tools:

- ``word_count`` (read-only): counts the words, lines and characters of a text;
- ``roll_dice`` (read-only): rolls dice from a seed, the same every time for a seed;
- ``write_note`` (destructive): appends a note to ``notes.txt`` in ``--notes-dir`` (created when
  missing; the folder it was started in without it), so the card asks before every call until
  the tool is allowed.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

SERVER_NAME = "coco-example"
NOTES_FILE = "notes.txt"

_notes_dir: Path | None = None  # set by ``--notes-dir``

server = MCPServer(SERVER_NAME, instructions="Small tools that show how Coco runs MCP tools.")


@server.tool(
    description="Count the words, lines and characters of a text.",
    annotations=ToolAnnotations(read_only_hint=True),
)
def word_count(text: str) -> str:
    words = len(text.split())
    lines = text.count("\n") + 1 if text else 0
    return f"{words} words, {lines} lines, {len(text)} characters"


@server.tool(
    description="Roll dice: how many, with how many sides, from a seed (the same seed gives "
    "the same roll).",
    annotations=ToolAnnotations(read_only_hint=True),
)
def roll_dice(count: int = 2, sides: int = 6, seed: int = 7) -> str:
    count = max(1, min(count, 100))
    sides = max(2, min(sides, 1000))
    rng = random.Random(seed)
    rolls = [rng.randint(1, sides) for _ in range(count)]
    return f"rolled {count}d{sides}: {', '.join(map(str, rolls))} (total {sum(rolls)})"


@server.tool(
    description="Append a note to notes.txt in the server's folder.",
    annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True),
)
def write_note(text: str) -> str:
    folder = _notes_dir or Path.cwd()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / NOTES_FILE
    with path.open("a", encoding="utf-8") as file:
        file.write(text.rstrip("\n") + "\n")
    return f"appended {len(text)} characters to {path}"


def main(argv: list[str] | None = None) -> None:
    global _notes_dir
    parser = argparse.ArgumentParser(prog="python -m app.demo.mcp_example",
                                     description="Coco's example MCP server (stdio).")
    parser.add_argument("--notes-dir", type=Path, default=None,
                        help="where write_note keeps notes.txt (default: the current folder)")
    _notes_dir = parser.parse_args(argv).notes_dir
    server.run("stdio")


if __name__ == "__main__":
    main()
