"""Long text without a frozen window: break opportunities for display, and display segments.

Qt lays out a line with no break opportunity in time that grows much faster than its length (a
64 KB run of hex: about 0.2 s; 256 KB: seconds; 1 MB: minutes). Two things keep any input
cheap to show, for display only (the message text itself, what is copied, exported and sent,
never changes):

- ``break_runs_html`` inserts a zero-width space (U+200B) every ``RUN`` characters inside runs
  of text without whitespace longer than ``LONG_RUN``, so every line can wrap; selection copies
  strip them again (``strip_breaks``; the copy buttons copy the original text).
- ``display_cuts`` cuts a long message into segments, each shown by its own transcript row,
  so only the segments on screen are ever laid out and a streaming reply only re-renders its
  last segment. Cuts fall between Markdown blocks (then the parts render exactly as the whole)
  every ``SEGMENT_CHARS`` or so; a longer block (a code block, a paragraph) is cut only past
  ``MAX_SEGMENT_CHARS``, at a line break if it has one; a line longer than a segment is cut
  between two words (at its last space); inside a fenced code block the fence is then closed
  at the end of one segment and opened again at the start of the next.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from .markdown_blocks import FENCE_OPEN, closed_end

ZWSP = "\u200b"
LONG_RUN = 48  # runs without whitespace up to this long are left alone
RUN = 12  # in longer runs, characters between two inserted break opportunities
SEGMENT_CHARS = 2_000  # a row shows the Markdown blocks that fit in this many characters
MAX_SEGMENT_CHARS = 16_000  # a longer block (code, a paragraph) is cut past this many

_TOKEN = re.compile(r"<[^>]*>|&#?\w+;|\s+|[^\s<&]+|[<&]")
_TAG = re.compile(r"<[^>]*>")
_TAG_NAME = re.compile(r"</?\s*([a-zA-Z0-9]+)")
# Tags that run inside one line of text: a run of characters goes on across them.
_INLINE = frozenset(
    {"a", "b", "code", "del", "em", "font", "i", "s", "span", "strong", "sub", "sup", "u"}
)


def break_runs(text: str, start: int = LONG_RUN, every: int = RUN) -> str:
    """Plain ``text`` with a zero-width space in each run without whitespace longer than
    ``start`` characters: after its first ``start`` characters, then every ``every``."""
    if len(text) <= start:
        return text
    return re.sub(
        rf"\S{{{start + 1},}}", lambda m: _break(m.group(0), 0, start, every), text
    )


def _break(piece: str, run: int, start: int, every: int) -> str:
    """``piece`` (no whitespace) going on from a run of ``run`` characters, with a break
    before each run position ``start + k * every``."""
    if run + len(piece) <= start:
        return piece
    first = start if run <= start else start + -(-(run - start) // every) * every
    parts: list[str] = []
    previous = 0
    position = first - run
    while position < len(piece):
        parts.append(piece[previous:position])
        previous = position
        position += every
    parts.append(piece[previous:])
    return ZWSP.join(parts)


def break_runs_html(html: str, start: int = LONG_RUN, every: int = RUN) -> str:
    """``html`` with zero-width spaces in text runs without whitespace longer than ``start``
    (after ``start`` characters, then every ``every``); tags and entities are never split, and
    a run goes on across inline tags (highlighted code is many small spans)."""
    if not _has_long_run(html, start):
        return html  # the usual case, found by regular expressions alone (a fifth the time)
    return _break_html_runs(html, start, every)


def _break_html_runs(html: str, start: int, every: int) -> str:
    """``break_runs_html`` token by token (the slow path, for HTML that has a long run)."""
    out: list[str] = []
    run = 0
    for match in _TOKEN.finditer(html):
        token = match.group(0)
        first = token[0]
        if first == "<" and len(token) > 1:
            name = _TAG_NAME.match(token)
            if name is None or name.group(1).lower() not in _INLINE:
                run = 0
            out.append(token)
        elif first.isspace():
            run = 0
            out.append(token)
        else:
            size = 1 if first == "&" and len(token) > 1 else len(token)  # an entity is one
            if size == 1 and len(token) > 1:
                out.append(_break("x", run, start, every).replace("x", token))
            else:
                out.append(_break(token, run, start, every))
            run += size
    return "".join(out)


def _has_long_run(html: str, start: int) -> bool:
    """Whether ``html`` has a text run longer than ``start`` as ``break_runs_html`` counts
    runs, or more: tags go (an inline one joins the text around it, any other ends the run)
    and an entity counts as its length, so a run is never shorter than that count."""
    if len(html) <= start:
        return False
    text = _TAG.sub(_tag_gap, html)
    return re.search(rf"\S{{{start + 1},}}", text) is not None


def _tag_gap(match: re.Match[str]) -> str:
    name = _TAG_NAME.match(match.group(0))
    return "" if name is not None and name.group(1).lower() in _INLINE else " "


def strip_breaks(text: str) -> str:
    """Display text back to the text it shows: the inserted break opportunities removed."""
    return text.replace(ZWSP, "")


# ------------------------------------------------------------------------------ segments


class Cut(NamedTuple):
    """Where a segment starts, and the code fence open there ("" outside any fence)."""

    offset: int
    fence: str  # the opening line of the fenced block the segment starts inside


def _fence_state(text: str, start: int, end: int, fence: str) -> str:
    """The fence opening line open at ``end``, scanning complete lines from ``start`` (itself
    inside ``fence``, or outside any when "")."""
    marker = _marker(fence)
    pos = start
    while pos < end:
        stop = text.find("\n", pos, end)
        line_end = end if stop < 0 else stop
        line = text[pos:line_end]
        if marker:
            if stop >= 0 and _closes(line, marker):
                fence, marker = "", ""
        else:
            opened = FENCE_OPEN.match(line)
            if opened is not None:
                fence, marker = line.strip(), opened.group(1)
        if stop < 0:
            break
        pos = stop + 1
    return fence


def _closes(line: str, marker: str) -> bool:
    stripped = line.strip()
    return (
        bool(marker)
        and len(line) - len(line.lstrip(" ")) <= 3
        and stripped.startswith(marker)
        and stripped == marker[0] * len(stripped)
    )


def _marker(fence: str) -> str:
    opened = FENCE_OPEN.match(fence)
    return opened.group(1) if opened is not None else ""


def display_cuts(
    text: str,
    limit: int = SEGMENT_CHARS,
    most: int = MAX_SEGMENT_CHARS,
    known: list[Cut] | None = None,
) -> list[Cut]:
    """The starts of the display segments after the first (empty for a short text).

    A segment ends at the last Markdown block boundary within ``limit`` characters; a line
    longer than that is cut after ``limit`` characters; a longer block of several lines (a code
    block, a paragraph) stays whole up to ``most`` characters, beyond which it is cut at its
    last line break. A cut depends
    only on the text before it plus ``limit`` (or ``most``) characters, so a streaming text's
    cuts never move: ``known`` (the cuts of a prefix of ``text``) are kept as they are.
    """
    cuts = list(known or [])
    start, fence = (cuts[-1].offset, cuts[-1].fence) if cuts else (0, "")
    while len(text) - start > limit:
        head = text[start : start + limit]
        cut = 0 if fence else closed_end(head)
        if cut <= 0 and "\n" not in head:
            cut = _word_end(head)  # one line longer than a segment: cut it between words
        if cut <= 0:
            if len(text) - start <= most:
                break  # a long block: it stays whole unless it grows past ``most``
            window = text[start : start + most]
            cut = 0 if fence else closed_end(window)
            if cut <= 0:
                # No Markdown block boundary: the last line break, else between words.
                newline = window.rfind("\n", 0, most - 1)
                cut = newline + 1 if newline > 0 else _word_end(window)
        next_fence = _fence_state(text, start, start + cut, fence)
        start += cut
        fence = next_fence
        cuts.append(Cut(start, fence))
    return cuts


def _word_end(head: str) -> int:
    """Where to cut ``head``, a stretch of one line: after its last whitespace, so no word is
    split across two segments; a word longer than half of it is cut at its end anyway."""
    space = max(head.rfind(" "), head.rfind("\t"))
    return space + 1 if space >= len(head) // 2 else len(head)


def segment_source(text: str, cuts: list[Cut], index: int, stop: int | None = None) -> str:
    """The Markdown a segment renders: segment ``index`` (0 is before the first cut), with its
    code fence opened at the start and closed at the end when a cut falls inside one. The
    last segment ends at ``stop`` (the end of the text when None)."""
    begin = cuts[index - 1] if index > 0 else Cut(0, "")
    end = cuts[index] if index < len(cuts) else None
    body = text[begin.offset : end.offset if end is not None else _stop(text, stop)]
    if begin.fence:
        first, newline, rest = body.partition("\n")
        if newline and _closes(first, _marker(begin.fence)):
            body = rest  # the segment before closed the fence already
        else:
            body = f"{begin.fence}\n{body}"
    if end is not None and end.fence:
        body = f"{body}{'' if body.endswith(chr(10)) else chr(10)}{_marker(end.fence)}\n"
    return body


def segment_complete(cuts: list[Cut], index: int) -> bool:
    """Whether segment ``index`` ends at a cut, so its text will not grow (every segment but
    the last): its Markdown is rendered in one piece (``MarkdownDocument.update``)."""
    return index < len(cuts)


def segment_text(text: str, cuts: list[Cut], index: int, stop: int | None = None) -> str:
    """The part of ``text`` segment ``index`` shows (without the added fence lines); the last
    segment ends at ``stop`` (the end of the text when None)."""
    begin = cuts[index - 1].offset if index > 0 else 0
    end = cuts[index].offset if index < len(cuts) else _stop(text, stop)
    return text[begin:end]


def _stop(text: str, stop: int | None) -> int:
    return len(text) if stop is None else min(stop, len(text))
