"""A huge line of JSON parsed a piece at a time, so the thread parsing it never holds the
interpreter for long.

A parser written in C (orjson, ``json``) holds the interpreter lock for the whole of one call:
a 20 MB MCP result (its 10 MB text twice, as content and as structured content) took 28 ms,
and the window's thread, whatever thread the parse ran in, waited all of it. Such a line is
mostly a few long strings. :func:`loads_in_pieces` finds them, decodes each in pieces of
:data:`PIECE_BYTES` (one short call each, the lock free to change hands between them), and
parses what is left around them, which is small. The value is the one ``fastjson.loads``
gives; a line that is not valid JSON raises as it does.
"""

from __future__ import annotations

import secrets
from typing import Any

from . import fastjson

LONG_STRING_BYTES = 64 * 1024  # a string this long is decoded in pieces
PIECE_BYTES = 256 * 1024  # the bytes of a long string decoded in one call (well under 1 ms)
_BACKSLASH = 0x5C
_ESCAPE_BYTES = 12  # the longest escape: a surrogate pair, \uD83D\uDE00


def loads_in_pieces(data: bytes | bytearray) -> Any:
    """The JSON value of ``data`` (as :func:`fastjson.loads`), its long strings decoded in
    pieces. Raises ``ValueError`` when ``data`` is not JSON."""
    longs: list[tuple[int, int]] = []  # (start, end) of each long string's body
    pos = 0
    while (start := data.find(b'"', pos)) >= 0:  # outside strings, a quote opens one
        end = _string_end(data, start + 1)
        if end < 0:
            break  # unterminated: the whole parse below says where
        if end - start > LONG_STRING_BYTES:
            longs.append((start + 1, end))
        pos = end + 1
    if not longs:
        return fastjson.loads(data)
    tag = f"\\u0000coco-long-string-{secrets.token_hex(8)}-"
    skeleton = bytearray()
    pos = 0
    for number, (start, end) in enumerate(longs):
        skeleton += data[pos:start]
        skeleton += f"{tag}{number}".encode("ascii")
        pos = end
    skeleton += data[pos:]
    strings = [_decode_string(data, start, end) for start, end in longs]
    return _put_back(fastjson.loads(bytes(skeleton)), "\x00" + tag[6:], strings)


def _string_end(data: bytes | bytearray, pos: int) -> int:
    """Where the string whose body begins at ``pos`` ends (its closing quote), or -1."""
    while (quote := data.find(b'"', pos)) >= 0:
        before = quote
        while data[before - 1] == _BACKSLASH:
            before -= 1
        if (quote - before) % 2 == 0:  # an even run of backslashes escapes only itself
            return quote
        pos = quote + 1
    return -1


def _decode_string(data: bytes | bytearray, start: int, end: int) -> str:
    """The string whose JSON body is ``data[start:end]``, decoded a piece at a time."""
    pieces: list[str] = []
    while start < end:
        cut = end if end - start <= PIECE_BYTES else _safe_cut(data, start, start + PIECE_BYTES)
        pieces.append(fastjson.loads(b'"' + data[start:cut] + b'"'))
        start = cut
    return "".join(pieces)


def _safe_cut(data: bytes | bytearray, start: int, cut: int) -> int:
    """A place at or before ``cut`` that splits neither an escape (nor a surrogate pair of
    escapes) nor a UTF-8 character."""
    backslash = data.rfind(b"\\", max(start, cut - _ESCAPE_BYTES), cut)
    if backslash >= 0:  # an escape may run past the cut: cut before its run of backslashes
        run = backslash
        while run > start and data[run - 1] == _BACKSLASH:
            run -= 1
        if run == start:  # backslashes from the piece's start: cut after whole pairs of them
            return start + (min(backslash + 1, cut) - start) // 2 * 2
        cut = run
        if cut - 6 >= start and _high_surrogate(data, cut - 6):
            # The pair's halves stay together: cut before it, or after it when it opens the piece.
            cut = cut - 6 if cut - 6 > start else cut + 6
    while 0x80 <= data[cut] <= 0xBF:  # a UTF-8 continuation byte (a piece holds 256 KB)
        cut -= 1
    return cut


def _high_surrogate(data: bytes | bytearray, at: int) -> bool:
    """Whether an escape ``\\uD800`` to ``\\uDBFF`` begins at ``at`` (its backslash not the
    second of an escaped backslash)."""
    if data[at:at + 2] != b"\\u" or data[at + 2:at + 4].lower() not in (b"d8", b"d9", b"da", b"db"):
        return False
    run = at
    while data[run - 1] == _BACKSLASH:
        run -= 1
    return (at - run) % 2 == 0  # an even run before it: pairs, so this backslash escapes


def _put_back(value: Any, tag: str, strings: list[str]) -> Any:
    """``value`` with each placeholder ``tag + n`` (a key or a value) replaced by
    ``strings[n]``."""
    if isinstance(value, str):
        return strings[int(value[len(tag):])] if value.startswith(tag) else value
    if isinstance(value, list):
        return [_put_back(item, tag, strings) for item in value]
    if isinstance(value, dict):
        return {_put_back(k, tag, strings): _put_back(v, tag, strings) for k, v in value.items()}
    return value
