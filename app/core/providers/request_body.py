"""A request body serialized without holding the window's thread for long.

A long conversation's body is megabytes of JSON (a 5 000-turn history: 10-15 ms to write and
as long again to look through for images, in one go, before every request). :func:`encode_request`
writes it item by item, handing the event loop over every :data:`STEP_BYTES`, so the window
draws between the steps.

A body holding images is serialized without holding the interpreter for long.

``json.dumps`` scans every character of a string for what to escape, in one C call that
never lets another thread run: for a message with ten screenshots (20 MB of data URLs) that
was 120-160 ms, on the thread the window draws with. The data URLs need no escaping (base64
after an ASCII header), so :func:`encode_body` serializes the body with a short placeholder
for each, then joins the pieces: every step is a copy of at most one image, short enough for
the interpreter to be handed over between them. It runs in a worker thread.

Nor are the pieces joined into one ``bytes``: ten screenshots make a body of 30-40 MB, and
copying it into one object is a single call of 15-25 ms (mostly the fresh memory's page
faults) that holds the interpreter, once in the worker and once more on the event loop.
:func:`encode_request` keeps each big data URL as a piece of its own (the rest joined between
them) and hands back ``BodyPieces``, which the client sends piece by piece with the body's
``Content-Length`` (``streamed``): what goes over the wire is the same bytes.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from typing import Any

from ..system.fastjson import dumps

BIG_STRING = 64 * 1024  # a data URL this long or longer is joined in raw
STEP_BYTES = 512 * 1024  # JSON written between two turns of the event loop
STEP_ITEMS = 400  # items looked through and written between two turns, however small
_PLACEHOLDER = "\ue000coco-raw-{}\ue000"
_SPLIT = re.compile('"\ue000coco-raw-(\\d+)\ue000"')
# Characters of a data URL that JSON writes as they are: base64's, and its header's.
_PLAIN = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=:;,.-_"


def has_big_strings(body: object) -> bool:
    """Whether ``body`` holds a data URL worth joining in raw (a quick walk, no copying)."""
    if isinstance(body, str):
        return len(body) >= BIG_STRING and body.startswith("data:")
    if isinstance(body, dict):
        return any(has_big_strings(value) for value in body.values())
    if isinstance(body, list):
        return any(has_big_strings(value) for value in body)
    return False


def _plain_bytes(text: str) -> bytes | None:
    """A data URL's bytes when JSON writes all its characters as they are (base64 after a
    plain header: no quote, backslash, control or non-ASCII character), else None."""
    if not (text.isascii() and text.startswith("data:")):
        return None
    data = text.encode("ascii")
    return None if data.translate(None, _PLAIN) else data


def _swap(body: Any, raw: list[bytes]) -> Any:
    """``body`` with each big data URL replaced by a placeholder naming its place in ``raw``."""
    if isinstance(body, str):
        data = _plain_bytes(body) if len(body) >= BIG_STRING else None
        if data is not None:
            raw.append(data)
            return _PLACEHOLDER.format(len(raw) - 1)
        return body
    if isinstance(body, dict):
        return {key: _swap(value, raw) for key, value in body.items()}
    if isinstance(body, list):
        return [_swap(value, raw) for value in body]
    return body


def body_pieces(body: Any) -> list[bytes]:
    """``body`` as the JSON bytes the API client sends (UTF-8, compact separators, as
    ``json.dumps(..., ensure_ascii=False, separators=(",", ":"))``), in pieces: the big data
    URLs as they are (never scanned), the JSON around them."""
    raw: list[bytes] = []
    skeleton = json.dumps(
        _swap(body, raw), ensure_ascii=False, separators=(",", ":"), allow_nan=False
    )
    pieces = _SPLIT.split(skeleton)
    out: list[bytes] = []
    for index, piece in enumerate(pieces):
        if index % 2:
            out += (b'"', raw[int(piece)], b'"')
        elif piece:
            out.append(piece.encode("utf-8"))
    return out


def encode_body(body: Any) -> bytes:
    """:func:`body_pieces` joined: the whole body as one ``bytes``."""
    return b"".join(body_pieces(body))


class BodyPieces:
    """A request body in pieces (the big data URLs each one piece), sent as they are: an
    async iterable the HTTP client reads piece by piece, each time it sends the body."""

    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces
        self.length = sum(len(piece) for piece in pieces)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self.pieces:
            yield piece

    def joined(self) -> bytes:
        return b"".join(self.pieces)


def streamed(content: bytes | BodyPieces) -> tuple[bytes | BodyPieces, dict[str, str]]:
    """``content`` as the client is given it, with the headers it needs: a ``BodyPieces``
    with its ``Content-Length`` (the client would otherwise send it chunked, which not every
    local server reads)."""
    if isinstance(content, BodyPieces):
        return content, {"Content-Length": str(content.length)}
    return content, {}


async def encode_request(body: dict[str, Any]) -> bytes | BodyPieces:
    """``body`` as the JSON bytes :func:`encode_body` writes (the same as ``fastjson.dumps``),
    a list's items written one by one with a turn of the event loop every :data:`STEP_BYTES`
    or :data:`STEP_ITEMS`; an item holding a big data URL is written in a worker thread, and
    then the body comes back in pieces (``BodyPieces``): each big data URL a piece of its own,
    the small pieces between them joined (a long history is thousands of them, and each piece
    is a write to the socket)."""
    out: list[bytes] = []  # pieces done: the big ones, and the small ones joined
    small: list[bytes] = []  # small pieces since the last big one (the usual case: all)
    written, items = 0, 0
    for index, (key, value) in enumerate(body.items()):
        small += (b"," if index else b"{", dumps(key), b":")
        if not isinstance(value, list):
            await _encode_value(value, small, out)
            continue
        small.append(b"[")
        for position, item in enumerate(value):
            if position:
                small.append(b",")
            size = await _encode_value(item, small, out)
            written, items = written + size, items + 1
            if written >= STEP_BYTES or items >= STEP_ITEMS:
                written, items = 0, 0
                await asyncio.sleep(0)  # the window's timers and paints run between steps
        small.append(b"]")
    small.append(b"}" if body else b"{}")
    if not out:
        return b"".join(small)
    out.append(b"".join(small))
    return BodyPieces(out)


async def _encode_value(value: Any, small: list[bytes], out: list[bytes]) -> int:
    """Write ``value`` after ``small``'s pieces (a big data URL, once ``small`` is joined, into
    ``out`` as a piece of its own); the bytes written."""
    if not has_big_strings(value):
        piece = dumps(value)
        small.append(piece)
        return len(piece)
    size = 0
    for piece in await asyncio.to_thread(body_pieces, value):
        size += len(piece)
        if len(piece) >= BIG_STRING:
            if small:
                out.append(b"".join(small))
                small.clear()
            out.append(piece)
        else:
            small.append(piece)
    return size
