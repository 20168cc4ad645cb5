"""A tool output cut to its share of the context: its head and tail kept, and a note between
them saying how much was left out and that the whole output can be searched with recall (it is
kept in the transcript and the recall index). Outputs far over their share are cut without
counting them whole, so a 100 MB result costs no tokenizer pass."""

from __future__ import annotations

from collections.abc import Callable

from ..tokens.estimate import BYTES_PER_TOKEN

# Above this many times its share (estimated 4 bytes a token), an output is cut unmeasured.
CERTAINLY_OVER = 4
NOTE = (
    "\n\n[… {chars:,} characters (about {tokens:,} tokens) of this tool output were left out "
    "here to fit the context. The whole output is kept in this conversation: call the recall "
    "tool with words from the part you need to read it …]\n\n"
)


def certainly_over(text: str, cap: int) -> bool:
    """True when ``text`` is so far over ``cap`` tokens that counting it is not needed."""
    return len(text) > cap * BYTES_PER_TOKEN * CERTAINLY_OVER


def fit_output(text: str, cap: int, count: Callable[[str], int]) -> str:
    """``text`` within ``cap`` tokens: whole when it fits, else its head and tail around the
    note. ``count`` measures only the kept parts (never a huge whole)."""
    if not certainly_over(text, cap) and count(text) <= cap:
        return text
    keep = max(0, cap * BYTES_PER_TOKEN - len(NOTE) - 40)  # characters kept, both ends
    for _ in range(8):
        keep = min(keep, len(text) * 3 // 4)  # something is always left out
        head, tail = _ends(text, keep)
        left = len(text) - len(head) - len(tail)
        note = NOTE.format(chars=left, tokens=max(1, left // BYTES_PER_TOKEN))
        fitted = head + note + tail
        used = count(fitted)
        if used <= cap or keep == 0:
            return fitted
        keep = max(0, int(keep * cap / used) - 16)
    return fitted


def _ends(text: str, keep: int) -> tuple[str, str]:
    """About ``keep`` characters from the two ends, cut at line or word breaks when near."""
    half = keep // 2
    head = text[:half]
    cut = max(head.rfind("\n"), head.rfind(" "))
    if cut > half * 3 // 4:
        head = head[:cut]
    tail = text[len(text) - (keep - len(head)):] if keep - len(head) > 0 else ""
    cut = min((i for i in (tail.find("\n"), tail.find(" ")) if i >= 0), default=-1)
    if 0 <= cut < len(tail) // 4:
        tail = tail[cut + 1:]
    return head, tail
