"""Each message is read for notes once: a digest cache in front of the extractor, and the
reading of many messages newest first up to a limit."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Sequence

from .extraction import extract_chunk


def extract_notes(text: str) -> list[str]:
    """The statements of one user message that carry facts (see :func:`extract_scored`)."""
    return [note for note, _ in extract_scored(text)]


def extract_scored(text: str) -> list[tuple[str, int]]:
    """The notes of one user message, each with its specificity (see :func:`extract_many`)."""
    return extract_many([text])


def extract_many(texts: Sequence[str], limit: int | None = None) -> list[tuple[str, int]]:
    """The notes of each of ``texts`` (see :func:`extract_chunk`); with ``limit``, read newest
    first, one message at a time, until that many notes are found: a budget holds a few
    hundred notes, and when far more than that leave at once (the first compaction of a long
    resumed conversation) the oldest would go first anyway. Returned oldest first.

    A message is read for facts once: its notes are remembered by a digest of its text, so a
    compaction run again (after an undo, or a narrower pass of the same one) and the next
    compaction, which sees the same messages leave the view, read nothing twice."""
    chunks: list[tuple[tuple[str, int], ...]] = []
    found = 0
    for text in reversed(texts):
        notes = _notes_of_message(text)
        chunks.append(notes)
        found += len(notes)
        if limit is not None and found >= limit:
            break
    return [note for chunk in reversed(chunks) for note in chunk]


# The notes of messages already read, by a digest of their text (16 bytes a key, not the text);
# the oldest entries go first past this many. Longer messages are read again each time (rare,
# and their text would make a poor key).
_READ: OrderedDict[bytes, tuple[tuple[str, int], ...]] = OrderedDict()
_READ_KEPT = 20_000
_READ_MAX_CHARS = 64_000


def _notes_of_message(text: str) -> tuple[tuple[str, int], ...]:
    if len(text) > _READ_MAX_CHARS:
        return tuple(extract_chunk([text]))
    key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    notes = _READ.get(key)
    if notes is None:
        notes = _READ[key] = tuple(extract_chunk([text]))
        if len(_READ) > _READ_KEPT:
            _READ.popitem(last=False)
    return notes
