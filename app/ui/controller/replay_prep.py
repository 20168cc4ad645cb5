"""Getting a reopened session's very long messages ready for display off the window's thread.

A message of tens of megabytes is shown in parts (``long_text.display_cuts``); finding the
parts scans every line of it, seconds of work for 50 MB. ``prepare_replay`` finds them in a
worker thread while the session opens (reporting to its progress); the transcript's replay,
on the window's thread, then takes them ready (``prepared_cuts``). No widget code here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from ..text.long_text import (
    MAX_SEGMENT_CHARS,
    SEGMENT_CHARS,
    Cut,
    _word_end,
    display_cuts,
    segment_complete,
    segment_source,
)

if TYPE_CHECKING:
    from app.core import OpenProgress
    from app.core import protocol as p

# A reopened message this long has its display parts found beforehand.
PREPARED_CHARS = 10 * SEGMENT_CHARS
# Its last parts (on screen when the transcript opens at its end) have their Markdown
# rendered beforehand too, when ``prepare_replay`` is given a way to (``RenderAhead``).
PARTS_RENDERED_AHEAD = 2
# Renders a part's Markdown source ahead, ``breaks`` for a user's text (in a worker thread).
RenderAhead = Callable[[str, bool, bool], None]  # (text, breaks, complete)
# Parts found by ``prepare_replay``, by the text's id (the text is kept, so the id stays its),
# with the line breaks in each part (for the parts' height estimates).
_PREPARED: dict[int, tuple[str, list[Cut], list[int]]] = {}
# What makes ``display_cuts`` look at a stretch of text line by line: a blank line (a cut
# between Markdown blocks may follow it) or a code fence (see ``_has_markup``).
_BLANK_LINE = re.compile(r"\n[^\S\n]*\n")
_BLANK_FIRST_LINE = re.compile(r"[^\S\n]*\n")


def _has_markup(text: str, start: int, end: int) -> bool:
    """True when ``text[start:end]`` holds a blank line or a code fence (searched
    separately: one pattern for the three searched several times slower)."""
    return (
        text.find("```", start, end) >= 0
        or text.find("~~~", start, end) >= 0
        or _BLANK_LINE.search(text, start, end) is not None
    )


def quick_cuts(text: str) -> list[Cut]:
    """``display_cuts(text)``, found quickly where the text has no blank line and no code
    fence (a pasted log: 50 MB took seconds line by line): there a part ends at the last line
    break within ``MAX_SEGMENT_CHARS`` (a line longer than a part is cut between words within
    ``SEGMENT_CHARS``, ``long_text._word_end``), found with C-speed searches of one part's length each, so no single
    call holds the interpreter long. From the first stretch that has either, the cuts are
    ``display_cuts``' own."""
    limit, most = SEGMENT_CHARS, MAX_SEGMENT_CHARS
    cuts: list[Cut] = []
    start = 0
    while len(text) - start > limit:
        if (
            _BLANK_FIRST_LINE.match(text, start) is not None  # a part may start blank
            or _has_markup(text, start, start + most + 1)
        ):
            return display_cuts(text, known=cuts)
        if text.find("\n", start, start + limit) < 0:
            cut = _word_end(text[start : start + limit])  # a long line: cut between words
        elif len(text) - start <= most:
            break  # a paragraph that stays whole
        else:
            newline = text.rfind("\n", start, start + most - 1)
            cut = newline + 1 - start if newline > start else _word_end(text[start : start + most])
        start += cut
        cuts.append(Cut(start, ""))
    return cuts


def data_text(data: Mapping[str, Any]) -> str:
    """The text a TurnItem's data carries, whichever key the core used."""
    for key in ("text", "message", "content"):
        value = data.get(key)
        if isinstance(value, str):
            return value
    return ""


async def prepare_replay(
    events: Iterable[p.Event], progress: OpenProgress | None = None,
    render_ahead: RenderAhead | None = None,
) -> None:
    """Find the display parts of the very long messages among a reopened session's events in
    a worker thread, reporting to ``progress`` as stage ``"preparing"``; with
    ``render_ahead``, render there the Markdown of the last message's last parts as well."""
    import asyncio  # not at import: the window paints before asyncio loads

    # Looked for in the worker thread too: the events of a 5 000-turn branch took 27 ms.
    texts = await asyncio.to_thread(_long_texts, list(events))
    forget_prepared()  # what an open that was given up prepared is not kept
    whole = sum(len(text) for text, _user in texts)
    done = 0
    for number, (text, user) in enumerate(texts, 1):
        if progress is not None:
            progress.report("preparing", done, whole)
        # Only the last message can be on screen when the transcript opens at its end.
        ahead = render_ahead if number == len(texts) else None
        cuts, lines = await asyncio.to_thread(_parts, text, ahead, user)
        _PREPARED[id(text)] = (text, cuts, lines)
        done += len(text)
    if progress is not None and texts:
        progress.report("preparing", done, whole)


def _long_texts(events: list[p.Event]) -> list[tuple[str, bool]]:
    """The messages among ``events`` long enough to be prepared, each with whether it is the
    user's."""
    return [
        (text, event.item.kind == "user_message")
        for event in events
        if event.type == "item_completed"
        and event.item.kind in ("user_message", "agent_message")
        and len(text := data_text(event.item.data)) >= PREPARED_CHARS
    ]


def _parts(
    text: str, render_ahead: RenderAhead | None = None, breaks: bool = False
) -> tuple[list[Cut], list[int]]:
    """The display parts of ``text`` and the line breaks in each (counting them for the
    parts' height estimates on the window's thread took 30 ms for 50 MB); the last parts'
    Markdown rendered with ``render_ahead`` (on the window's thread, the replay rendered the
    part on screen in the block that draws it: 3.8 ms of 14 for a 16 KB part)."""
    cuts = quick_cuts(text)
    bounds = [0, *(cut.offset for cut in cuts), len(text)]
    if render_ahead is not None:
        for index in range(len(cuts), max(-1, len(cuts) - PARTS_RENDERED_AHEAD), -1):
            render_ahead(segment_source(text, cuts, index), breaks, segment_complete(cuts, index))
    return cuts, [text.count("\n", begin, end) for begin, end in pairwise(bounds)]


def prepared_cuts(text: str) -> tuple[list[Cut], list[int] | None]:
    """The display parts of ``text`` and the line breaks in each: found beforehand by
    ``prepare_replay``, else the parts now (and no line counts)."""
    prepared = _PREPARED.pop(id(text), None)
    if prepared is not None and prepared[0] is text:
        return prepared[1], prepared[2]
    return quick_cuts(text), None


def forget_prepared() -> None:
    """Drop what was prepared and not used (the replay is over)."""
    _PREPARED.clear()
