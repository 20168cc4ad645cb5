"""Joining the parts of a huge text a step at a time, so no single call holds the GIL long.

A message of 50 MB is decoded from its rollout line in parts of a megabyte
(``rollout_reader``), in a worker thread, so the window's thread keeps running meanwhile. The
parts then have to become one ``str``: ``"".join`` makes it in one call that copies 50 MB into
memory touched for the first time, 30-60 ms during which the window's thread cannot run (the
GIL is held throughout). Here the string is allocated empty (``PyUnicode_New``, whose memory
is not touched yet) and each part is copied into it by its own call, a megabyte at a time;
between two copies the interpreter lets other threads run. Nothing else holds the string
until it is returned, and it is never hashed before it is complete.

Only for text whose parts are all ASCII (a compact ASCII string's characters follow its
header directly) on CPython; anything else is joined with ``"".join``.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable, Sequence

STEP_CHARS = 1024 * 1024  # characters copied by one call
# A compact ASCII string's header: its characters start this many bytes after the object.
_ASCII_HEADER = sys.getsizeof("") - 1


def _string_allocator() -> Callable[[int, int], str] | None:
    """``PyUnicode_New(length, max_char)`` (CPython only): a new string whose characters are
    not filled in yet."""
    if sys.implementation.name != "cpython":
        return None
    try:
        prototype = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_ssize_t, ctypes.c_uint32)
        return prototype(("PyUnicode_New", ctypes.pythonapi))
    except (AttributeError, OSError):
        return None


_new_string = _string_allocator()


def join_in_steps(parts: Sequence[str]) -> str:
    """``"".join(parts)``, copied :data:`STEP_CHARS` characters per call when the result is
    at least two steps long and every part is ASCII (see the module docstring)."""
    total = sum(len(part) for part in parts)
    if (
        _new_string is None
        or total < 2 * STEP_CHARS
        or not all(type(part) is str and part.isascii() for part in parts)
    ):
        return "".join(parts)
    text = _new_string(total, 127)  # 127: ASCII, one byte per character
    target = id(text) + _ASCII_HEADER
    for part in parts:
        source = id(part) + _ASCII_HEADER
        for offset in range(0, len(part), STEP_CHARS):
            ctypes.memmove(target + offset, source + offset, min(STEP_CHARS, len(part) - offset))
        target += len(part)
    return text
