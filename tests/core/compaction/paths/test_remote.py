"""The remote compaction requests (``compaction.paths.remote``): the trigger form sent as a turn's
request with the trigger last, the standalone form's trimmed tail, their retries, and which
failures say a server does not offer a form."""

from __future__ import annotations

from typing import Any

import pytest

from app.core.compaction.paths.remote import (
    COMPACTION_TRIGGER,
    NO_COMPACTION_ITEM,
    compact_remotely,
    compact_with_trigger,
    is_unsupported,
)
from app.core.items import (
    Item,
    assistant_message,
    developer_message,
    function_call,
    function_call_output,
    user_message,
)
from app.core.providers.base import CompactResult, ModelRequest, ProviderError
from app.core.tokens.counter import approx_tokens
from tests.core.compaction.compaction_fakes import COMPACTION_ITEM, USAGE, ScriptedProvider

HEADERS = {"X-Session": "s1"}


def _retries() -> tuple[list[int], Any]:
    told: list[int] = []
    return told, lambda failures, most, error: told.append(failures)


# --- which failures say a form is not offered -----------------------------------------------------


@pytest.mark.parametrize(
    ("category", "message", "code", "form", "unsupported"),
    [
        ("not_found", "no such route", None, "standalone", True),
        ("not_found", "no such route", None, "trigger", True),
        ("bad_request", "unknown item type compaction_trigger", None, "standalone", False),
        ("bad_request", "Unknown item COMPACTION_TRIGGER", None, "trigger", True),
        ("bad_request", "Cannot determine type of 'item'", None, "trigger", True),
        ("bad_request", "input is too long", None, "trigger", False),
        ("server_error", "bad compaction_trigger type", None, "trigger", False),
        ("malformed", "no compaction item", NO_COMPACTION_ITEM, "trigger", True),
        ("malformed", "no compaction item", NO_COMPACTION_ITEM, "standalone", False),
        ("malformed", "two compaction items", None, "trigger", False),
    ],
)
def test_what_says_a_form_is_not_offered(
    category: Any, message: str, code: str | None, form: str, unsupported: bool
) -> None:
    assert is_unsupported(ProviderError(category, message, code=code), form) is unsupported


# --- the trigger form -----------------------------------------------------------------------------


def _turn_request() -> ModelRequest:
    return ModelRequest(
        model="gpt-5", instructions="Be brief.", input=[user_message("q1")],
        tools=[{"type": "function", "name": "read_file"}], prompt_cache_key="s1",
        reasoning_effort="low", include_encrypted_reasoning=True,
    )


async def test_the_trigger_goes_last_in_a_turns_request() -> None:
    provider = ScriptedProvider(streams=[[assistant_message("noise"), COMPACTION_ITEM]])
    told, on_retry = _retries()
    request = _turn_request()
    item, usage = await compact_with_trigger(
        provider, request, max_retries=2, base_delay=0, on_retry=on_retry,
        extra_headers=HEADERS,
    )
    assert (item, usage) == (COMPACTION_ITEM, USAGE)
    sent = provider.requests[0]
    assert sent.input == [user_message("q1"), COMPACTION_TRIGGER]
    assert (sent.model, sent.instructions, sent.tools, sent.prompt_cache_key) == (
        "gpt-5", "Be brief.", request.tools, "s1"
    )
    assert (sent.reasoning_effort, sent.include_encrypted_reasoning) == ("low", True)
    assert provider.headers == [HEADERS] and told == []


@pytest.mark.parametrize(("count", "code"), [(0, NO_COMPACTION_ITEM), (2, None)])
async def test_an_answer_without_exactly_one_compaction_item_is_malformed(
    count: int, code: str | None
) -> None:
    provider = ScriptedProvider(streams=[[assistant_message("text"), *[COMPACTION_ITEM] * count]])
    with pytest.raises(ProviderError) as raised:
        await compact_with_trigger(
            provider, _turn_request(), max_retries=0, base_delay=0,
            on_retry=_retries()[1], extra_headers=None,
        )
    assert (raised.value.category, raised.value.code) == ("malformed", code)
    assert raised.value.message == (
        f"the server answered the compaction trigger with {count} compaction items instead of one"
    )


async def test_the_trigger_is_retried_as_a_turn_is() -> None:
    provider = ScriptedProvider(streams=[ProviderError("server", "busy"), [COMPACTION_ITEM]])
    told, on_retry = _retries()
    item, _usage = await compact_with_trigger(
        provider, _turn_request(), max_retries=1, base_delay=0, on_retry=on_retry,
        extra_headers=None,
    )
    assert item == COMPACTION_ITEM and told == [1] and len(provider.requests) == 2


# --- the standalone form --------------------------------------------------------------------------


def _cost(item: Item) -> int:
    from app.core.items import item_text_for_count

    return approx_tokens(item_text_for_count(item))


async def _standalone(
    provider: ScriptedProvider, history: list[Item], window: int | None, **kwargs: Any
) -> tuple[list[Item], Any]:
    return await compact_remotely(
        provider, model="gpt-5", instructions="Be brief.", history=history,
        tools=[{"type": "function", "name": "read_file"}], prompt_cache_key="s1",
        reasoning_effort="high", context_window=window, max_retries=kwargs.get("retries", 0),
        base_delay=0, on_retry=kwargs.get("on_retry", _retries()[1]),
        extra_headers=kwargs.get("headers"),
    )


HISTORY: list[Item] = [
    user_message("a question " * 20),
    function_call("read_file", "{}", "c1"),
    assistant_message("an answer " * 20),
    function_call_output("c1", "the file " * 200),
    developer_message("a note " * 50),
]


def _whole() -> int:
    return approx_tokens("Be brief.") + sum(_cost(item) for item in HISTORY)


@pytest.mark.parametrize(
    ("window", "kept"),
    [
        (None, 5),  # no window known: nothing trimmed
        (10**6, 5),
        ("whole", 5),  # exactly the window: nothing trimmed
        ("whole-1", 4),  # the developer message goes
        ("whole-note-1", 3),  # still over without it: the tool output goes too
        ("tiny", 3),  # the tool output too; the answer is not trimmable, so it stops there
    ],
)
async def test_a_trailing_tool_output_or_note_is_trimmed_while_over_the_window(
    window: Any, kept: int
) -> None:
    limit = {
        "whole": _whole(), "whole-1": _whole() - 1, "whole-note-1": _whole() - _cost(HISTORY[4]) - 1,
        "tiny": 1,
    }.get(window, window)
    provider = ScriptedProvider(compacts=[CompactResult([COMPACTION_ITEM], USAGE)])
    output, usage = await _standalone(provider, HISTORY, limit, headers=HEADERS)
    assert (output, usage) == ([COMPACTION_ITEM], USAGE)
    sent = provider.compact_requests[0]
    assert len(sent.input) == kept and sent.input == HISTORY[:kept]
    assert (sent.model, sent.instructions, sent.prompt_cache_key, sent.reasoning_effort) == (
        "gpt-5", "Be brief.", "s1", "high"
    )
    assert sent.tools == [{"type": "function", "name": "read_file"}]
    assert provider.headers == [HEADERS]


async def test_a_compaction_summary_item_counts_as_the_compaction() -> None:
    summary = {"type": "compaction_summary", "encrypted_content": "x"}
    provider = ScriptedProvider(compacts=[CompactResult([assistant_message("m"), summary], None)])
    assert await _standalone(provider, HISTORY, None) == ([assistant_message("m"), summary], None)


async def test_an_answer_with_no_compaction_item_is_malformed() -> None:
    provider = ScriptedProvider(compacts=[CompactResult([assistant_message("m")], USAGE)])
    with pytest.raises(ProviderError) as raised:
        await _standalone(provider, HISTORY, None)
    assert (raised.value.category, raised.value.message) == (
        "malformed", "the compact endpoint returned no compaction item"
    )


async def test_the_standalone_form_is_retried_then_gives_up() -> None:
    told, on_retry = _retries()
    busy = [ProviderError("server", "busy") for _ in range(3)]
    provider = ScriptedProvider(compacts=[*busy[:2], CompactResult([COMPACTION_ITEM], USAGE)])
    assert (await _standalone(provider, HISTORY, None, retries=2, on_retry=on_retry))[0] == [
        COMPACTION_ITEM
    ]
    assert told == [1, 2]
    provider = ScriptedProvider(compacts=list(busy))
    with pytest.raises(ProviderError, match="busy"):
        await _standalone(provider, HISTORY, None, retries=2)
    assert len(provider.compact_requests) == 3


async def test_a_stalled_compaction_is_not_waited_out_again() -> None:
    told, on_retry = _retries()
    stall = ProviderError("connection", "no answer", code="timeout")  # retryable, a stall
    provider = ScriptedProvider(compacts=[stall, CompactResult([COMPACTION_ITEM], USAGE)])
    with pytest.raises(ProviderError, match="no answer"):
        await _standalone(provider, HISTORY, None, retries=3, on_retry=on_retry)
    assert told == [] and len(provider.compact_requests) == 1
