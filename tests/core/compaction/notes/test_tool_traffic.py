"""The files read, the files changed and the commands run, read from tool calls: each newest
first and once, a failed call left out."""

from __future__ import annotations

import json

from app.core.compaction.notes.tool_traffic import newest_first, tool_traffic
from app.core.items import function_call, function_call_output


def call(name: str, call_id: str, **args: object) -> dict[str, object]:
    return function_call(name, json.dumps(args), call_id)


def test_calls_are_sorted_into_changed_read_and_run_newest_first() -> None:
    items = [
        call("read_file", "c1", path="README.md"),
        call("edit_file", "c2", path="app/main.py"),
        call("shell", "c3", command=["pytest", "-q"]),
        call("read_file", "c4", path="docs/guide.md"),
        call("read_file", "c5", path="README.md"),
        call("get_weather", "c6", city="Paris"),  # not about files or commands
    ]
    changed, read, commands = tool_traffic(items)
    assert changed == ["app/main.py"]
    assert read == ["README.md", "docs/guide.md"]  # newest first, each once
    assert commands == ["pytest -q"]


def test_a_patch_names_the_files_it_changes() -> None:
    patch = "*** Begin Patch\n*** Update File: app/a.py\n@@\n*** Add File: app/b.py\n"
    changed, _, _ = tool_traffic([call("apply_patch", "c1", input=patch)])
    assert changed == ["app/b.py", "app/a.py"]


def test_a_failed_call_is_left_out() -> None:
    items = [
        call("read_file", "c1", path="missing.txt"),
        function_call_output("c1", "Error: no such file or directory"),
        call("read_file", "c2", path="there.txt"),
        function_call_output("c2", "contents"),
    ]
    assert tool_traffic(items)[1] == ["there.txt"]


def test_newest_first_puts_new_entries_before_older_ones_each_once() -> None:
    assert newest_first(["a", "b", "a", "c"]) == ["c", "a", "b"]
    assert newest_first(["x"], older=["y", "x", "z"]) == ["x", "y", "z"]
