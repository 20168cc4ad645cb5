"""A huge text as a dictionary key, without hashing all of it.

Python hashes a string over every character the first time it is used as a key (then keeps
the hash): 10-15 ms for a message of 50 MB, in one call that holds the GIL, so on whichever
thread it happens the window's thread stops for that long. The token counter keeps the counts
of huge texts by text (``tokens``) and the history finds the items a new exact count concerns
(``history.recount``); both key them with :class:`TextKey`, whose hash is made from the
length and a few short samples. Equality is still the text's own (the same object, or equal
characters), so two texts never share a key unless they are equal.
"""

from __future__ import annotations

SAMPLES = 16  # places the hash looks at, spread over the text
SAMPLE_CHARS = 64  # characters at each


class TextKey:
    """``text`` as a key: hashed from samples, equal to the key of an equal text."""

    __slots__ = ("_hash", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        length = len(text)
        stride = max(1, length // SAMPLES)
        samples = tuple(text[start : start + SAMPLE_CHARS] for start in range(0, length, stride))
        self._hash = hash((length, text[-SAMPLE_CHARS:], *samples))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TextKey):
            return NotImplemented
        return self.text is other.text or (self._hash == other._hash and self.text == other.text)

    def __repr__(self) -> str:
        return f"TextKey({len(self.text)} characters)"
