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
"""

from __future__ import annotations

import asyncio
import json
import re
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


def encode_body(body: Any) -> bytes:
    """``body`` as the JSON bytes the API client sends (UTF-8, compact separators, as
    ``json.dumps(..., ensure_ascii=False, separators=(",", ":"))``), big data URLs joined in
    raw rather than scanned."""
    raw: list[bytes] = []
    skeleton = json.dumps(
        _swap(body, raw), ensure_ascii=False, separators=(",", ":"), allow_nan=False
    )
    pieces = _SPLIT.split(skeleton)
    out: list[bytes] = []
    for index, piece in enumerate(pieces):
        if index % 2:
            out += (b'"', raw[int(piece)], b'"')
        else:
            out.append(piece.encode("utf-8"))
    return b"".join(out)


async def encode_request(body: dict[str, Any]) -> bytes:
    """``body`` as the JSON bytes :func:`encode_body` writes (the same as ``fastjson.dumps``),
    a list's items written one by one with a turn of the event loop every :data:`STEP_BYTES`
    or :data:`STEP_ITEMS`; an item holding a big data URL is written in a worker thread."""
    pieces: list[bytes] = []
    written, items = 0, 0
    for index, (key, value) in enumerate(body.items()):
        pieces += (b"," if index else b"{", dumps(key), b":")
        if not isinstance(value, list):
            pieces.append(await _encode_value(value))
            continue
        pieces.append(b"[")
        for position, item in enumerate(value):
            if position:
                pieces.append(b",")
            piece = await _encode_value(item)
            pieces.append(piece)
            written, items = written + len(piece), items + 1
            if written >= STEP_BYTES or items >= STEP_ITEMS:
                written, items = 0, 0
                await asyncio.sleep(0)  # the window's timers and paints run between steps
        pieces.append(b"]")
    pieces.append(b"}" if pieces else b"{}")
    return b"".join(pieces)


async def _encode_value(value: Any) -> bytes:
    if has_big_strings(value):
        return await asyncio.to_thread(encode_body, value)
    return dumps(value)
