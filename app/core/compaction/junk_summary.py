"""A junk summary: what a small model returns in place of a summary.

Small local models often answer the compaction prompt with one sentence repeated until the
output limit ("I'm a model. I'm a model. …"), or with Coco's own wrapper text, the
instructions or the prompt given back. Installed, such a text takes the summary's place and
says nothing; worse, the next compaction reads it and echoes it again. So what the model
returned is checked before it is installed, like a cut-short one:

1. Coco's own wrapper text is stripped (the summary prefix and the carried-notes intro, whole
   or sentence by sentence, their labels and headings): it is never the model's to write.
2. What is left is junk when it is empty although the model wrote something (it was all
   wrapper), when most of it repeats itself (``REPEATED_SHARE`` of its word trigrams repeat
   an earlier one), or when most of it is copied from the instructions, the compaction prompt
   or the wrapper (``ECHOED_SHARE`` of its word 5-grams appear there).

Both shares are far from what a summary does: a real summary names many different things once
(its repeated trigrams are a few percent: "the user wants…"), and it quotes the prompt only in
a heading. The rule is measured on real small-model output and on good summaries
(``tests/core/compaction/data/``): it must never reject a good one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from .notes.block import (
    CHANGED_HEADING,
    COMMANDS_HEADING,
    NOTES_HEADING,
    NOTES_INTRO,
    NOTES_LABEL,
    READ_HEADING,
)
from .prompts import summary_prefix

Junk = Literal["empty", "repetition", "echo"]

# Junk when at least this share of the summary's word trigrams repeat an earlier trigram.
REPEATED_SHARE = 0.5
# Junk when at least this share of its word 5-grams appear in the instructions or the prompt.
ECHOED_SHARE = 0.5
# Shorter texts are judged on emptiness only: too few words to call them a loop or a copy.
MIN_WORDS = 8

_WORD = re.compile(r"\w+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_BLANK_LINES = re.compile(r"\n{3,}")


@dataclass(frozen=True)
class SummaryCheck:
    """What the model returned, with Coco's wrapper text stripped, and why it is unusable
    (None when it is a summary)."""

    text: str
    junk: Junk | None


def junk_words(junk: Junk) -> str:
    """Why a summary was unusable, as the marker and the warning say it."""
    return {
        "empty": "it only repeated Coco's own wrapper text",
        "repetition": "it mostly repeated itself",
        "echo": "it mostly repeated the instructions",
    }[junk]


def retry_note(junk: Junk) -> str:
    """What the retry adds to the prompt, so that it is not asked the same question twice."""
    return (
        "\n\nYour previous answer was not a summary ("
        + junk_words(junk).replace("Coco's own", "the")
        + "). Write the summary itself now, in your own words: say what happened in this "
        "conversation, once, without repeating any sentence or these instructions."
    )


def wrapper_texts() -> tuple[str, ...]:
    """Coco's own texts around a summary, longest first: whole, then sentence by sentence."""
    wholes = [summary_prefix(), NOTES_INTRO]
    sentences = [s for whole in wholes for s in _SENTENCE_END.split(whole) if s.strip()]
    labels = [summary_prefix().split("]", 1)[0] + "]", NOTES_LABEL]
    return tuple(sorted({*wholes, *sentences, *labels}, key=len, reverse=True))


def strip_wrapper(text: str) -> str:
    """``text`` without Coco's wrapper text (and the notes block's headings on lines of their
    own), its blank runs closed up."""
    for wrapper in wrapper_texts():
        text = text.replace(wrapper, "")
    headings = {NOTES_HEADING, CHANGED_HEADING, READ_HEADING, COMMANDS_HEADING}
    lines = [line for line in text.splitlines() if line.strip() not in headings]
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


def repeated_share(text: str) -> float:
    """The share of ``text``'s word trigrams that repeat an earlier one (0 for a short text)."""
    grams = _grams(_words(text), 3)
    if not grams:
        return 0.0
    return 1 - len(set(grams)) / len(grams)


def echoed_share(text: str, sources: Iterable[str]) -> float:
    """The share of ``text``'s word 5-grams that appear in ``sources``."""
    grams = _grams(_words(text), 5)
    if not grams:
        return 0.0
    known = {gram for source in sources for gram in _grams(_words(source), 5)}
    return sum(gram in known for gram in grams) / len(grams)


def check_summary(text: str, *, sources: Iterable[str] = ()) -> SummaryCheck:
    """Strip Coco's wrapper from ``text`` and judge what is left; ``sources``: the texts the
    model was given to work by (the instructions, the compaction prompt)."""
    stripped = strip_wrapper(text)
    if not stripped:
        return SummaryCheck(stripped, "empty" if text.strip() else None)
    if len(_words(stripped)) < MIN_WORDS:
        return SummaryCheck(stripped, None)
    if repeated_share(stripped) >= REPEATED_SHARE:
        return SummaryCheck(stripped, "repetition")
    if echoed_share(stripped, [*sources, *wrapper_texts()]) >= ECHOED_SHARE:
        return SummaryCheck(stripped, "echo")
    return SummaryCheck(stripped, None)


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def _grams(words: list[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]
