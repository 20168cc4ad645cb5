"""Counting one text with a loaded tiktoken encoding: through its token buffer (off the GIL),
in steps that report progress, or estimated from a few exactly counted samples."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tiktoken

from .estimate import approx_tokens

# A text is counted in steps of about this many characters, so progress can be told.
COUNT_STEP_CHARS = 2_000_000
_SAMPLES = 4
_SAMPLE_CHARS = 16_000


def _encoded_length(encoder: tiktoken.Encoding, text: str) -> int:
    """How many tokens ``text`` encodes to, special-token text counted as text.

    Through tiktoken's token buffer where it has one: the list ``encode_ordinary`` returns
    is built holding the GIL (tens of milliseconds for a megabyte), the buffer is not, so a
    count in a worker thread leaves the main thread free."""
    core = getattr(encoder, "_core_bpe", None)
    to_buffer = getattr(core, "encode_to_tiktoken_buffer", None)
    if to_buffer is not None:
        try:
            return memoryview(to_buffer(text, set())).nbytes // 4
        except (TypeError, ValueError, UnicodeEncodeError):
            pass  # an older or stricter tiktoken, or lone surrogates: the ordinary path
    return len(encoder.encode_ordinary(text))


def _report_from(
    on_progress: Callable[[int, int], None], base: int, whole: int, counted: int
) -> None:
    on_progress(base + counted, whole)


def _step_end(text: str, start: int, step: int) -> int:
    """Where the step from ``start`` ends: after the last line break before ``start + step``
    that is followed by a character other than whitespace (tiktoken's pieces never span such
    a place, so counting the steps apart gives the same total), else at ``start + step``."""
    end = start + step
    if end >= len(text):
        return len(text)
    newline = text.rfind("\n", start, end)
    while newline > start and text[newline + 1].isspace():
        newline = text.rfind("\n", start, newline)
    return newline + 1 if newline > start else end


def _count_in_steps(
    encoder: tiktoken.Encoding, text: str, on_step: Callable[[int], None] | None
) -> int:
    """:func:`_encoded_length` of ``text``, :data:`COUNT_STEP_CHARS` at a time, telling
    ``on_step`` how many characters are counted so far."""
    if on_step is None or len(text) <= COUNT_STEP_CHARS:
        return _encoded_length(encoder, text)
    total = 0
    start = 0
    while start < len(text):
        end = _step_end(text, start, COUNT_STEP_CHARS)
        total += _encoded_length(encoder, text[start:end])
        start = end
        on_step(start)
    return total


def sampled_estimate(encoder: tiktoken.Encoding | None, text: str) -> int:
    """About how many tokens the long ``text`` holds, from :data:`_SAMPLES` pieces of
    :data:`_SAMPLE_CHARS` characters spread over it, counted exactly (with ``encoder``) or by
    the byte rule; the cost does not grow with the text."""
    length = len(text)
    size = max(1, min(_SAMPLE_CHARS, length // _SAMPLES))
    starts = sorted({(length - size) * index // (_SAMPLES - 1) for index in range(_SAMPLES)})
    pieces = [text[start : start + size] for start in starts]
    if encoder is None:
        sampled = sum(approx_tokens(piece) for piece in pieces)
    else:
        sampled = sum(_encoded_length(encoder, piece) for piece in pieces)
    return max(1, round(sampled * length / sum(len(piece) for piece in pieces)))
