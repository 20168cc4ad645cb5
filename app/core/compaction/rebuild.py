"""Rebuilding the history after a local compaction (spec section 3, steps 6 and 7)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from ..attachments.parts import text_with_stand_ins
from ..items import (
    INJECTED_PREFIXES,
    Item,
    is_injected_context,
    is_message,
    message_text,
    user_message,
)
from ..tokens.counter import ITEM_OVERHEAD_TOKENS, approx_tokens
from .budget import KEPT_FLOOR, KEPT_USER_MESSAGE_CEILING
from .fit import MIN_SHORTENED_TOKENS, truncate_text
from .notes.block import CarriedOver, is_notes_message, is_notes_text
from .notes.carryover import candidate_limit, carry_over
from .notes.material import NotesMaterial, read_notes_material
from .prompts import summary_prefix, summary_text

# Codex's budget for user messages carried over verbatim (the ceiling on large windows).
KEPT_USER_MESSAGE_TOKENS = KEPT_USER_MESSAGE_CEILING


@dataclass(frozen=True)
class RebuiltHistory:
    items: list[Item]
    kept_user_messages: int
    kept_truncated: bool
    shrunk: Shrunk = field(default_factory=lambda: Shrunk())
    carried: CarriedOver = field(default_factory=CarriedOver)


def _is_real_user_message(item: Item) -> bool:
    if not is_message(item, "user"):
        return False
    text = message_text(item)
    return not (
        text.lstrip().startswith(INJECTED_PREFIXES)
        or text.startswith(summary_prefix() + "\n")
        or is_notes_text(text)
        or is_notes_message(item)
    )


def real_user_messages(history: list[Item]) -> list[str]:
    """Texts of the user's own messages: no injected context blocks, no earlier summaries,
    no carried notes."""
    return [text_with_stand_ins(item) for item in history if _is_real_user_message(item)]


def real_user_messages_newest_first(history: list[Item]) -> Iterator[str]:
    """:func:`real_user_messages` from the newest back, read only as far as the caller goes:
    choosing kept messages is a pass over the kept ones, not over the whole history."""
    for index in range(len(history) - 1, -1, -1):
        item = history[index]
        if _is_real_user_message(item):
            yield text_with_stand_ins(item)  # an attachment kept as the text naming it


def select_kept_messages(
    messages: Sequence[str],
    budget: int = KEPT_USER_MESSAGE_TOKENS,
    count: Callable[[str], int] = approx_tokens,
) -> tuple[list[str], bool]:
    """Newest first within ``budget`` tokens; the first that does not fit is middle-truncated
    to what remains and the walk stops. Returned in chronological order."""
    return select_kept_newest_first(reversed(messages), budget, count)


def select_kept_newest_first(
    newest_first: Iterable[str],
    budget: int = KEPT_USER_MESSAGE_TOKENS,
    count: Callable[[str], int] = approx_tokens,
) -> tuple[list[str], bool]:
    """:func:`select_kept_messages` for messages given newest first (read lazily)."""
    kept: list[str] = []
    remaining = budget
    truncated = False
    for text in newest_first:
        if remaining <= 0:
            break
        cost = count(text)
        if cost <= remaining:
            kept.append(text)
            remaining -= cost
            continue
        if remaining >= MIN_SHORTENED_TOKENS or not kept:
            kept.append(truncate_text(text, remaining, count))
            truncated = True
        break
    kept.reverse()
    return kept, truncated


def leaving_messages(messages: Sequence[str], kept: list[str], truncated: bool) -> list[str]:
    """The user messages that leave the model's view when ``kept`` (the newest of
    ``messages``, the oldest of them middle-truncated when ``truncated``) stay: a shortened
    message leaves too, its middle is gone."""
    cut = len(messages) - len(kept)
    leaving = list(messages[:cut])
    if truncated and kept:
        leaving.append(messages[cut])
    return leaving


def select_with_notes(
    history: list[Item],
    budget: int,
    notes_budget: int | None,
    count: Callable[[str], int],
    read_notes: Callable[[list[Item]], NotesMaterial] = read_notes_material,
) -> tuple[list[str], bool, CarriedOver, int]:
    """The kept user messages and the carried notes together: the notes of what leaves the
    view (merged with the block ``history`` holds) within ``notes_budget`` tokens, the kept
    messages within what ``budget`` leaves beside them. Returns the kept messages, whether
    the oldest was shortened, the notes and the notes block's tokens (0 when there is none).
    ``notes_budget`` None: no notes (the setting is off). ``read_notes``: how the history's
    messages, notes block and tool traffic are read (a session's reader remembers them)."""
    if notes_budget is None:
        kept, truncated = select_kept_newest_first(
            real_user_messages_newest_first(history), budget, count
        )
        return kept, truncated, CarriedOver(), 0
    # The notes need what leaves the view: one pass over the history for the user's messages
    # (the kept ones are the newest of them), the block it holds and the tool calls; each
    # message is read for facts once.
    material = read_notes(history)
    messages, previous, tools, traffic = (
        material.messages, material.previous, material.tools, material.traffic
    )
    kept, truncated = select_kept_messages(messages, budget, count)
    # What leaves is always the oldest of the messages: ``leaving_messages`` is a prefix.
    leaving = leaving_messages(messages, kept, truncated)
    limit = candidate_limit(notes_budget)
    extracted = material.notes_of(0, len(leaving), limit)
    carried = carry_over(leaving, tools, previous, notes_budget, count, extracted, traffic)
    if carried.empty:
        return kept, truncated, carried, 0
    tokens = count(carried.text()) + ITEM_OVERHEAD_TOKENS
    # The kept messages make room for the block; what that sends out of view is carried too.
    narrower = max(min(budget, KEPT_FLOOR), budget - tokens)
    if narrower < budget:
        fewer, truncated = select_kept_messages(messages, narrower, count)
        if fewer != kept:
            kept = fewer
            more = leaving_messages(messages, kept, truncated)
            # What leaves now is what left before and a few newer messages: only those are
            # read for facts.
            if len(more) >= len(leaving):
                extracted = extracted + material.notes_of(len(leaving), len(more), limit)
            else:
                extracted = material.notes_of(0, len(more), limit)
            carried = carry_over(
                more, tools, previous, notes_budget, count, extracted, traffic
            )
            tokens = count(carried.text()) + ITEM_OVERHEAD_TOKENS
    return kept, truncated, carried, tokens


@dataclass(frozen=True)
class Shrunk:
    """What checking the rebuilt history against the target cut (item 4 of the guarantee)."""

    dropped_messages: int = 0
    truncated_messages: int = 0
    summary_truncated: bool = False

    @property
    def any(self) -> bool:
        return bool(self.dropped_messages or self.truncated_messages or self.summary_truncated)


def assemble(
    kept: list[str],
    summary: str | Item | None,
    initial_context: list[Item],
    carried: list[Item] | None = None,
) -> list[Item]:
    """Kept user messages, the initial context just before the last of them (so the summary
    stays last, as Codex 0.169.0 sends it for every compaction), then what is carried over
    verbatim (the carried-notes block), then the summary: a summary message's text, or a
    remote ``compaction`` item in its place (none when no summary was usable)."""
    items: list[Item] = [user_message(text) for text in kept]
    if initial_context:
        position = len(items) - 1 if items else 0
        items[position:position] = list(initial_context)
    items.extend(carried or [])
    if summary is not None:
        items.append(user_message(summary) if isinstance(summary, str) else summary)
    return items


def shrink_to_room(
    kept: list[str],
    summary: str,
    context_tokens: int,
    room: int,
    count: Callable[[str], int],
) -> tuple[list[str], str, Shrunk]:
    """Fit kept messages + the summary message (+ ``context_tokens`` of context blocks) into
    ``room``: fewer kept messages (oldest first), then the last kept message middle-truncated,
    then the summary's body middle-truncated (its prefix stays: it is how a summary is
    recognised). Returns what is left and what was cut."""
    kept = list(kept)
    costs = [count(text) + ITEM_OVERHEAD_TOKENS for text in kept]
    summary_cost = count(summary_text(summary)) + ITEM_OVERHEAD_TOKENS if summary else 0
    total = sum(costs) + summary_cost + context_tokens
    dropped = truncated = 0
    summary_cut = False
    while total > room and len(kept) > 1:
        total -= costs.pop(0)
        kept.pop(0)
        dropped += 1
    if total > room and kept:
        allowed = costs[0] - ITEM_OVERHEAD_TOKENS - (total - room)
        total -= costs.pop(0)
        # The user's last words stay, at least as a head and tail around the marker.
        kept[0] = truncate_text(kept[0], max(MIN_SHORTENED_TOKENS, allowed), count)
        total += count(kept[0]) + ITEM_OVERHEAD_TOKENS
        truncated += 1
    if total > room and summary:
        allowed = max(MIN_SHORTENED_TOKENS, count(summary) - (total - room))
        summary = truncate_text(summary, allowed, count)
        summary_cut = True
    return kept, summary, Shrunk(dropped, truncated, summary_cut)


def build_compacted_history(
    history: list[Item],
    summary: str,
    *,
    initial_context: list[Item] | None = None,
    budget: int = KEPT_USER_MESSAGE_TOKENS,
    room: int | None = None,
    count: Callable[[str], int] = approx_tokens,
    notes_budget: int | None = None,
    read_notes: Callable[[list[Item]], NotesMaterial] = read_notes_material,
) -> RebuiltHistory:
    """Kept user messages + the summary message (a user message, last), the initial context
    just before the last kept message, the carried notes (with ``notes_budget``) just before
    the summary. With ``room`` (tokens the whole rebuilt history may take), the result is
    checked and shrunk to fit (``RebuiltHistory.shrunk`` says what went). ``read_notes``:
    see :func:`select_with_notes`.
    """
    kept, truncated, carried, notes_tokens = select_with_notes(
        history, budget, notes_budget, count, read_notes
    )
    context = list(initial_context or [])
    shrunk = Shrunk()
    if room is not None:
        context_tokens = sum(count(message_text(i)) + ITEM_OVERHEAD_TOKENS for i in context)
        kept, summary, shrunk = shrink_to_room(
            kept, summary, context_tokens + notes_tokens, room, count
        )
    return RebuiltHistory(
        items=assemble(
            kept,
            summary_text(summary) if summary else None,
            context,
            [] if carried.empty else [carried.item()],
        ),
        kept_user_messages=len(kept),
        kept_truncated=truncated or shrunk.truncated_messages > 0,
        shrunk=shrunk,
        carried=carried,
    )


def filter_remote_output(output: list[Item]) -> list[Item]:
    """Keep what the remote compact endpoint returned that belongs in history: user and
    assistant messages and compaction items; drop developer messages, injected context,
    reasoning and tool traffic (spec section 4). A carried-notes block the server echoed is
    dropped: Coco puts its own, merged, beside the compaction item."""
    kept: list[Item] = []
    for item in output:
        kind = item.get("type", "message" if "role" in item else "")
        if kind in ("compaction", "compaction_summary") or (
            kind == "message"
            and item.get("role") in ("user", "assistant")
            and not is_injected_context(item)
            and not is_notes_message(item)
        ):
            kept.append(item)
    return kept
