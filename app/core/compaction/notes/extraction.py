"""Reading notes out of user messages: the sentences that carry facts, in the user's own
words, skipping code, pasted logs and code lines; a long sentence shortened around its facts."""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

from .facts import facts_of, score_of

# A note is at most this many characters: a fact inside a long run-on paragraph comes out as
# the words around it, not the paragraph.
MAX_NOTE_CHARS = 140
# Around each fact in a sentence longer than that: this many characters on either side.
SPAN_CONTEXT_CHARS = 50
MAX_SPANS_PER_SENTENCE = 2

# Lines that are pasted output or code, not the user speaking.
_LOG_LINE = re.compile(
    r"^\s*(?:\[?\d{4}-\d{2}-\d{2}[T ]\d|\[?\d{2}:\d{2}:\d{2}|\[?(?:DEBUG|INFO|WARN(?:ING)?|ERROR"
    r"|TRACE|FATAL|CRITICAL)\b|Traceback \(|File \"|[\w.]*(?:Error|Exception|Warning)\b:|at [\w.$]+\(|\s*\^+\s*$|[<>+-]{3}\s|@@ )"
)
_CODE_LINE = re.compile(
    r"^\s*(?:def |class |import |from \S+ import |return\b|if .*:\s*$|for .*:\s*$|elif |else:|"
    r"try:|except\b|fn |func |function |const |let |var |public |private |#include|package |"
    r"\}|\{|//|/\*|\*/|#!|\$ |>>> )"
    r"|[;{}]\s*$|^\s{4,}\S"
)
_SPACES = re.compile(r"\s+")
# The marker a middle-truncated message carries (Coco's, not the user's words): a break.
_TRUNCATION = re.compile(r"…\d+ tokens truncated…")


def extract_chunk(texts: Sequence[str]) -> list[tuple[str, int]]:
    """The statements of user messages that carry facts, in their own words and order, each
    at most :data:`MAX_NOTE_CHARS` long, with how specific each is. Code blocks, pasted logs
    and code lines are skipped: they are material, not what the user told the model.

    Only the sentences around a place that may start a fact are read (a digit, a slash, an
    "@", a backtick, a capital inside a sentence, a word of a rule or a name, found by two
    character-class scans and plain substring searches over all the messages at once): most
    of a long conversation is never split into sentences at all."""
    parts: list[str] = []
    fences: list[tuple[int, int]] = []
    offset = 0
    for message in texts:
        if "tokens truncated…" in message:
            message = _TRUNCATION.sub("\n", message)
        if "```" in message or "~~~" in message:
            fences.extend((lo + offset, hi + offset) for lo, hi in _fenced_ranges(message))
        parts.append(message)
        offset += len(message) + 2
    text = "\n\n".join(parts)  # a blank line: no sentence runs from one message on
    positions = _candidates(text)
    if not positions:
        return []
    fence_starts = [lo for lo, _ in fences]
    notes: list[tuple[str, int]] = []
    done = -1  # everything before this offset has been read
    checked_line, line_skipped = -1, False
    for pos in positions:
        if pos < done:
            continue
        line_start = text.rfind("\n", 0, pos) + 1
        line_end = text.find("\n", pos)
        if line_end == -1:
            line_end = len(text)
        if line_start != checked_line:
            checked_line = line_start
            line = text[line_start:line_end]
            inside = bisect.bisect_right(fence_starts, pos) - 1
            line_skipped = bool(
                (inside >= 0 and pos < fences[inside][1])
                or _LOG_LINE.match(line)
                or _CODE_LINE.search(line)
            )
        if line_skipped:
            done = line_end
            continue
        marks = [text.rfind(mark, line_start, pos + 1) for mark in _SENTENCE_MARKS]
        start = max(marks)
        start = line_start if start == -1 else start + 2
        ends = [i for i in (text.find(mark, pos, line_end) for mark in _SENTENCE_MARKS) if i != -1]
        end = min(ends) + 1 if ends else line_end
        note = _note_of(text[start:end])
        if note:
            notes.append(note)
        done = end
    return notes


# Where a sentence ends inside a line (a new line ends one too).
_SENTENCE_MARKS = (". ", "! ", "? ", "; ")
# What may start a fact: a character class (digits, paths, e-mail, code, identifiers,
# capitals inside a sentence), and the words of rules, names and weekdays (lowercase).
# (Two scans, each led by a character class, are several times faster than one alternation.)
_STRONG = (
    re.compile(r"[\d/@`$€£¥_\\]"),
    re.compile(r"[A-Z](?:(?<=[a-z,;:] [A-Z])|(?<=[a-z][A-Z])|(?=[A-Z]))"),
)
_KEYWORDS = (
    "always", "never", "must", "don't", "do not", "make sure", "ensure", "avoid", "only use",
    "please use", "from now on", "keep in mind", "remember that", "prefer", "want you to",
    "no more than", "at most", "at least", "not allowed", "forbidden", "name is", "named",
    "called", "call me", "i am", "i'm", "monday", "tuesday", "wednesday", "thursday", "friday",
    "saturday", "sunday",
)


def _candidates(text: str) -> list[int]:
    """Sorted offsets in ``text`` where a fact may be."""
    positions = [m.start() for pattern in _STRONG for m in pattern.finditer(text)]
    lowered = text.lower()
    if len(lowered) != len(text):  # a character whose lower case is longer: offsets differ
        lowered = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    for word in _KEYWORDS:
        at = lowered.find(word)
        while at != -1:
            positions.append(at)
            at = lowered.find(word, at + len(word))
    positions.sort()
    return positions


def _fenced_ranges(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the fenced code blocks (a fence left open runs to the end)."""
    marks: list[int] = []
    for fence in ("```", "~~~"):
        at = text.find(fence)
        while at != -1:
            line_start = text.rfind("\n", 0, at) + 1
            if not text[line_start:at].strip():
                marks.append(line_start)
            at = text.find(fence, at + 3)
    marks.sort()
    ranges: list[tuple[int, int]] = []
    for index in range(0, len(marks), 2):
        opened = marks[index]
        if index + 1 < len(marks):
            closing = marks[index + 1]
            end = text.find("\n", closing)
            ranges.append((opened, len(text) if end == -1 else end + 1))
        else:
            ranges.append((opened, len(text)))
    return ranges


def _note_of(sentence: str) -> tuple[str, int] | None:
    """The note a sentence makes, with its specificity; None when it holds no fact."""
    sentence = _SPACES.sub(" ", sentence).strip()
    if len(sentence) < 4:
        return None
    facts = facts_of(sentence)
    if not facts:
        return None
    score = score_of(facts)
    if len(sentence) <= MAX_NOTE_CHARS:
        return sentence, score
    # A long run-on sentence: the words around its facts, joined with an ellipsis.
    windows: list[list[int]] = []
    for start, end, _ in facts:
        lo, hi = max(0, start - SPAN_CONTEXT_CHARS), min(len(sentence), end + SPAN_CONTEXT_CHARS)
        if windows and lo <= windows[-1][1]:
            windows[-1][1] = max(windows[-1][1], hi)
        else:
            windows.append([lo, hi])
    pieces: list[str] = []
    room = MAX_NOTE_CHARS
    for lo, hi in windows[:MAX_SPANS_PER_SENTENCE]:
        lo, hi = _snap(sentence, lo, hi)
        piece = sentence[lo:hi].strip()
        if len(piece) > room:
            piece = piece[:room].rsplit(" ", 1)[0]
        if not piece:
            break
        pieces.append(("…" if lo > 0 else "") + piece + ("…" if hi < len(sentence) else ""))
        room -= len(piece) + 2
        if room < 40:
            break
    note = " ".join(pieces)
    return (note, score) if note else None


def _snap(text: str, lo: int, hi: int) -> tuple[int, int]:
    """``lo``/``hi`` moved out of the middle of a word (inward: a span never grows)."""
    if lo > 0 and text[lo - 1] != " ":
        space = text.find(" ", lo, hi)
        lo = space + 1 if space != -1 else lo
    if hi < len(text) and text[hi] != " ":
        space = text.rfind(" ", lo, hi)
        hi = space if space > lo else hi
    return lo, hi
