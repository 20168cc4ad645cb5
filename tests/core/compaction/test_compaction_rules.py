"""The pure rules behind "compaction always makes room": budgets, decisions, fitting, pruning."""

from __future__ import annotations

import pytest

from app.core.compaction import policy
from app.core.compaction.budget import (
    KEPT_USER_MESSAGE_CEILING,
    SUMMARY_CEILING,
    compaction_budget,
    is_fragment,
    request_room,
)
from app.core.compaction.fit import fit_items, truncate_text
from app.core.compaction.paths.prune import prune_tool_outputs
from app.core.compaction.prompts import is_summary_message, summary_text
from app.core.compaction.rebuild import build_compacted_history, shrink_to_room
from app.core.items import (
    assistant_message,
    function_call,
    function_call_output,
    item_type,
    message_text,
    user_message,
)
from app.core.tokens.counter import approx_tokens


def count_item(item: dict) -> int:
    from app.core.items import item_text_for_count

    return approx_tokens(item_text_for_count(item)) + 4


# ------------------------------------------------------------------ budget


@pytest.mark.parametrize("window", [4_096, 8_192, 16_000, 32_000, 128_000, 1_047_576])
def test_budget_leaves_half_the_limit_and_shares_it(window: int) -> None:
    limit = int(window * 0.9)
    budget = compaction_budget(window, limit, overhead=500)
    assert budget.target == limit // 2
    room = budget.history_room
    assert room == budget.target - 500
    assert budget.summary is not None and budget.summary <= SUMMARY_CEILING
    # Summary and kept messages together never exceed the room.
    assert budget.summary + budget.kept_ceiling <= room
    assert budget.kept_ceiling <= KEPT_USER_MESSAGE_CEILING


def test_large_windows_keep_codexs_ceiling_small_ones_scale_down() -> None:
    big = compaction_budget(1_047_576, 942_818, overhead=500)
    small = compaction_budget(4_096, 3_686, overhead=500)
    assert big.kept_ceiling == KEPT_USER_MESSAGE_CEILING
    assert small.kept_ceiling < 1_500  # Codex's 20 000 would be five times the whole window
    assert small.summary is not None and 96 <= small.summary < 1_000


def test_an_incoming_message_shrinks_the_target_by_its_size() -> None:
    alone = compaction_budget(16_000, 14_400, overhead=500)
    with_message = compaction_budget(16_000, 14_400, overhead=500, incoming=2_000)
    assert alone.target is not None and with_message.target == alone.target - 2_000
    huge = compaction_budget(4_096, 3_686, overhead=500, incoming=3_000)
    assert huge.history_room is not None and huge.history_room >= 96 + 64  # never nothing


def test_unknown_window_falls_back_to_codexs_rules() -> None:
    budget = compaction_budget(None, None, overhead=500)
    assert (budget.target, budget.summary, budget.kept_ceiling) == (None, None, 20_000)
    assert request_room(budget, 100) is None


def test_request_room_reserves_the_summary_and_a_margin() -> None:
    budget = compaction_budget(4_096, 3_686, overhead=500)
    room = request_room(budget, budget.summary)
    assert room is not None and budget.summary is not None
    assert room + budget.summary + budget.fit_margin() == 4_096


@pytest.mark.parametrize(
    ("tokens", "limit", "cut", "fragment"),
    [
        (0, 400, False, True),  # empty
        (3, 400, False, False),  # short, but the model ended it: its answer
        (1, 400, True, True),  # "Your", cut at the limit
        (12, None, True, True),
        (90, 400, True, True),  # cut well before its budget: the window stopped it
        (380, 400, True, False),  # filled its budget: a full summary, not a fragment
    ],
)
def test_fragments(tokens: int, limit: int | None, cut: bool, fragment: bool) -> None:
    assert is_fragment(tokens, limit, cut) is fragment


# ------------------------------------------------------------------ decisions


def test_loop_guard_needs_growth_back_over_the_limit() -> None:
    assert not policy.grown_back(800, 900, post_compaction=400)
    assert policy.grown_back(900, 900, post_compaction=400)
    # A compaction that could not get under the limit: half a limit of growth first.
    assert not policy.grown_back(1_000, 900, post_compaction=950)
    assert policy.grown_back(1_400, 900, post_compaction=950)


def test_pre_turn_counts_the_incoming_message() -> None:
    args = {
        "auto": True,
        "history_len": 4,
        "limit": 900,
        "unchanged_since_compaction": False,
        "post_compaction": None,
    }
    assert not policy.should_compact_before_turn(usage=700, incoming=100, **args)
    assert policy.should_compact_before_turn(usage=700, incoming=200, **args)
    assert not policy.should_compact_before_turn(
        usage=700, incoming=200, **{**args, "auto": False}
    )
    assert not policy.should_compact_before_turn(
        usage=700, incoming=200, **{**args, "unchanged_since_compaction": True}
    )
    assert not policy.should_compact_before_turn(usage=700, incoming=200, **{**args, "limit": None})
    assert not policy.should_compact_before_turn(
        usage=700, incoming=200, **{**args, "history_len": 0}
    )


def test_mid_turn_and_overflow_decisions() -> None:
    assert policy.should_compact_mid_turn(
        auto=True, usage=950, limit=900, unchanged_since_compaction=False, post_compaction=300
    )
    assert not policy.should_compact_mid_turn(
        auto=True, usage=950, limit=900, unchanged_since_compaction=True, post_compaction=300
    )
    assert policy.on_overflow(auto=False, already_retried=False) == "auto_off"
    assert policy.on_overflow(auto=True, already_retried=False) == "compact"
    assert policy.on_overflow(auto=True, already_retried=True) == "give_up"


def test_model_switch_and_message_room() -> None:
    assert policy.compaction_model_for_switch("big", "small", 128_000, 8_000) == "big"
    assert policy.compaction_model_for_switch("small", "big", 8_000, 128_000) is None
    assert policy.compaction_model_for_switch(None, "big", None, 8_000) is None
    assert policy.message_room(3_686, 500) == 3_186
    assert policy.message_room(None, 500) is None


# ------------------------------------------------------------------ fitting


def _counts(items: list[dict]) -> list[int]:
    return [count_item(item) for item in items]


def test_fit_drops_oldest_calls_with_their_outputs_and_keeps_the_summary() -> None:
    summary = user_message(summary_text("earlier state " * 40))
    items = [
        summary,
        function_call("read_file", "{}", "c1"),
        function_call_output("c1", "x" * 4000),
        user_message("q2"),
        assistant_message("a2"),
        user_message("q3"),
    ]
    fitted = fit_items(items, _counts(items), 250, protect=lambda i: i is summary)
    assert fitted.items[0] is summary  # the earlier summary is the last to go
    kinds = [item_type(item) for item in fitted.items]
    assert "function_call" not in kinds and "function_call_output" not in kinds
    assert fitted.items[-1] == user_message("q3")
    assert sum(fitted.counts) <= 250
    # With less room still, it is shortened, never dropped, and its prefix stays.
    tight = fit_items(items, _counts(items), 150, protect=lambda i: i is summary)
    assert is_summary_message(tight.items[0]) and tight.truncated == 1
    assert sum(tight.counts) <= 150


def test_fit_shortens_the_newest_message_instead_of_dropping_it() -> None:
    items = [user_message("old"), user_message("y" * 40_000)]
    fitted = fit_items(items, _counts(items), 500, protect=lambda _: False)
    assert len(fitted.items) == 1 and fitted.truncated == 1
    text = message_text(fitted.items[0])
    assert "tokens truncated" in text and text.startswith("y") and text.endswith("y")
    assert sum(fitted.counts) <= 500


def test_fit_never_leaves_an_output_without_its_call() -> None:
    items = [
        function_call("read_file", "{}", "c1"),
        user_message("z" * 2000),
        function_call_output("c1", "out"),
        user_message("last"),
    ]
    fitted = fit_items(items, _counts(items), 20, protect=lambda _: False)
    assert all(item_type(item) != "function_call_output" for item in fitted.items)


def test_truncate_text_fits_the_real_count_for_dense_text() -> None:
    def dense(text: str) -> int:  # a tokenizer that counts one token a character (CJK-like)
        return len(text)

    text = "漢" * 5_000
    cut = truncate_text(text, 300, dense)
    assert dense(cut) <= 300 and "tokens truncated" in cut


def test_prune_stubs_old_outputs_and_spares_recent_turns() -> None:
    items = [
        user_message("turn one"),
        function_call("read_file", '{"path": "a"}', "c1"),
        function_call_output("c1", "A" * 8000),
        assistant_message("read a"),
        user_message("turn two"),
        function_call("read_file", '{"path": "b"}', "c2"),
        function_call_output("c2", "B" * 8000),
        user_message("turn three"),
        function_call("read_file", '{"path": "c"}', "c3"),
        function_call_output("c3", "C" * 8000),
    ]
    found = prune_tool_outputs(items, _counts(items), protected_turns=2, count_item=count_item)
    assert found is not None
    pruned, counts = found
    assert pruned.outputs == 1 and pruned.tokens_elided == count_item(items[2])
    assert "Output of read_file removed" in pruned.items[2]["output"]
    assert pruned.items[2]["call_id"] == "c1"
    assert pruned.items[6] is items[6] and pruned.items[9] is items[9]  # the last two turns
    assert sum(counts) < sum(_counts(items))


def test_prune_finds_nothing_in_a_short_conversation() -> None:
    items = [user_message("q"), function_call("f", "{}", "c"), function_call_output("c", "o" * 900)]
    assert prune_tool_outputs(items, _counts(items), count_item=count_item) is None


# ------------------------------------------------------------------ checking the result


def test_shrink_drops_old_kept_messages_then_truncates_then_cuts_the_summary() -> None:
    kept = ["a" * 400, "b" * 400, "c" * 4000]
    left, summary, shrunk = shrink_to_room(kept, "S" * 400, 0, 400, approx_tokens)
    assert shrunk.dropped_messages == 2 and shrunk.truncated_messages == 1
    assert left[0].startswith("c") and "tokens truncated" in left[0]
    assert not shrunk.summary_truncated and summary == "S" * 400

    left, summary, shrunk = shrink_to_room(["q"], "S" * 8000, 0, 300, approx_tokens)
    assert shrunk.summary_truncated
    assert approx_tokens(summary_text(summary)) + approx_tokens("q") + 8 <= 300
    assert left == ["q"]  # the user's last words stay


def test_rebuilt_history_fits_its_room_with_context_before_the_last_message() -> None:
    history = [user_message(f"message {i} " + "w" * 800) for i in range(30)]
    context = [user_message("<environment_context>\n  <cwd>/x</cwd>\n</environment_context>")]
    rebuilt = build_compacted_history(
        history, "the summary", initial_context=context, budget=5_000, room=1_000
    )
    total = sum(count_item(item) for item in rebuilt.items)
    assert total <= 1_000
    assert rebuilt.items[-1] == user_message(summary_text("the summary"))
    assert rebuilt.items[-3] == context[0]  # just before the last kept user message
    assert message_text(rebuilt.items[-2]).startswith("message 29")
