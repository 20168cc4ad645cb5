"""Workspace files read as text: excerpts by line range in UTF-8 or Windows-1252, binary
refused, long lines cut, and the lines matching a search."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.tools import workspace_files
from app.core.tools.calls import ToolError
from app.core.tools.workspace_files import _file_excerpt, _format_excerpt, _matching_lines


def test_an_excerpt_holds_the_range_and_knows_the_file_length(tmp_path: Path) -> None:
    path = tmp_path / "n.txt"
    path.write_text("".join(f"line {n}\n" for n in range(1, 11)))
    excerpt = _file_excerpt(path, "n.txt", 3, 5)
    assert (excerpt.lines, excerpt.total, excerpt.at_eof, excerpt.encoding) == (
        ["line 3", "line 4", "line 5"], 10, True, "utf-8",
    )
    assert _format_excerpt(excerpt, "n.txt", "n.txt", 3, path.stat().st_size) == (
        "n.txt: lines 3-5 of 10\n   3\tline 3\n   4\tline 4\n   5\tline 5"
    )


def test_a_file_that_is_not_utf8_is_read_as_windows_1252(tmp_path: Path) -> None:
    path = tmp_path / "latin.txt"
    path.write_bytes("café\r\nnaïve\r\n".encode("cp1252"))
    excerpt = _file_excerpt(path, "latin.txt", 1, None)
    assert (excerpt.lines, excerpt.encoding) == (["café", "naïve"], "cp1252")
    header = _format_excerpt(excerpt, "latin.txt", "latin.txt", 1, 13).splitlines()[0]
    assert header == "latin.txt: lines 1-2 of 2 (not UTF-8: decoded as Windows-1252 (Latin-1))"


@pytest.mark.parametrize("content", [b"text\x00more\n", b"\x81\x02\x03 not text\n"])
def test_binary_content_is_refused_in_words(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "blob.bin"
    path.write_bytes(content)
    with pytest.raises(ToolError, match=r"^binary file, not shown: blob.bin$"):
        _file_excerpt(path, "blob.bin", 1, None)


def test_a_long_line_is_cut_and_its_rest_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(workspace_files, "MAX_LINE_BYTES", 10)
    monkeypatch.setattr(workspace_files, "READ_CHUNK_BYTES", 4)
    path = tmp_path / "long.txt"
    path.write_text("0123456789abcdefghij\nshort\n")
    excerpt = _file_excerpt(path, "long.txt", 1, None)
    assert excerpt.lines == ["0123456789 … [line cut: 10 more bytes]", "short"]


def test_matching_lines_ignore_case_and_skip_binary_files(tmp_path: Path) -> None:
    text = tmp_path / "a.txt"
    text.write_text("Hello\nnothing\nsay HELLO again\n")
    assert _matching_lines(text, "hello") == [(1, "Hello"), (3, "say HELLO again")]
    assert _matching_lines(text, "absent") == []
    binary = tmp_path / "b.bin"
    binary.write_bytes(b"hello\x00hello\n")
    assert _matching_lines(binary, "hello") == []
    assert _matching_lines(tmp_path / "missing.txt", "hello") == []
