"""Huge rollout lines are read in steps: lines found without copying the file, long strings
decoded a megabyte at a time, never inside an escape or a UTF-8 sequence, giving exactly what
one parse gives."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from app.core.rollout import reader as rollout
from app.core.rollout.store import OPEN_PROGRESS, OpenProgress, read_rollout


@pytest.fixture
def small_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every line is "huge" and every step tiny, so each boundary case is met often."""
    monkeypatch.setattr(rollout, "HUGE_LINE_BYTES", 100)
    monkeypatch.setattr(rollout, "_HUGE_STRING_BYTES", 64)
    monkeypatch.setattr(rollout, "_DECODE_STEP", 37)
    monkeypatch.setattr(rollout, "READ_STEP", 1000)
    monkeypatch.setattr(rollout, "_FIND_WINDOW", 23)  # a closing quote searched in windows


def tricky_text(length: int, seed: int) -> str:
    rng = random.Random(seed)
    pieces = ["plain ", 'quote " ', "back\\slash ", "\\\\u1234 ", "tab\t", "line\n", "é", "日本",
              "😀", "\u202e", "\x00", "{\"json\": [1, 2]}", "\\n"]
    out: list[str] = []
    while sum(map(len, out)) < length:
        out.append(rng.choice(pieces))
    return "".join(out)


def write_lines(path: Path, values: list[object], ascii_only: bool = False) -> None:
    """One JSON line per value; ``ascii_only`` escapes every non-ASCII character (emoji as
    surrogate pairs), else they are written as UTF-8."""
    path.write_bytes(
        b"".join(
            json.dumps(value, ensure_ascii=ascii_only).encode("utf-8") + b"\n"
            for value in values
        )
    )


@pytest.mark.parametrize("seed", range(6))
def test_a_line_read_in_steps_is_what_one_parse_gives(
    tmp_path: Path, small_steps: None, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = [
        {
            "timestamp": "2026-11-23T00:00:00.000Z",
            "type": "response_item",
            "payload": {
                "item": {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": tricky_text(3000, seed)}],
                },
                "note": tricky_text(40, seed + 100),  # a short string stays as it is
                "parts": [tricky_text(500, seed + 200), 3, None, True],
            },
            "id": f"r{seed}",
        },
        {"timestamp": "t", "type": "event", "payload": {"kind": "warning", "message": "x"}},
    ]
    path = tmp_path / "rollout.jsonl"
    write_lines(path, records, ascii_only=seed % 2 == 0)
    decoded: list[int] = []
    real_decode = rollout._decode_in_steps

    def decode(data: bytes, start: int, end: int) -> str | None:
        text = real_decode(data, start, end)
        decoded.append(-1 if text is None else len(text))
        return text

    monkeypatch.setattr(rollout, "_decode_in_steps", decode)
    progress = OpenProgress()
    token = OPEN_PROGRESS.set(progress)
    try:
        read, warnings = read_rollout(path)
    finally:
        OPEN_PROGRESS.reset(token)
    assert warnings == []
    # The long strings were decoded in steps (not left to one parse).
    assert len(decoded) >= 2 and min(decoded) > 0 and max(decoded) >= 3000
    expected = [json.loads(line) for line in path.read_bytes().splitlines()]
    assert [record.payload for record in read] == [value["payload"] for value in expected]
    # The file was read in steps, and the progress says all of it was read.
    assert (progress.stage, progress.done, progress.total) == (
        "reading", path.stat().st_size, path.stat().st_size,
    )


def test_a_broken_huge_line_is_skipped_with_a_warning(tmp_path: Path, small_steps: None) -> None:
    path = tmp_path / "rollout.jsonl"
    good = json.dumps({"type": "event", "payload": {"kind": "warning", "message": "ok"}}).encode()
    broken = b'{"type": "event", "payload": {"message": "' + b"x" * 500 + b"}\n"
    path.write_bytes(good + b"\n" + broken + good + b"\n")
    read, warnings = read_rollout(path)
    assert [record.line_no for record in read] == [1, 3]
    assert warnings == ["Skipped line 2 of rollout.jsonl: not a valid record"]


@pytest.mark.parametrize("text", ["\\" * 5000, "\ud83d\ude00" * 700, "日本\n" * 900])
def test_strings_of_nothing_but_escapes_read_right(
    tmp_path: Path, small_steps: None, text: str
) -> None:
    """Escaped backslashes, surrogate pairs (written as escapes), escaped CJK: every cut
    falls between two escapes."""
    path = tmp_path / "rollout.jsonl"
    write_lines(path, [{"type": "event", "payload": {"message": text}}], ascii_only=True)
    read, _ = read_rollout(path)
    assert read[0].payload == json.loads(path.read_bytes())["payload"]
