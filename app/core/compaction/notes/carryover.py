"""What the user told the model, carried over every compaction without asking a model
(spec section 10).

A summary is only as good as the model that writes it: a small local model's summary keeps
almost none of the user's facts. So at every compaction Coco itself takes, from the user
messages leaving the model's view, the statements that carry facts (names and identifiers,
paths and URLs, numbers with units, dates and times, code spans, e-mail addresses, and the
rules the user set: "always", "never", "must", "don't", "please use", "make sure"), in the
user's own words, and from the tool calls leaving the view the files read, the files changed
and the commands run. They go into the rebuilt history as one labelled user message, just
before the summary: the **carried notes**. The next compaction finds that block by its label
and merges it with what leaves then, so a note survives any number of compactions unless its
budget (a share of the post-compaction room, ``CompactionBudget.notes_budget``) forces it out; then the
least specific and oldest notes go first.

Deterministic, no model call, no tokenizer call per sentence (sizes are estimated from bytes;
the caller counts the finished block once): one linear pass over the messages leaving view.

This module merges and chooses what is carried within the budget. The block itself is
``notes_block``; what a fact is, ``facts``; reading notes out of messages, ``note_extraction``
(once per message: ``note_cache``); the files and commands lists, ``tool_traffic``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from itertools import compress

from ...items import Item
from ...tokens.counter import approx_tokens
from .block import (
    NOTES_HEADING,
    NOTES_LABEL,
    CarriedOver,
    is_notes_message,
    is_notes_text,
    notes_from_text,
    previous_notes,
)
from .cache import extract_many, extract_notes, extract_scored
from .extraction import MAX_NOTE_CHARS, extract_chunk
from .facts import specificity
from .tool_traffic import TOOL_ITEM_TYPES, newest_first, tool_traffic

# What moved out with its concept stays importable from here, as before.
__all__ = [
    "LISTS_SHARE",
    "MAX_CANDIDATES",
    "MAX_COMMANDS",
    "MAX_FILES",
    "MAX_NOTE_CHARS",
    "NOTES_LABEL",
    "TOOL_ITEM_TYPES",
    "CarriedOver",
    "candidate_limit",
    "carry_over",
    "extract_chunk",
    "extract_many",
    "extract_notes",
    "extract_scored",
    "is_notes_message",
    "is_notes_text",
    "notes_from_text",
    "previous_notes",
    "specificity",
    "tool_traffic",
]

# More candidate notes than any budget holds are cut to this many (by eviction order) first.
MAX_CANDIDATES = 800
# The most entries each list keeps, newest first (a short list, not an inventory).
MAX_FILES = 12
MAX_COMMANDS = 8
# The files and commands lists give way to the notes past this share of the block.
LISTS_SHARE = 0.3
# A note's words, lowercase: how the same note is recognised twice.
_WORD_CHARS = re.compile(r"\w+")


# A note's words, to find notes that say the same: the same notes come back at every compaction
# (the block carried before, the digest-cached notes of each message) and twice within one,
# and reading their words again was a quarter of the merge's time.
@lru_cache(maxsize=8192)
def _key(text: str) -> str:
    return " ".join(_WORD_CHARS.findall(text.lower()))


# A note's specificity, for the notes of the block carried before: read with the fact patterns,
# the same notes at every merge (twice a compaction), a few milliseconds for a full block.
_specificity = lru_cache(maxsize=8192)(specificity)


# -- merging within the budget ---------------------------------------------------------------


def carry_over(
    leaving: Iterable[str],
    tool_items: Iterable[Item],
    previous: CarriedOver,
    budget: int,
    count: Callable[[str], int] = approx_tokens,
    extracted: list[tuple[str, int]] | None = None,
    traffic: tuple[list[str], list[str], list[str]] | None = None,
) -> CarriedOver:
    """The notes the rebuilt history carries: ``previous`` (the block the history held) merged
    with the facts of the user messages ``leaving`` the view (oldest first) and the files and
    commands of ``tool_items``, within ``budget`` tokens.

    Nothing the previous block carried is lost unless the budget forces it; then the least
    specific notes go first, the oldest first among equals, and the files and commands lists
    give way first, down to :data:`LISTS_SHARE` of the budget. ``count`` sizes the block
    (one call per size check, never one per sentence: an estimate from bytes by default).
    ``extracted``: the notes of ``leaving``, ``traffic``: :func:`tool_traffic` of
    ``tool_items``, when the caller has them already."""
    if extracted is None:
        extracted = extract_many(list(leaving), candidate_limit(budget))
    # The candidates, oldest first, each once: (specificity, chronological position, text).
    notes: list[tuple[int, int, str]] = []
    seen: set[str] = set()
    scored = [(text, _specificity(text)) for text in previous.notes]
    for text, score in [*scored, *extracted]:
        key = _key(text)
        if not key or key in seen:
            continue
        seen.add(key)
        notes.append((score, len(notes), text))
    if len(notes) > MAX_CANDIDATES:
        # Far more than any budget holds: the ones eviction would take first go now.
        strongest = sorted(notes)[-MAX_CANDIDATES:]  # by specificity, then position
        dropped_early = len(notes) - len(strongest)
        notes = sorted(strongest, key=lambda n: n[1])
    else:
        dropped_early = 0
    new_changed, new_read, new_commands = traffic or tool_traffic(tool_items)
    changed = newest_first(list(reversed(new_changed)), previous.files_changed)[:MAX_FILES]
    read = [
        p for p in newest_first(list(reversed(new_read)), previous.files_read)
        if p not in changed
    ][:MAX_FILES]
    commands = newest_first(list(reversed(new_commands)), previous.commands)[:MAX_COMMANDS]
    if budget <= 0:
        return CarriedOver()
    # The lists give way first, down to their share of the budget: the notes are the point.
    lists_cap = int(budget * LISTS_SHARE)
    while (changed or read or commands) and _lists_tokens(changed, read, commands) > lists_cap:
        max((commands, read, changed), key=len).pop()
    # Which notes stay: the most specific first, the newest first among equals, while their
    # estimated size fits; then one real count, and a smaller estimate if that was short.
    texts = [text for _, _, text in notes]
    # A note's line ("- " + text + a line break) in bytes / 4, not rounded: the block is
    # counted whole. By rank: the most specific first, the newest first among equals.
    ranked = [
        (index, (len(texts[index].encode("utf-8")) + 3) / 4)
        for index in sorted(range(len(notes)), key=lambda i: notes[i][:2], reverse=True)
    ]
    target = budget
    best: CarriedOver | None = None
    for _ in range(6):
        header = CarriedOver((), tuple(changed), tuple(read), tuple(commands)).text()
        fixed = approx_tokens(header) + (len(NOTES_HEADING) + 2) / 4
        room: float = target - fixed
        chosen = bytearray(len(notes))
        for index, cost in ranked:
            if cost <= room:
                chosen[index] = 1
                room -= cost
            elif room < 8:
                break
        kept = tuple(compress(texts, chosen))
        block = CarriedOver(
            kept, tuple(changed), tuple(read), tuple(commands),
            dropped_early + len(notes) - len(kept),
        )
        if block.empty:
            return block
        size = count(block.text())
        if size <= budget:
            if best is not None and len(block.notes) <= len(best.notes):
                break
            best = block
            if len(kept) == len(notes) or budget - size < 6:
                break
            target += budget - size  # the estimate was generous: room for more
            continue
        if best is not None:
            break
        target -= size - budget + 4
        if not kept and (changed or read or commands):
            max((commands, read, changed), key=len).pop()
    if best is None:
        return CarriedOver(dropped=dropped_early + len(notes))
    return _without_contained_notes(best)


def candidate_limit(budget: int) -> int:
    """How many of the newest notes are worth reading for a block of ``budget`` tokens: about
    twice what it can hold (a note takes some twenty tokens)."""
    return max(48, budget // 10)


def _lists_tokens(*lists: list[str]) -> int:
    return sum(approx_tokens(entry) + 2 for entries in lists for entry in entries)


def _without_contained_notes(block: CarriedOver) -> CarriedOver:
    """The block less the notes whose words are all inside another of its notes (the longer
    one says it all): a note whose key is found in another note's key. Run on what the budget
    kept, so it stays small."""
    contained = _CONTAINED.of([_key(note) for note in block.notes])
    if not contained:
        return block
    kept = tuple(n for i, n in enumerate(block.notes) if i not in contained)
    return CarriedOver(
        kept, block.files_changed, block.files_read, block.commands,
        block.dropped + len(block.notes) - len(kept),
    )


def contained_by_search(keys: list[str]) -> set[int]:
    """The indices of ``keys`` found inside another of them: each key searched for in all the
    keys joined (a key found twice is inside another; keys hold no line breaks)."""
    joined = "\n".join(keys)
    return {index for index, key in enumerate(keys) if joined.count(key) >= 2}


class Containment:
    """:func:`contained_by_search` that remembers which keys each key is inside, for the keys
    of its last two calls. The notes of a merge are mostly those of the last ones (the block
    carried before, the same messages leaving; a compaction merges twice, the second time
    with a few more leaving): only the keys not seen then are searched for, and searched in."""

    def __init__(self) -> None:
        self._keys: frozenset[str] = frozenset()  # the keys of the last two calls
        self._last: frozenset[str] = frozenset()  # the keys of the last call
        self._inside: dict[str, tuple[str, ...]] = {}  # a key -> the known keys it is inside

    def of(self, keys: list[str]) -> set[int]:
        """The indices of ``keys`` found inside another of them."""
        current = frozenset(keys)
        if len(current) != len(keys) or "" in current:
            return contained_by_search(keys)  # not a merge's keys (never twice, never empty)
        known, inside = self._keys, self._inside
        new = [key for key in keys if key not in known]
        if new:
            inside = self._learn(new)
        contained = {
            index
            for index, key in enumerate(keys)
            if any(other in current for other in inside.get(key, ()))
        }
        keep = current | self._last
        self._keys, self._last = keep, current
        self._inside = {}
        for key, others in inside.items():
            if key in keep:
                others = tuple(other for other in others if other in keep)
                if others:
                    self._inside[key] = others
        return contained

    def _learn(self, new: list[str]) -> dict[str, tuple[str, ...]]:
        """What each key known or ``new`` is inside, among them all."""
        known = list(self._keys)
        everything = [*known, *new]
        new_joined, all_joined = "\n".join(new), "\n".join(everything)
        inside: dict[str, tuple[str, ...]] = {}
        for key in known:
            others = self._inside.get(key, ())
            if key in new_joined:
                others = (*others, *(other for other in new if key in other))
            if others:
                inside[key] = others
        for key in new:
            if all_joined.count(key) >= 2:  # once is itself
                inside[key] = tuple(o for o in everything if o != key and key in o)
        return inside


# One per process, like the note cache: compactions run on the core's one thread.
_CONTAINED = Containment()
