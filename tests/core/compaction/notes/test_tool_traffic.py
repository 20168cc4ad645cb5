"""The files read, the files changed and the commands run, read from tool calls: each newest
first and once, a failed call left out."""

from __future__ import annotations

import json

from app.core.compaction.notes.tool_traffic import (
    MAX_COMMAND_CHARS,
    MAX_PATH_CHARS,
    newest_first,
    tool_traffic,
)
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


def test_a_name_that_writes_wins_over_one_that_runs_or_reads() -> None:
    # "run_and_update" both runs and writes: it changed a file. "read_shell_log" runs.
    items = [
        call("run_and_update", "c1", path="conf.yml", command="make"),
        call("read_shell_log", "c2", command="tail log", path="log.txt"),
        call("VIEW_FILE", "c3", path="Notes.md"),  # names are read in any case
    ]
    changed, read, commands = tool_traffic(items)
    assert (changed, read, commands) == (["conf.yml"], ["Notes.md"], ["tail log"])


def test_a_search_tool_is_a_read_even_with_a_shell_word_in_its_name() -> None:
    items = [call("search_command_history", "c1", path="history.txt", command="ls")]
    assert tool_traffic(items) == ([], ["history.txt"], [])


def test_a_command_is_read_from_command_then_cmd_then_input_and_a_list_is_joined() -> None:
    items = [
        call("bash", "c1", cmd="git status", input="ignored"),
        call("exec", "c2", input="ls -la"),
        call("terminal", "c3", command=["make", "-j", 4]),
        call("shell", "c4", command="   "),  # blank: nothing was run
        call("shell", "c5", command=42),  # not a command
    ]
    assert tool_traffic(items)[2] == ["make -j 4", "ls -la", "git status"]


def test_the_first_path_argument_named_is_the_one_kept_and_blank_ones_are_skipped() -> None:
    items = [
        call("write_file", "c1", file="f.txt", path="a.txt"),
        call("write_file", "c0", file="  ", file_path="b.txt"),
        call("open_doc", "c2", destination="d.txt", source="s.txt"),
        call("read_file", "c3", dest=7, target="t.txt"),
        call("read_file", "c4", title="no_path_argument.txt"),
    ]
    changed, read, _ = tool_traffic(items)
    assert changed == ["b.txt", "a.txt"]  # "path" before "file"; a blank "file" skipped
    assert read == ["t.txt", "s.txt"]


def test_long_paths_and_commands_are_cut_at_their_limit_with_spaces_folded() -> None:
    exact = "p" * MAX_PATH_CHARS
    over = "q" * (MAX_PATH_CHARS + 1)
    command = "echo   a\n\tb  " + "c" * MAX_COMMAND_CHARS
    items = [
        call("read_file", "c1", path=exact),
        call("read_file", "c2", path=over),
        call("shell", "c3", command=command),
    ]
    _, read, commands = tool_traffic(items)
    assert read == ["q" * (MAX_PATH_CHARS - 1) + "…", exact]
    folded = "echo a b " + "c" * MAX_COMMAND_CHARS
    assert commands == [folded[: MAX_COMMAND_CHARS - 1] + "…"]
    assert len(commands[0]) == MAX_COMMAND_CHARS


def test_a_local_shell_call_is_a_command_and_other_item_kinds_are_not_calls() -> None:
    items = [
        {"type": "local_shell_call", "call_id": "c1",
         "action": {"type": "exec", "command": ["ls", "-1", 2]}},
        {"type": "local_shell_call", "call_id": "c2", "action": {"command": "not a list"}},
        {"type": "local_shell_call", "call_id": "c3", "action": "ls"},
        {"type": "message", "role": "user", "name": "read_file", "arguments": '{"path": "x"}'},
        {"type": "custom_tool_call", "call_id": "c4", "name": "edit", "input": '{"path": "y"}'},
    ]
    assert tool_traffic(items) == (["y"], [], ["ls -1 2"])


def test_arguments_may_be_a_mapping_plain_text_or_json_that_is_not_an_object() -> None:
    items = [
        {"type": "function_call", "call_id": "c1", "name": "read_file", "arguments": {"path": "m"}},
        {"type": "custom_tool_call", "call_id": "c2", "name": "shell", "input": "uname -a"},
        call_raw := {"type": "function_call", "call_id": "c3", "name": "read", "arguments": "[1]"},
        {"type": "function_call", "call_id": "c4", "name": "read", "arguments": 5},
    ]
    assert call_raw["arguments"] == "[1]"
    assert tool_traffic(items) == ([], ["m"], ["uname -a"])


def test_a_patch_needs_its_marker_and_may_come_as_patch() -> None:
    patch = "*** Delete File: old.py\n"
    items = [
        call("apply", "c1", patch=patch),
        call("write_note", "c2", input="Update File: not a patch", path="note.txt"),
    ]
    changed, _, _ = tool_traffic(items)
    assert changed == ["note.txt", "old.py"]


def test_what_makes_an_output_say_its_call_failed() -> None:
    said = {
        "c1": "Error: denied",
        "c2": "FAILED to open",
        "c3": "the read failed: disk",
        "c4": "cat: x: No such file or directory",
        "c5": "x" * 189 + "no such file",  # its last letter is past the 200 read
        "c6": "all fine, nothing failed",
        "c7": "",
    }
    items = []
    for call_id, output in said.items():
        items += [call("read_file", call_id, path=f"{call_id}.txt"),
                  function_call_output(call_id, output)]
    items.append({"type": "function_call_output", "call_id": "c8", "output": ["Error"]})
    items.append(call("read_file", "c8", path="c8.txt"))
    assert tool_traffic(items)[1] == ["c8.txt", "c7.txt", "c6.txt", "c5.txt"]


def test_a_tool_that_neither_reads_writes_nor_runs_is_passed_over() -> None:
    items = [
        call("summarize", "c1", path="x.md"),
        {"type": "function_call", "call_id": "c2", "arguments": '{"path": "n.md"}'},  # no name
        call("read_file", "c3", path="y.md"),
    ]
    assert tool_traffic(items) == ([], ["y.md"], [])
