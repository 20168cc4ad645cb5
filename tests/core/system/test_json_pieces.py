"""A huge JSON line parsed in pieces gives exactly the value a whole parse gives, and no
piece is decoded in one call longer than its limit."""

from __future__ import annotations

import json
import random
from typing import Any

import orjson
import pytest

from app.core.system import fastjson, json_pieces

# Characters whose JSON escapes a cut may split: quotes, backslashes, control characters,
# two-byte and three-byte UTF-8, and characters outside the BMP (a surrogate pair escaped).
ALPHABET = ['"', "\\", "\n", "\t", "\x00", "\x1f", "é", "中", "😀", "𝄞", "a", "b", " ", "u",
            "d", "8", "/"]


def _text(rng: random.Random, length: int) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(length))


def _value(rng: random.Random) -> dict[str, Any]:
    long_one = _text(rng, rng.randint(300, 900))
    return {
        "jsonrpc": "2.0", "id": rng.randint(1, 99),
        "result": {
            "content": [{"type": "text", "text": long_one}, {"type": "text", "text": "short"}],
            "structuredContent": {"result": long_one, "n": [1, 2.5, None, True],
                                  _text(rng, 400): "a long key"},
            "isError": False,
        },
    }


@pytest.fixture
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Strings over 100 bytes are long, decoded 17 bytes at a time (odd, so cuts fall
    everywhere); the length of every piece decoded is kept."""
    monkeypatch.setattr(json_pieces, "LONG_STRING_BYTES", 100)
    monkeypatch.setattr(json_pieces, "PIECE_BYTES", 17)
    decoded: list[int] = []
    whole = fastjson.loads

    def loads(data: Any) -> Any:
        decoded.append(len(data))
        return whole(data)

    monkeypatch.setattr(json_pieces.fastjson, "loads", loads)
    return decoded


@pytest.mark.parametrize("ascii_only", [False, True])
def test_the_value_is_the_whole_parses_at_every_cut(small_pieces: list[int],
                                                    ascii_only: bool) -> None:
    rng = random.Random(7)
    for _ in range(60):
        value = _value(rng)
        line = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8")
        small_pieces.clear()
        assert json_pieces.loads_in_pieces(line) == json.loads(line) == value
        # The long strings went in pieces (17 bytes and their quotes), the rest in one
        # skeleton parse much shorter than the line.
        *pieces, skeleton = small_pieces
        assert len(pieces) > 40 and max(pieces) <= 17 + 2
        assert skeleton < len(line) / 3


def test_a_line_without_long_strings_is_parsed_whole(small_pieces: list[int]) -> None:
    line = orjson.dumps({"a": ["x" * 90, 3], "b": {"c": "y" * 99}})
    assert json_pieces.loads_in_pieces(line) == orjson.loads(line)
    assert small_pieces == [len(line)]


def test_an_escaped_backslash_before_a_quote_ends_the_string(small_pieces: list[int]) -> None:
    value = {"a": "\\" * 301, "b": "x\\" * 150 + '"', "c": '\\"' * 120}
    line = orjson.dumps(value)
    assert json_pieces.loads_in_pieces(line) == value


def test_a_surrogate_pair_is_never_split(small_pieces: list[int]) -> None:
    for shift in range(17):  # the pair at every position relative to the cuts
        value = {"t": "a" * shift + "😀" * 60}
        line = json.dumps(value, ensure_ascii=True).encode()
        assert json_pieces.loads_in_pieces(line) == value


@pytest.mark.parametrize("line", [
    b'{"a": "' + b"x" * 500,  # unterminated
    b'{"a": "' + b"x" * 500 + b'" "b"}',  # a missing colon
    b'{"a": "' + b"x" * 200 + b'\\q' + b"x" * 200 + b'"}',  # a bad escape in a long string
    b"not json",
])
def test_what_is_not_json_raises_as_a_whole_parse_does(small_pieces: list[int],
                                                       line: bytes) -> None:
    with pytest.raises(ValueError):
        fastjson.loads(line)
    with pytest.raises(ValueError):
        json_pieces.loads_in_pieces(line)


def test_a_string_shaped_like_the_placeholder_is_kept(small_pieces: list[int]) -> None:
    value = {"a": "x" * 300, "b": "\x00coco-long-string-0123456789abcdef-0"}
    assert json_pieces.loads_in_pieces(orjson.dumps(value)) == value


def test_the_real_limits_keep_each_call_short() -> None:
    text = "2026-11-28 INFO processed batch 41872 in 12.4 ms, \"queue\" depth 3 é\n" * 40_000
    line = orjson.dumps({"result": {"content": [{"type": "text", "text": text}],
                                    "structuredContent": {"result": text}}})
    assert len(line) > 4 * json_pieces.PIECE_BYTES
    assert json_pieces.loads_in_pieces(line) == orjson.loads(line)
