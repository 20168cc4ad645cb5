"""Read-only workspace tools: confinement, text/binary handling, listing, search, truncation."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from app.core.tools import workspace_files as tools_module
from app.core.tools.workspace import MAX_LIST_ENTRIES, ToolResult, WorkspaceTools

SECRET = "TOP-SECRET-CONTENT"


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace with text, binary and hidden files, and symlinks leading out of it."""
    root = tmp_path / "ws"
    outside = tmp_path / "outside"
    (root / "sub" / "deeper").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text(f"hello {SECRET}\n")
    (root / "a.txt").write_text("hello\nWorld\nfoo bar\n")
    (root / "sub" / "b.py").write_text("def f():\n    return 'HeLLo again'\n")
    (root / "sub" / "deeper" / "c.md").write_text("# title\nnothing here\n")
    (root / ".hidden").write_text("hello hidden\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("hello from git\n")
    (root / "bin.dat").write_bytes(b"hello\x00\x01\x02")
    (root / "latin1.txt").write_bytes(b"hello caf\xe9\n")
    (root / "link_out").symlink_to(outside / "secret.txt")
    (root / "dirlink_out").symlink_to(outside)
    (root / "sub" / "deeper" / "deep_link").symlink_to(Path("../../../outside"))
    (root / "link_in").symlink_to(root / "a.txt")
    return root, outside


@pytest.fixture
def tools(layout: tuple[Path, Path]) -> WorkspaceTools:
    return WorkspaceTools(layout[0])


async def call(tools: WorkspaceTools, name: str, **args: object) -> ToolResult:
    return await tools.call(name, json.dumps(args))


# --- disabled / specs / context -----------------------------------------------------------------


async def test_no_workspace_disables_everything() -> None:
    tools = WorkspaceTools(None)
    assert not tools.enabled
    assert tools.specs() == []
    assert tools.environment_context() == ""
    result = await tools.call("read_file", '{"path": "a.txt"}')
    assert result == ToolResult("no workspace folder is configured", ok=False)
    # A name no tool has is said to be unknown, not blamed on the missing folder.
    assert await tools.call("write_note", "{}") == ToolResult(
        "unknown tool: 'write_note'", ok=False
    )


async def test_missing_workspace_folder_is_reported(tmp_path: Path) -> None:
    tools = WorkspaceTools(tmp_path / "gone")
    assert not tools.enabled and tools.specs() == []
    result = await tools.call("list_directory", "{}")
    assert not result.ok and "does not exist" in result.output


def test_specs_describe_three_function_tools(tools: WorkspaceTools) -> None:
    specs = tools.specs()
    assert [s["name"] for s in specs] == ["list_directory", "read_file", "search_text"]
    for spec in specs:
        assert spec["type"] == "function" and spec["strict"] is False
        assert spec["description"]
        assert spec["parameters"]["type"] == "object"
    by_name = {s["name"]: s["parameters"] for s in specs}
    assert set(by_name["read_file"]["properties"]) == {"path", "start_line", "end_line"}
    assert by_name["read_file"]["required"] == ["path"]
    assert set(by_name["search_text"]["properties"]) == {"query", "path", "max_results"}
    assert by_name["search_text"]["required"] == ["query"]
    assert by_name["list_directory"]["required"] == []


def test_environment_context_names_folder_and_read_only(
    tools: WorkspaceTools, layout: tuple[Path, Path]
) -> None:
    text = tools.environment_context()
    assert text.startswith("<environment_context>") and text.endswith("</environment_context>")
    assert str(layout[0].resolve()) in text
    assert "read-only" in text


# --- confinement --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arg", "path"),
    [
        ("read_file", "path", "../outside/secret.txt"),
        ("read_file", "path", "sub/../../outside/secret.txt"),
        ("read_file", "path", "link_out"),
        ("read_file", "path", "dirlink_out/secret.txt"),
        ("read_file", "path", "sub/deeper/deep_link/secret.txt"),
        ("list_directory", "path", ".."),
        ("list_directory", "path", "dirlink_out"),
        ("list_directory", "path", "sub/deeper/deep_link"),
        ("search_text", "path", "dirlink_out"),
        ("search_text", "path", "link_out"),
        ("search_text", "path", "../outside"),
    ],
)
async def test_paths_leaving_the_workspace_are_refused(
    tools: WorkspaceTools, tool: str, arg: str, path: str
) -> None:
    args: dict[str, object] = {arg: path}
    if tool == "search_text":
        args["query"] = "hello"
    result = await tools.call(tool, json.dumps(args))
    assert result == ToolResult(f"path is outside the workspace: {path}", ok=False)


async def test_absolute_path_outside_is_refused(
    tools: WorkspaceTools, layout: tuple[Path, Path]
) -> None:
    target = str(layout[1] / "secret.txt")
    result = await call(tools, "read_file", path=target)
    assert result == ToolResult(f"path is outside the workspace: {target}", ok=False)
    etc = await call(tools, "list_directory", path="/etc")
    assert etc == ToolResult("path is outside the workspace: /etc", ok=False)


async def test_absolute_path_inside_is_allowed(
    tools: WorkspaceTools, layout: tuple[Path, Path]
) -> None:
    result = await call(tools, "read_file", path=str(layout[0] / "a.txt"))
    assert result.ok and "hello" in result.output


async def test_symlink_staying_inside_is_followed(tools: WorkspaceTools) -> None:
    result = await call(tools, "read_file", path="link_in")
    assert result.ok
    assert "   1\thello" in result.output


async def test_search_never_reads_through_escaping_symlinks(tools: WorkspaceTools) -> None:
    result = await call(tools, "search_text", query=SECRET)
    assert result == ToolResult(f"no matches for {SECRET!r} in .", ok=True)


async def test_listing_does_not_follow_escaping_symlinks(tools: WorkspaceTools) -> None:
    result = await call(tools, "list_directory")
    assert "link_out (symlink to outside the workspace)" in result.output
    assert "dirlink_out (symlink to outside the workspace)" in result.output
    assert "secret.txt" not in result.output


async def test_nul_byte_in_path_is_a_clear_error(tools: WorkspaceTools) -> None:
    result = await call(tools, "read_file", path="a\x00.txt")
    assert not result.ok and result.output.startswith("invalid path")


# --- read_file ----------------------------------------------------------------------------------


async def test_read_file_numbers_lines_with_a_header(tools: WorkspaceTools) -> None:
    result = await call(tools, "read_file", path="a.txt")
    assert result == ToolResult(
        "a.txt: lines 1-3 of 3\n   1\thello\n   2\tWorld\n   3\tfoo bar", ok=True
    )


async def test_read_file_line_range(tools: WorkspaceTools) -> None:
    result = await call(tools, "read_file", path="a.txt", start_line=2, end_line=2)
    assert result == ToolResult("a.txt: lines 2-2 of 3\n   2\tWorld", ok=True)


async def test_read_file_range_past_eof_is_clamped(tools: WorkspaceTools) -> None:
    result = await call(tools, "read_file", path="a.txt", start_line=2, end_line=99)
    assert result == ToolResult("a.txt: lines 2-3 of 3\n   2\tWorld\n   3\tfoo bar", ok=True)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"start_line": 0}, "start_line must be at least 1"),
        ({"start_line": -3}, "start_line must be at least 1"),
        ({"start_line": 3, "end_line": 2}, "end_line (2) is before start_line (3)"),
        ({"start_line": "2"}, "start_line must be an integer"),
        ({"start_line": True}, "start_line must be an integer"),
        ({"start_line": 10}, "start_line (10) is past the end of a.txt (3 lines)"),
    ],
)
async def test_read_file_rejects_bad_ranges(
    tools: WorkspaceTools, args: dict[str, object], message: str
) -> None:
    result = await call(tools, "read_file", path="a.txt", **args)
    assert not result.ok
    assert message in result.output


async def test_read_file_strips_crlf(tools: WorkspaceTools, layout: tuple[Path, Path]) -> None:
    (layout[0] / "dos.txt").write_bytes(b"one\r\ntwo\r\n")
    result = await call(tools, "read_file", path="dos.txt")
    assert result.output == "dos.txt: lines 1-2 of 2\n   1\tone\n   2\ttwo"


async def test_read_empty_file(tools: WorkspaceTools, layout: tuple[Path, Path]) -> None:
    (layout[0] / "empty.txt").write_text("")
    result = await call(tools, "read_file", path="empty.txt")
    assert result == ToolResult("empty.txt: empty file (0 lines)", ok=True)


async def test_binary_files_are_not_shown(tools: WorkspaceTools) -> None:
    result = await call(tools, "read_file", path="bin.dat")
    assert result == ToolResult("binary file, not shown: bin.dat", ok=False)


async def test_a_latin1_file_is_decoded_and_the_encoding_named(tools: WorkspaceTools) -> None:
    result = await call(tools, "read_file", path="latin1.txt")
    assert result == ToolResult(
        "latin1.txt: lines 1-1 of 1 (not UTF-8: decoded as Windows-1252 (Latin-1))\n"
        "   1\thello café",
        ok=True,
    )


async def test_a_latin1_line_far_into_a_file_switches_the_whole_read(
    tools: WorkspaceTools, layout: tuple[Path, Path]
) -> None:
    (layout[0] / "late.txt").write_bytes(b"ok line\n" * 5000 + b"na\xefve\n")
    result = await call(tools, "read_file", path="late.txt", start_line=5000)
    assert result.output.endswith("5000\tok line\n5001\tnaïve")
    assert "decoded as Windows-1252" in result.output


async def test_search_finds_text_in_a_latin1_file(tools: WorkspaceTools) -> None:
    result = await call(tools, "search_text", query="CAFÉ")
    assert result == ToolResult("latin1.txt:1: hello café", ok=True)


@pytest.mark.parametrize("tail", [b"\x01\x02\x03\xff\n", b"late \x00 nul\n"])
async def test_control_bytes_far_into_a_file_count_as_binary(
    tools: WorkspaceTools, layout: tuple[Path, Path], tail: bytes
) -> None:
    (layout[0] / "late.txt").write_bytes(b"ok line\n" * 5000 + tail)
    result = await call(tools, "read_file", path="late.txt")
    assert result == ToolResult("binary file, not shown: late.txt", ok=False)


def _bytes_read_by_this_process() -> int:
    with open("/proc/self/io") as io:
        fields = dict(line.split(": ") for line in io.read().splitlines())
    return int(fields["rchar"])


@pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="needs Linux's /proc/self/io")
async def test_a_line_range_stops_reading_at_its_end(
    tools: WorkspaceTools, layout: tuple[Path, Path]
) -> None:
    """A text header, then 256 MB of sparse nothing: reading line 1 must not read the rest."""
    path = layout[0] / "sparse.log"
    header = b"".join(b"header line %04d of the log, padding it.\n" % n for n in range(1, 301))
    with path.open("wb") as file:
        file.write(header)
        file.truncate(256 * 1024 * 1024)
    before = _bytes_read_by_this_process()

    result = await call(tools, "read_file", path="sparse.log", start_line=2, end_line=3)

    read = _bytes_read_by_this_process() - before
    assert result.ok
    assert result.output.splitlines() == [
        f"sparse.log: lines 2-3 of a {256 * 1024 * 1024}-byte file (more lines follow)",
        "   2\theader line 0002 of the log, padding it.",
        "   3\theader line 0003 of the log, padding it.",
    ]
    assert read < 1024 * 1024, f"read {read} bytes for two lines"


async def test_an_overlong_line_is_cut_not_held(layout: tuple[Path, Path]) -> None:
    tools = WorkspaceTools(layout[0], output_budget_tokens=10**6)  # no middle truncation
    line = b"x" * (tools_module.MAX_LINE_BYTES + 5000)
    (layout[0] / "one.min.js").write_bytes(line + b"\nsecond\n")
    result = await call(tools, "read_file", path="one.min.js", start_line=1, end_line=2)
    lines = result.output.splitlines()
    assert lines[0] == "one.min.js: lines 1-2 of 2"
    assert lines[1].endswith("x … [line cut: 5000 more bytes]")
    assert len(lines[1]) < tools_module.MAX_LINE_BYTES + 100
    assert lines[2] == "   2\tsecond"


async def test_lines_deep_in_a_file_are_found_across_chunks(
    tools: WorkspaceTools, layout: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tools_module, "READ_CHUNK_BYTES", 7)  # chunk edges fall mid-line
    (layout[0] / "n.txt").write_text("".join(f"line {n}\n" for n in range(1, 3001)) + "end")
    result = await call(tools, "read_file", path="n.txt", start_line=2999, end_line=3001)
    assert (
        result.output
        == "n.txt: lines 2999-3001 of 3001\n2999\tline 2999\n3000\tline 3000\n3001\tend"
    )
    past = await call(tools, "read_file", path="n.txt", start_line=3002)
    assert past == ToolResult("start_line (3002) is past the end of n.txt (3001 lines)", ok=False)


async def test_an_open_ended_range_stops_at_the_read_limit(
    tools: WorkspaceTools, layout: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tools_module, "MAX_READ_BYTES", 40)
    (layout[0] / "n.txt").write_text("".join(f"line {n}\n" for n in range(1, 101)))
    result = await call(tools, "read_file", path="n.txt", start_line=10)
    lines = result.output.splitlines()
    assert lines[0] == "n.txt: lines 10-14 of a 792-byte file (more lines follow)"
    assert lines[-1] == (
        "(stopped after line 14: more than 40 bytes were read; continue with start_line=15)"
    )


async def test_missing_file(tools: WorkspaceTools) -> None:
    result = await call(tools, "read_file", path="nope.txt")
    assert result == ToolResult("no such file: nope.txt", ok=False)


async def test_read_file_on_a_directory(tools: WorkspaceTools) -> None:
    result = await call(tools, "read_file", path="sub")
    assert not result.ok
    assert "is a directory, not a file: sub" in result.output


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
async def test_read_file_refuses_a_fifo_instead_of_blocking(
    tools: WorkspaceTools, layout: tuple[Path, Path]
) -> None:
    os.mkfifo(layout[0] / "pipe")
    result = await call(tools, "read_file", path="pipe")
    assert result == ToolResult("not a regular file: pipe", ok=False)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
async def test_search_skips_a_fifo_instead_of_blocking(
    tools: WorkspaceTools, layout: tuple[Path, Path]
) -> None:
    os.mkfifo(layout[0] / "sub" / "pipe")
    whole = await call(tools, "search_text", query="hello", path="sub")
    assert whole == ToolResult("sub/b.py:2: return 'HeLLo again'", ok=True)
    direct = await call(tools, "search_text", query="hello", path="sub/pipe")
    assert direct == ToolResult("no matches for 'hello' in sub/pipe", ok=True)


# --- list_directory -----------------------------------------------------------------------------


async def test_list_directory_root(tools: WorkspaceTools) -> None:
    result = await tools.call("list_directory", "")  # no arguments at all is fine
    assert result.ok
    assert result.output.splitlines() == [
        "./ (9 entries)",
        ".git/",  # listed, not descended
        ".hidden  (13 bytes)",
        "a.txt  (20 bytes)",
        "bin.dat  (8 bytes)",
        "dirlink_out (symlink to outside the workspace)",
        "latin1.txt  (11 bytes)",
        "link_in  (20 bytes) (symlink)",
        "link_out (symlink to outside the workspace)",
        "sub/",
    ]


async def test_list_directory_subfolder_and_errors(tools: WorkspaceTools) -> None:
    sub = await call(tools, "list_directory", path="sub")
    assert sub.output.splitlines() == ["sub/ (2 entries)", "b.py  (34 bytes)", "deeper/"]
    missing = await call(tools, "list_directory", path="nope")
    assert missing == ToolResult("no such directory: nope", ok=False)
    file = await call(tools, "list_directory", path="a.txt")
    assert not file.ok and "not a directory: a.txt" in file.output


async def test_list_directory_is_capped(tools: WorkspaceTools, layout: tuple[Path, Path]) -> None:
    many = layout[0] / "many"
    many.mkdir()
    for i in range(MAX_LIST_ENTRIES + 7):
        (many / f"f{i:04d}").write_text("")
    result = await call(tools, "list_directory", path="many")
    lines = result.output.splitlines()
    assert lines[0] == f"many/ ({MAX_LIST_ENTRIES + 7} entries)"
    assert len(lines) == 1 + MAX_LIST_ENTRIES + 1
    assert lines[1] == "f0000  (0 bytes)"
    assert "7 more entries not shown" in lines[-1]


# --- search_text --------------------------------------------------------------------------------


async def test_search_is_case_insensitive_and_skips_git_and_binary(tools: WorkspaceTools) -> None:
    result = await call(tools, "search_text", query="HELLO")
    assert result.ok
    assert result.output.splitlines() == [
        ".hidden:1: hello hidden",
        "a.txt:1: hello",
        "latin1.txt:1: hello café",  # Latin-1 text is text, bin.dat is not
        "link_in:1: hello",
        "sub/b.py:2: return 'HeLLo again'",
    ]


async def test_search_under_a_path_or_a_file(tools: WorkspaceTools) -> None:
    sub = await call(tools, "search_text", query="hello", path="sub")
    assert sub.output == "sub/b.py:2: return 'HeLLo again'"
    one = await call(tools, "search_text", query="world", path="a.txt")
    assert one.output == "a.txt:2: World"


async def test_search_skips_huge_files(tools: WorkspaceTools, layout: tuple[Path, Path]) -> None:
    (layout[0] / "huge.log").write_text("needle\n" + "x" * (2 * 1024 * 1024))
    (layout[0] / "small.log").write_text("needle\n")
    result = await call(tools, "search_text", query="needle")
    assert result.output == "small.log:1: needle"


async def test_search_caps_results_with_a_note(
    tools: WorkspaceTools, layout: tuple[Path, Path]
) -> None:
    (layout[0] / "rep.txt").write_text("match\n" * 30)
    result = await call(tools, "search_text", query="match", max_results=5)
    lines = result.output.splitlines()
    assert lines[:5] == [f"rep.txt:{n}: match" for n in range(1, 6)]
    assert lines[5] == "(stopped at 5 matches; narrow the query or the path)"
    assert len(lines) == 6


async def test_search_default_cap_is_50(tools: WorkspaceTools, layout: tuple[Path, Path]) -> None:
    (layout[0] / "rep.txt").write_text("match\n" * 80)
    result = await call(tools, "search_text", query="match")
    assert len(result.output.splitlines()) == 51


async def test_search_without_matches_and_bad_queries(tools: WorkspaceTools) -> None:
    none = await call(tools, "search_text", query="zebra")
    assert none == ToolResult("no matches for 'zebra' in .", ok=True)
    empty = await call(tools, "search_text", query="  ")
    assert empty == ToolResult("query must not be empty", ok=False)
    missing = await call(tools, "search_text", query="x", path="nope")
    assert missing == ToolResult("no such file or directory: nope", ok=False)


# --- output budget, arguments -------------------------------------------------------------------


async def test_huge_output_is_middle_truncated(layout: tuple[Path, Path]) -> None:
    (layout[0] / "big.txt").write_text("".join(f"line {i} of the big file\n" for i in range(5000)))
    tools = WorkspaceTools(layout[0], output_budget_tokens=200)
    result = await call(tools, "read_file", path="big.txt")
    assert result.ok
    head, marker, tail = _split_marker(result.output)
    assert head.startswith("big.txt: lines 1-5000 of 5000\n   1\tline 0 of the big file\n")
    assert tail.endswith("5000\tline 4999 of the big file")
    assert marker.endswith(" tokens truncated…")
    assert len(head.encode()) + len(tail.encode()) == 200 * 4


def _split_marker(text: str) -> tuple[str, str, str]:
    match = re.search(r"…\d+ tokens truncated…", text)
    assert match is not None
    return text[: match.start()], match.group(0), text[match.end() :]


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("read_file", "{not json", "invalid JSON arguments for read_file"),
        ("read_file", "[1, 2]", "arguments for read_file must be a JSON object"),
        ("read_file", "{}", "missing required argument: path"),
        ("read_file", '{"path": 5}', "argument path must be a string"),
        ("search_text", '{"path": "."}', "missing required argument: query"),
        ("search_text", '{"query": "a", "max_results": 0}', "max_results must be at least 1"),
        ("delete_everything", "{}", "unknown tool: 'delete_everything'"),
    ],
)
async def test_bad_calls_return_errors_not_exceptions(
    tools: WorkspaceTools, name: str, arguments: str, message: str
) -> None:
    result = await tools.call(name, arguments)
    assert not result.ok
    assert message in result.output
