"""One local compaction request (``LocalCompaction``): the history fitted so that the prompt
and the summary's budget fit the window, a fragment retried once with twice the room, a junk
answer retried once told why, a context-window error answered by fitting again (or, with no
window known, Codex's drop of the oldest item) until nothing is left to drop.

Counted in words, so every room and every cut below is worked out by hand."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from app.core.compaction.budget import CompactionBudget, request_room
from app.core.compaction.junk_summary import retry_note
from app.core.compaction.paths.local import (
    MAX_REFITS,
    ContextTooLarge,
    ItemCounts,
    LocalCompaction,
    drop_oldest,
)
from app.core.compaction.prompts import summary_text
from app.core.items import Item, assistant_message, message_text, user_message
from app.core.providers.base import ProviderError

from ..compaction_fakes import USAGE, ScriptedProvider

INSTRUCTIONS = "Be brief."  # 2 words
PROMPT = "Summarise now please."  # 3 words
PROMPT_COST = 3 + 2 + 8
# window 2 000: the fit margin is 6 % (120); the summary's budget 200 tokens.
BUDGET = CompactionBudget(
    window=2_000, limit=1_800, target=900, overhead=0, summary=200, kept_ceiling=400
)
FIRST_ROOM = 2_000 - 120 - 200  # the request's room with the summary's budget reserved
GOOD = (
    "The user set up three services, fixed the proxy timeout, and asked for a deploy "
    "checklist covering backups, alerts and the rollback plan."
)
HEADERS = {"x-test": "1"}


class Words:
    """One token a word."""

    def count(self, text: str) -> int:
        return len(text.split())

    def count_item(self, item: Item) -> int:
        return self.count(message_text(item))


def words(n: int, tag: str = "w") -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


def history(*sizes: int) -> list[Item]:
    """Messages of the given sizes in words, alternating user and assistant."""
    out: list[Item] = []
    for n, size in enumerate(sizes):
        make = user_message if n % 2 == 0 else assistant_message
        out.append(make(words(size, f"m{n}x")))
    return out


def compaction(
    provider: ScriptedProvider,
    items: list[Item],
    *,
    budget: CompactionBudget = BUDGET,
    total: int | None = None,
    known: list[int] | None = None,
    **changes: Any,
) -> tuple[LocalCompaction, list[int], list[tuple[str, str]]]:
    """The compaction of ``items``, the counts it reported trimmed, and its deltas."""
    counter = Words()
    counts = [counter.count_item(item) for item in items]
    trims: list[int] = []
    deltas: list[tuple[str, str]] = []
    local = LocalCompaction(
        provider=provider,
        model="model-a",
        instructions=INSTRUCTIONS,
        history=items,
        item_tokens=ItemCounts(
            total=sum(counts) if total is None else total,
            known=counts if known is None else known,
            every=lambda: list(counts),
        ),
        prompt=PROMPT,
        prompt_cache_key="cache-1",
        budget=budget,
        counter=counter,
        reasoning=False,
        max_retries=0,
        base_delay=0.0,
        on_retry=lambda attempt, most, error: None,
        on_trim=trims.append,
        on_delta=lambda item_id, delta: deltas.append((item_id, delta)),
        extra_headers=HEADERS,
    )
    return replace(local, **changes), trims, deltas


def sent(provider: ScriptedProvider, n: int = 0) -> list[Item]:
    """The history request ``n`` sent, without its prompt (which is checked to be last)."""
    request = provider.requests[n]
    assert message_text(request.input[-1]).startswith(PROMPT)
    return request.input[:-1]


def overflow() -> ProviderError:
    return ProviderError("context_overflow", "The request is larger than the model's window.")


async def test_one_request_holds_the_history_then_the_prompt_with_no_tools() -> None:
    provider = ScriptedProvider(streams=[[assistant_message(GOOD)]], deltas=True)
    items = history(50, 60, 70)
    local, trims, deltas = compaction(provider, items)
    result = await local.summarise()
    (request,) = provider.requests
    assert request.model == "model-a" and request.instructions == INSTRUCTIONS
    assert request.input == [*items, user_message(PROMPT)]
    assert request.tools == [] and request.send_empty_tools
    assert request.prompt_cache_key == "cache-1" and request.max_output_tokens == 200
    assert provider.headers == [HEADERS]
    assert deltas == [("msg", GOOD)]
    assert result.summary == GOOD and result.usage == USAGE
    assert (result.trimmed, result.truncated, result.cut_short) == (0, 0, False)
    assert result.output_limit == 200 and result.junk is None
    assert trims == []


async def test_the_prompt_costs_its_words_the_instructions_and_eight() -> None:
    local, _, _ = compaction(ScriptedProvider(), [])
    assert local.prompt_cost == PROMPT_COST


async def test_a_history_exactly_at_its_room_is_sent_whole_one_token_more_loses_the_oldest() -> (
    None
):
    room = FIRST_ROOM - PROMPT_COST
    at = history(100, 100, room - 200)
    provider = ScriptedProvider(streams=[[assistant_message(GOOD)], [assistant_message(GOOD)]])
    local, trims, _ = compaction(provider, at)
    assert (await local.summarise()).trimmed == 0 and sent(provider) == at and trims == []

    over = history(100, 100, room - 199)
    local, trims, _ = compaction(provider, over)
    result = await local.summarise()
    assert result.trimmed == 1 and sent(provider, 1) == over[1:] and trims == [1]


async def test_the_known_total_decides_what_leaves_not_a_recount() -> None:
    # The server counted 801 more than the room for what Coco counts 1 600: the fit goes by
    # the server's figure, each item that leaves counted as the session counts it (100).
    room = FIRST_ROOM - PROMPT_COST
    items = history(*[100] * 16)
    provider = ScriptedProvider(streams=[[assistant_message(GOOD)], [assistant_message(GOOD)]])
    local, _, _ = compaction(provider, items, total=room + 801, known=[-1] * 16)
    assert (await local.summarise()).trimmed == 9
    assert sent(provider) == items[9:]

    local, _, _ = compaction(provider, items)  # Coco's own count: 1 600 fits
    assert (await local.summarise()).trimmed == 0


async def test_the_earlier_summary_is_the_last_thing_to_leave_the_request() -> None:
    earlier = user_message(summary_text(words(100, "s")))
    items = [earlier, *history(*[100] * 18)]
    provider = ScriptedProvider(streams=[[assistant_message(GOOD)]])
    local, trims, _ = compaction(provider, items)
    result = await local.summarise()
    kept = sent(provider)
    assert kept[0] == earlier and kept[1:] == items[1 + result.trimmed :]
    assert result.trimmed == 3 and trims == [3]  # 1 900 words in a room of 1 667


async def test_a_newest_message_alone_over_the_room_is_shortened_by_the_session_s_count() -> None:
    # One-letter words: two bytes a token, twice as dense as the 4-bytes-a-token first cut.
    provider = ScriptedProvider(streams=[[assistant_message(GOOD)]])
    local, trims, _ = compaction(provider, [user_message("a " * 3_000)])
    result = await local.summarise()
    assert (result.trimmed, result.truncated) == (0, 1) and trims == [1]
    assert Words().count_item(sent(provider)[0]) <= FIRST_ROOM - PROMPT_COST


async def test_with_no_room_beside_the_prompt_only_the_newest_item_is_sent() -> None:
    budget = replace(BUDGET, window=200 + 48 + PROMPT_COST)  # the prompt fills what is left
    items = [user_message("hello"), assistant_message("")]
    provider = ScriptedProvider(streams=[[assistant_message(GOOD)]])
    local, trims, _ = compaction(provider, items, budget=budget)
    assert (await local.summarise()).trimmed == 1 and trims == [1]
    assert sent(provider) == items[1:]


async def test_a_reasoning_model_is_given_twice_the_limit_and_the_room_reserves_it() -> None:
    items = history(*[100] * 16)  # 1 600: fits beside 200 tokens of output, not beside 400
    provider = ScriptedProvider(streams=[[assistant_message(GOOD)]])
    local, _, _ = compaction(provider, items, reasoning=True)
    result = await local.summarise()
    assert provider.requests[0].max_output_tokens == 400 and result.output_limit == 200
    room = request_room(BUDGET, 400)
    assert (
        room is not None
        and result.trimmed == 2
        and sum(map(Words().count_item, sent(provider))) <= room - PROMPT_COST
    )


async def test_a_fragment_is_asked_again_with_twice_the_room_and_the_room_follows() -> None:
    items = history(*[100] * 16)
    provider = ScriptedProvider(
        streams=[[assistant_message("The user")], [assistant_message(GOOD)]],
        stops=["length", None],
    )
    local, trims, _ = compaction(provider, items)
    result = await local.summarise()
    assert [r.max_output_tokens for r in provider.requests] == [200, 400]
    assert sent(provider, 0) == items and sent(provider, 1) == items[2:]  # 1 467 with 400 kept
    assert result.summary == GOOD and not result.cut_short and result.output_limit == 400
    assert result.trimmed == 2 and trims == [2]


@pytest.mark.parametrize(
    ("window", "second"),
    [
        (2_000, 400),  # twice the first
        (450, 450 - 48 - PROMPT_COST),  # what the window holds beside the prompt
        (250, 200),  # never less than the first
    ],
)
async def test_the_retry_s_room_is_twice_the_first_as_far_as_the_window_allows(
    window: int, second: int
) -> None:
    budget = replace(BUDGET, window=window)
    provider = ScriptedProvider(
        streams=[[assistant_message("The user")], [assistant_message(GOOD)]],
        stops=["length", None],
    )
    local, _, _ = compaction(provider, history(2), budget=budget)
    await local.summarise()
    assert [r.max_output_tokens for r in provider.requests] == [200, second]


async def test_with_no_window_known_the_retry_doubles_and_nothing_is_fitted() -> None:
    budget = CompactionBudget(None, None, None, 0, 200, 400)
    items = history(*[100] * 40)
    provider = ScriptedProvider(
        streams=[[assistant_message("The user")], [assistant_message(GOOD)]],
        stops=["length", None],
    )
    local, trims, _ = compaction(provider, items, budget=budget)
    result = await local.summarise()
    assert [r.max_output_tokens for r in provider.requests] == [200, 400]
    assert sent(provider, 1) == items and result.trimmed == 0 and trims == []


async def test_with_no_summary_budget_a_fragment_is_asked_again_without_a_limit() -> None:
    budget = CompactionBudget(None, None, None, 0, None, 400)
    provider = ScriptedProvider(streams=[[], [assistant_message(GOOD)]])
    local, _, _ = compaction(provider, history(10), budget=budget)
    result = await local.summarise()
    assert [r.max_output_tokens for r in provider.requests] == [None, None]
    assert result.summary == GOOD and result.output_limit is None


async def test_a_summary_the_model_ended_itself_is_its_answer_however_short() -> None:
    provider = ScriptedProvider(streams=[[assistant_message("Nothing happened yet.")]])
    local, _, _ = compaction(provider, history(10))
    result = await local.summarise()
    assert not result.cut_short and len(provider.requests) == 1


async def test_cut_at_the_limit_a_quarter_of_the_budget_is_a_summary_less_is_a_fragment() -> None:
    # A quarter of 200 is 50 words: 50 cut at the limit is a summary, 49 a fragment.
    enough = words(50, "b")
    provider = ScriptedProvider(streams=[[assistant_message(enough)]], stops=["length"])
    local, _, _ = compaction(provider, history(10))
    result = await local.summarise()
    assert len(provider.requests) == 1 and result.summary == enough and not result.cut_short

    provider = ScriptedProvider(
        streams=[[assistant_message(words(49, "a"))], [assistant_message(GOOD)]],
        stops=["length", None],
    )
    local, _, _ = compaction(provider, history(10))
    assert (await local.summarise()).summary == GOOD and len(provider.requests) == 2


async def test_two_fragments_give_the_longer_and_say_it_is_cut_short() -> None:
    provider = ScriptedProvider(
        streams=[[assistant_message("The user asked")], [assistant_message("The")]],
        stops=["length", "length"],
    )
    local, _, _ = compaction(provider, history(10))
    result = await local.summarise()
    assert result.summary == "The user asked" and result.cut_short
    assert result.output_limit == 200  # the attempt that gave it


async def test_two_fragments_of_one_length_give_the_first() -> None:
    provider = ScriptedProvider(
        streams=[[assistant_message("The user")], [assistant_message("A user")]],
        stops=["length", "length"],
    )
    local, _, _ = compaction(provider, history(10))
    assert (await local.summarise()).summary == "The user"


async def test_junk_is_asked_again_told_why_with_the_same_limit() -> None:
    junk = " ".join(["The user asked about the proxy."] * 12)
    provider = ScriptedProvider(streams=[[assistant_message(junk)], [assistant_message(GOOD)]])
    local, _, _ = compaction(provider, history(10))
    result = await local.summarise()
    first, second = provider.requests
    assert message_text(first.input[-1]) == PROMPT
    assert message_text(second.input[-1]) == PROMPT + retry_note("repetition")
    assert second.max_output_tokens == 200
    assert result.summary == GOOD and result.junk is None and not result.cut_short


async def test_an_answer_that_gives_the_prompt_back_is_junk() -> None:
    prompt = "Write a handoff summary of this conversation for another assistant to continue it."
    provider = ScriptedProvider(streams=[[assistant_message(prompt)], [assistant_message(GOOD)]])
    local, _, _ = compaction(provider, history(10), prompt=prompt)
    result = await local.summarise()
    assert message_text(provider.requests[1].input[-1]) == prompt + retry_note("echo")
    assert result.summary == GOOD


async def test_junk_twice_is_returned_as_junk_not_as_cut_short() -> None:
    junk = " ".join(["The user asked about the proxy."] * 12)
    provider = ScriptedProvider(
        streams=[[assistant_message(junk)], [assistant_message(junk)]], stops=["length", "length"]
    )
    local, _, _ = compaction(provider, history(10))
    result = await local.summarise()
    assert result.junk == "repetition" and not result.cut_short


async def test_a_fragment_is_worth_more_than_junk_whichever_came_first() -> None:
    junk = " ".join(["The user asked about the proxy."] * 12)
    for answers in ([junk, "The user"], ["The user", junk]):
        provider = ScriptedProvider(
            streams=[[assistant_message(text)] for text in answers], stops=["length", "length"]
        )
        local, _, _ = compaction(provider, history(10))
        result = await local.summarise()
        assert result.summary == "The user" and result.cut_short and result.junk is None


async def test_with_no_window_an_overflow_drops_the_oldest_item_and_its_partner() -> None:
    call: Item = {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{}"}
    output: Item = {"type": "function_call_output", "call_id": "c1", "output": "a b"}
    items = [call, output, *history(10, 10)]
    budget = CompactionBudget(None, None, None, 0, 200, 400)
    provider = ScriptedProvider(streams=[overflow(), overflow(), [assistant_message(GOOD)]])
    local, trims, _ = compaction(provider, items, budget=budget)
    result = await local.summarise()
    assert sent(provider, 1) == items[2:] and sent(provider, 2) == items[3:]
    assert result.trimmed == 3 and trims == [2, 3]


async def test_with_no_window_the_last_item_overflowing_is_too_large() -> None:
    budget = CompactionBudget(None, None, None, 0, 200, 400)
    provider = ScriptedProvider(streams=[overflow(), overflow()])
    local, _, _ = compaction(provider, history(10, 10), budget=budget)
    with pytest.raises(ContextTooLarge, match="larger than the model's window"):
        await local.summarise()
    assert len(provider.requests) == 2


async def test_an_error_other_than_an_overflow_is_raised_as_it_came() -> None:
    error = ProviderError("server", "HTTP 500")
    local, _, _ = compaction(ScriptedProvider(streams=[error]), history(10))
    with pytest.raises(ProviderError) as raised:
        await local.summarise()
    assert raised.value is error


async def test_a_retried_error_is_retried_and_announced() -> None:
    notices: list[int] = []
    provider = ScriptedProvider(
        streams=[ProviderError("server", "HTTP 500", status=500), [assistant_message(GOOD)]]
    )
    local, _, _ = compaction(
        provider,
        history(10),
        max_retries=1,
        on_retry=lambda attempt, most, error: notices.append(attempt),
    )
    assert (await local.summarise()).summary == GOOD and notices == [1]


async def test_an_overflow_refits_into_three_quarters_of_the_room() -> None:
    items = history(*[100] * 16)  # fits the first room (1 667), not three quarters of it
    provider = ScriptedProvider(streams=[overflow(), [assistant_message(GOOD)]])
    local, trims, _ = compaction(provider, items)
    result = await local.summarise()
    room = int(FIRST_ROOM * 0.75) - PROMPT_COST  # 1 247: four of the oldest go
    assert sent(provider, 0) == items and sent(provider, 1) == items[4:]
    assert sum(map(Words().count_item, sent(provider, 1))) <= room
    assert result.trimmed == 4 and trims == [4]


async def test_an_overflow_that_fits_by_coco_s_count_drops_the_oldest_item() -> None:
    items = history(*[10] * 6)
    provider = ScriptedProvider(streams=[overflow(), [assistant_message(GOOD)]])
    local, trims, _ = compaction(provider, items)
    result = await local.summarise()
    assert sent(provider, 1) == items[1:] and result.trimmed == 1 and trims == [1]


async def test_a_single_item_the_server_refuses_after_fitting_is_too_large() -> None:
    provider = ScriptedProvider(streams=[overflow()])
    local, _, _ = compaction(provider, history(10))
    with pytest.raises(ContextTooLarge, match="larger than the model's window"):
        await local.summarise()

    provider = ScriptedProvider(streams=[overflow(), [assistant_message(GOOD)]])
    local, _, _ = compaction(provider, history(10, 10))  # one can go: the newest is sent
    assert (await local.summarise()).trimmed == 1 and sent(provider, 1) == history(10, 10)[1:]


async def test_an_overflow_is_refitted_four_times_then_it_is_too_large() -> None:
    answers: list[Any] = [overflow()] * MAX_REFITS
    provider = ScriptedProvider(streams=[*answers, [assistant_message(GOOD)]])
    local, trims, _ = compaction(provider, history(*[10] * 20))
    result = await local.summarise()
    assert len(provider.requests) == MAX_REFITS + 1 and result.summary == GOOD
    assert result.trimmed == MAX_REFITS and trims == [1, 2, 3, 4]

    provider = ScriptedProvider(streams=[overflow()] * (MAX_REFITS + 1))
    local, _, _ = compaction(provider, history(*[10] * 20))
    with pytest.raises(ContextTooLarge, match="larger than the model's window"):
        await local.summarise()
    assert len(provider.requests) == MAX_REFITS + 1


async def test_a_refit_reports_what_it_dropped_and_shortened_since_the_start() -> None:
    # 1 600 fits at first; the refit into 1 247 drops four, a second into 932 drops three more.
    items = history(*[100] * 16)
    provider = ScriptedProvider(streams=[overflow(), overflow(), [assistant_message(GOOD)]])
    local, trims, _ = compaction(provider, items)
    result = await local.summarise()
    assert sent(provider, 2) == items[7:] and trims == [4, 7] and result.trimmed == 7

    provider = ScriptedProvider(streams=[overflow(), overflow(), [assistant_message(GOOD)]])
    # One message of one-letter words (dense: each refit must cut it again), shortened twice.
    local, trims, _ = compaction(provider, [user_message("a " * 1_600)])
    result = await local.summarise()
    assert (result.trimmed, result.truncated) == (0, 2) and trims == [1, 2]


def test_drop_oldest_takes_a_call_with_its_output() -> None:
    call: Item = {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{}"}
    output: Item = {"type": "function_call_output", "call_id": "c1", "output": "a"}
    items = [call, output, *history(1)]
    assert drop_oldest(items) == 2 and items == history(1)
    assert drop_oldest(items) == 1 and items == []
