"""Rebuilding the history after a local compaction: which user messages are the user's own,
which are kept (newest first, within the budget, the first that does not fit shortened), what
leaves the view and is carried as notes, the check against the room, and what a remote
compaction's output keeps."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from app.core.compaction.budget import KEPT_FLOOR
from app.core.compaction.fit import MIN_SHORTENED_TOKENS
from app.core.compaction.notes.block import NOTES_LABEL
from app.core.compaction.notes.carryover import candidate_limit
from app.core.compaction.notes.material import NotesMaterial, read_notes_material
from app.core.compaction.prompts import summary_text
from app.core.compaction.rebuild import (
    Shrunk,
    build_compacted_history,
    filter_remote_output,
    leaving_messages,
    real_user_messages,
    real_user_messages_newest_first,
    select_kept_messages,
    select_kept_newest_first,
    select_with_notes,
    shrink_to_room,
)
from app.core.items import (
    INJECTED_PREFIXES,
    Item,
    assistant_message,
    message_text,
    user_message,
)
from app.core.tokens.estimate import ITEM_OVERHEAD_TOKENS as OVERHEAD
from app.core.tokens.estimate import approx_tokens

count = len  # a token a character: every figure below can be worked out by hand


def _size(items: Sequence[Item], counter: Callable[[str], int] = count) -> int:
    return sum(counter(message_text(item)) + OVERHEAD for item in items)


# ---------------------------------------------------------------- the user's own messages


def test_only_the_users_own_words_are_real_messages() -> None:
    # A notes block whose first part is empty: its text is a block all the same.
    block_after_empty_part: Item = {
        "type": "message",
        "role": "user",
        "content": [
            {"type": "input_text", "text": ""},
            {"type": "input_text", "text": f"{NOTES_LABEL} Port 8080."},
        ],
    }
    history = [
        user_message(f"  \n{INJECTED_PREFIXES[0]}cwd</environment_context>"),
        user_message("First."),
        assistant_message("An answer."),
        user_message(summary_text("An earlier summary.")),
        block_after_empty_part,
        user_message(f"{NOTES_LABEL} Port 8080."),
        user_message("Second."),
        user_message("Third."),
    ]
    assert real_user_messages(history) == ["First.", "Second.", "Third."]
    assert list(real_user_messages_newest_first(history)) == ["Third.", "Second.", "First."]


# ---------------------------------------------------------------- the kept messages


def test_a_message_that_fills_the_budget_exactly_is_kept_whole() -> None:
    kept, truncated = select_kept_messages(["a" * 10], budget=10, count=count)
    assert kept == ["a" * 10] and truncated is False


def test_nothing_is_kept_once_the_budget_is_spent() -> None:
    # The budget is spent by the newest: an empty older message is not kept either.
    assert select_kept_newest_first(["abc", ""], budget=3, count=count) == (["abc"], False)


def test_a_budget_of_one_token_left_still_takes_a_one_token_message() -> None:
    assert select_kept_messages(["x", "abc"], budget=4, count=count) == (["x", "abc"], False)


def test_the_first_message_that_does_not_fit_is_shortened_when_the_floor_is_left() -> None:
    older, newer = "o" * 100, "n" * 8
    kept, truncated = select_kept_messages(
        [older, newer], budget=8 + MIN_SHORTENED_TOKENS, count=count
    )
    assert truncated is True and kept[1] == newer
    assert kept[0] != older and 0 < count(kept[0]) <= MIN_SHORTENED_TOKENS
    # One token less than the floor: the walk stops there, nothing shortened.
    kept, truncated = select_kept_messages(
        [older, newer], budget=8 + MIN_SHORTENED_TOKENS - 1, count=count
    )
    assert (kept, truncated) == ([newer], False)


def test_the_newest_message_is_shortened_whatever_the_budget() -> None:
    kept, truncated = select_kept_newest_first(["n" * 100], budget=20, count=count)
    assert truncated is True and len(kept) == 1 and count(kept[0]) < 100


def test_what_leaves_is_the_oldest_and_the_shortened_one() -> None:
    assert leaving_messages(["a", "b", "c"], ["c"], False) == ["a", "b"]
    assert leaving_messages(["a", "b", "c"], ["b…", "c"], True) == ["a", "b"]


# ---------------------------------------------------------------- the room check


def test_a_history_that_fills_the_room_exactly_loses_nothing() -> None:
    kept, summary, context = ["a" * 10, "b" * 10], "The summary.", 5
    room = 2 * (10 + OVERHEAD) + count(summary_text(summary)) + OVERHEAD + context
    assert shrink_to_room(kept, summary, context, room, count) == (kept, summary, Shrunk())
    # Without a summary the summary costs nothing.
    room = 2 * (10 + OVERHEAD) + context
    assert shrink_to_room(kept, "", context, room, count) == (kept, "", Shrunk())


def test_one_token_over_the_room_drops_the_oldest_kept_message() -> None:
    kept, summary, context = ["a" * 10, "b" * 10], "The summary.", 5
    room = 2 * (10 + OVERHEAD) + count(summary_text(summary)) + OVERHEAD + context - 1
    assert shrink_to_room(kept, summary, context, room, count) == (
        ["b" * 10],
        summary,
        Shrunk(dropped_messages=1),
    )


def test_the_last_kept_message_is_shortened_by_what_is_over() -> None:
    summary = "The summary."
    room = 100 + OVERHEAD + count(summary_text(summary)) + OVERHEAD
    kept, left, shrunk = shrink_to_room(["k" * 200], summary, 0, room, count)
    assert shrunk == Shrunk(truncated_messages=1) and left == summary
    assert MIN_SHORTENED_TOKENS < count(kept[0]) <= 100


def test_the_summary_is_shortened_by_what_is_over_once_the_messages_are_cut() -> None:
    summary = "s" * 400
    room = MIN_SHORTENED_TOKENS + OVERHEAD + count(summary_text(summary)) - 100 + OVERHEAD
    _, left, shrunk = shrink_to_room(["k" * 200], summary, 0, room, count)
    assert shrunk == Shrunk(truncated_messages=1, summary_truncated=True)
    # Cut by what is over, not down to the floor.
    assert isinstance(left, str) and MIN_SHORTENED_TOKENS < count(left) < count(summary)


# ---------------------------------------------------------------- the rebuilt history


def _history(*texts: str) -> list[Item]:
    items: list[Item] = []
    for text in texts:
        items += [user_message(text), assistant_message("Noted.")]
    return items


def test_the_room_check_counts_every_item_of_the_rebuilt_history() -> None:
    history = _history(
        "The gateway listens on port 8443. " + "More words. " * 10,
        "Deploys must go through the pipeline.",
        "What next?",
    )
    context = [user_message(f"{INJECTED_PREFIXES[0]}cwd</environment_context>")]

    def rebuild(room: int | None) -> tuple[list[Item], Shrunk]:
        built = build_compacted_history(
            history,
            "The summary.",
            initial_context=context,
            budget=15,
            room=room,
            count=approx_tokens,
            notes_budget=200,
        )
        return built.items, built.shrunk

    items, shrunk = rebuild(None)
    assert shrunk == Shrunk() and any(NOTES_LABEL in message_text(i) for i in items)
    size = _size(items, approx_tokens)
    assert rebuild(size) == (items, Shrunk())
    assert rebuild(size - 1)[1].any


def test_which_kept_messages_count_as_shortened() -> None:
    history = _history("o" * 100, "n" * 10)
    selected = build_compacted_history(history, "S.", budget=10 + MIN_SHORTENED_TOKENS, count=count)
    assert selected.kept_truncated is True and selected.shrunk == Shrunk()
    whole = build_compacted_history(history, "S.", budget=1_000, room=1_000, count=count)
    assert whole.kept_truncated is False and whole.kept_user_messages == 2
    room = 50 + OVERHEAD + count(summary_text("S.")) + OVERHEAD
    alone = _history("o" * 100)
    shrunk = build_compacted_history(alone, "S.", budget=1_000, room=room, count=count)
    assert shrunk.shrunk == Shrunk(truncated_messages=1) and shrunk.kept_truncated is True


def test_a_room_too_small_reports_what_went() -> None:
    history = _history("a" * 10, "b" * 10)
    room = 10 + OVERHEAD + count(summary_text("S.")) + OVERHEAD
    built = build_compacted_history(history, "S.", budget=1_000, room=room, count=count)
    assert built.shrunk == Shrunk(dropped_messages=1) and built.kept_user_messages == 1


def test_the_history_is_read_for_notes_by_the_reader_given() -> None:
    read: list[int] = []

    def reader(items: list[Item]) -> NotesMaterial:
        read.append(len(items))
        return read_notes_material(items)

    history = _history("Port 8443.", "Next.")
    build_compacted_history(history, "S.", count=count, notes_budget=200, read_notes=reader)
    assert read == [len(history)]


def test_the_kept_messages_are_counted_with_the_count_given() -> None:
    history = _history("a" * 10, "b" * 10, "c" * 10)
    # A token a character: 25 tokens hold two of them, not three (nor a shortened third).
    for notes_budget in (None, 200):
        kept, truncated, _, _ = select_with_notes(history, 25, notes_budget, count)
        assert (kept, truncated) == (["b" * 10, "c" * 10], False)


def test_no_notes_take_no_tokens() -> None:
    history = _history("Hello.", "Next.")
    assert select_with_notes(history, 1_000, None, count)[3] == 0
    # Notes on, but nothing leaves the view: no block.
    kept, _, carried, tokens = select_with_notes(history, 1_000, 200, count)
    assert kept == ["Hello.", "Next."] and carried.empty and tokens == 0


GATEWAY = "The gateway listens on port 8443."
WORKERS = "Each worker gets 512 MB of memory."
DEPLOYS = "Deploys must go through the pipeline on staging first."


def test_the_facts_of_what_leaves_are_carried_in_a_block_counted_with_its_overhead() -> None:
    history = _history(GATEWAY, WORKERS)
    budget = approx_tokens(WORKERS)
    kept, _, carried, tokens = select_with_notes(history, budget, 200, approx_tokens)
    assert kept == [WORKERS] and carried.notes == (GATEWAY,)  # the kept one is still in view
    assert tokens == approx_tokens(carried.text()) + OVERHEAD


def test_a_shortened_message_leaves_the_view_and_its_facts_are_carried() -> None:
    older = GATEWAY + " " + "filler " * 40
    history = _history(older, "n" * 40)
    kept, truncated, carried, _ = select_with_notes(history, 10 + 40, 200, approx_tokens)
    assert truncated is True and kept[0] != older and kept[1] == "n" * 40
    assert GATEWAY in carried.notes


def _double(text: str) -> int:
    return 2 * approx_tokens(text)


@pytest.mark.parametrize("counter", [approx_tokens, _double], ids=["estimate", "double"])
def test_the_block_narrows_the_kept_messages_and_what_that_sends_out_is_carried(
    counter: Callable[[str], int],
) -> None:
    newest = WORKERS + " " + "c" * 200
    history = _history(GATEWAY, DEPLOYS, newest)
    budget = counter(DEPLOYS) + counter(newest)
    # Without notes the two newer messages fill the budget.
    assert select_with_notes(history, budget, None, counter)[:2] == ([DEPLOYS, newest], False)
    kept, truncated, carried, tokens = select_with_notes(history, budget, 200, counter)
    # The block's tokens come out of the budget, down to its floor: the message before the
    # newest leaves too, and its fact is carried.
    assert (kept, truncated) == select_kept_messages([DEPLOYS, newest], KEPT_FLOOR, counter)
    assert DEPLOYS not in kept and GATEWAY in carried.notes and DEPLOYS in carried.notes
    # The newest stays whole at one token an estimate; at two it is shortened, so it leaves
    # the view as well (its middle is gone) and its fact is carried.
    assert (WORKERS in carried.notes) is truncated
    assert tokens == counter(carried.text()) + OVERHEAD


def test_only_about_twice_what_the_block_holds_is_read_for_notes() -> None:
    facts = [f"Service {n} listens on port {8000 + n}." for n in range(60)]
    history = _history(*facts, "What next?")
    _, _, carried, _ = select_with_notes(history, 20, 200, approx_tokens)
    # 200 tokens: the 48 newest notes are weighed (each message holds one), the rest not read.
    assert len(carried.notes) + carried.dropped == 48
    assert "Service 57 listens on port 8057." in carried.notes


def test_a_narrower_pass_weighs_the_notes_it_sends_out_within_the_same_limit() -> None:
    facts = [f"Service {n} listens on port {8000 + n}." for n in range(300)]
    kept, _, carried, _ = select_with_notes(_history(*facts), 1_000, 800, approx_tokens)
    assert len(kept) < len(select_kept_messages(facts, 1_000, approx_tokens)[0])
    # What left at first and what the narrower pass sent out are each read for their newest
    # notes up to the limit of an 800-token block (each message holds one).
    assert len(carried.notes) + carried.dropped == 2 * candidate_limit(800)


# ---------------------------------------------------------------- a remote compaction's output


def test_a_remote_output_keeps_messages_and_compaction_items_only() -> None:
    untyped_user: Item = {"role": "user", "content": "Typed without a type."}
    untyped_developer: Item = {"role": "developer", "content": "Rules."}
    kept = [
        untyped_user,
        assistant_message("An answer."),
        user_message("A question."),
        {"type": "compaction_summary", "encrypted_content": "x"},
        {"type": "compaction", "encrypted_content": "y"},
    ]
    dropped = [
        untyped_developer,
        {"type": "message", "role": "developer", "content": "Rules."},
        {"content": "neither a type nor a role"},
        user_message(f"{INJECTED_PREFIXES[0]}cwd</environment_context>"),
        user_message(f"{NOTES_LABEL} Port 8080."),
        {"type": "reasoning", "encrypted_content": "z"},
        {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{}"},
    ]
    assert filter_remote_output([*dropped, *kept]) == kept
