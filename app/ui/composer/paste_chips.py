"""A long paste held as a chip in the composer: one character in the text box, the whole text
beside it.

Qt lays out a paragraph whole: 128 KB of hex pasted as one line blocked the window 50-60 ms
(inserted and laid out, then laid out again when the box's scroll bar appeared), and laying that
line out once takes 12-19 ms whatever the wrap mode or font shaping: more than a frame. A paste
of more than ``CHIP_CHARS`` characters (laid out in about 2 ms) is therefore not laid out in the
box. It becomes one object
character (U+FFFC) drawn as a chip ("Pasted text · 128,000 characters") at the place it was
pasted, and its text is kept here under an id the character's format carries:

- the message the composer sends is its text with each chip replaced by the text it holds,
  exactly as if that text had been typed in its place (``expand``); copying a selection does the
  same, so cutting and pasting a chip moves its text;
- the chip is one character to the text box: the arrow keys step over it, Backspace and Delete
  remove it, and Ctrl+Z brings it back (the undo stack restores the character with its format,
  and the text stays here until the box is cleared, which also clears the undo stack);
- it can be viewed (double-click, or the context menu, also from the keyboard) and turned back
  into ordinary text in the box when the user wants to edit it (then the cost is theirs to ask).

The words, the threshold and the character are here (no Qt: the composer reads them before the
window's first paint); the object that holds, finds and draws the chips is
``pasted_texts.PastedTexts``, loaded with the first chip or the first look for one.
"""

from __future__ import annotations

CHIP_CHARS = 10_000  # a paste longer than this many characters becomes a chip
OBJECT = "\ufffc"  # the character that stands for a chip in the document
PREVIEW_CHARS = 160  # of the text, in the chip's tooltip


def describe(text: str) -> str:
    """What a chip says about the text it holds: "128,000 characters", "· 3 lines" beyond one."""
    lines = text.count("\n") + 1
    size = f"{len(text):,} characters"
    return size if lines == 1 else f"{size} · {lines:,} lines"


def chip_label(text: str) -> str:
    return f"Pasted text · {describe(text)}"
