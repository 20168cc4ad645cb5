"""A request body holding images, serialized without holding the interpreter for long.

``json.dumps`` scans every character of a string for what to escape, in one C call that
never lets another thread run: for a message with ten screenshots (20 MB of data URLs) that
was 120-160 ms, on the thread the window draws with. The data URLs need no escaping (base64
after an ASCII header), so :func:`encode_body` serializes the body with a short placeholder
for each, then joins the pieces: every step is a copy of at most one image, short enough for
the interpreter to be handed over between them. It runs in a worker thread.
"""

from __future__ import annotations

import json
import re
from typing import Any

BIG_STRING = 64 * 1024  # a data URL this long or longer is joined in raw
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
