"""The remote path: the compaction trigger first, then /responses/compact; an unsupported form
is remembered and skipped; an unreachable server ends it at once; the new history keeps the
context before the last user message and the compaction item last."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.core.compaction.budget import CompactionBudget, compaction_budget
from app.core.compaction.fit import fit_items
from app.core.compaction.notes.block import is_notes_message
from app.core.compaction.paths.path import notes_items
from app.core.compaction.paths.remote_path import (
    REMOTE_FORMS,
    insert_before_compaction,
    insert_before_last_user,
    remote_forms,
    run_remote,
)
from app.core.compaction.rebuild import assemble, filter_remote_output, select_with_notes
from app.core.items import Item, assistant_message, is_compaction_item, message_text, user_message
from app.core.providers.base import CompactResult, ProviderError

from ..compaction_fakes import (
    COMPACTION_ITEM,
    USAGE,
    Recorder,
    ScriptedProvider,
    make_run,
    reading_notes,
)

BUDGET = compaction_budget(16_000, 14_400, 500)
CONTEXT = [user_message("<environment_context>cwd /srv</environment_context>")]


def conversation() -> list[Item]:
    return [
        user_message("The API key lives in vault path secret/billing/api."),
        assistant_message("Noted."),
        user_message("Now deploy it."),
        assistant_message("Deployed."),
    ]


async def test_the_trigger_form_keeps_user_messages_and_puts_the_item_last(
    tmp_path: Path,
) -> None:
    provider = ScriptedProvider(streams=[[COMPACTION_ITEM]])
    recorder = Recorder()
    run = make_run(tmp_path, provider, recorder)
    result = await run_remote(run, conversation(), BUDGET, CONTEXT)
    assert result.remote_form == "trigger" and result.usage == USAGE
    assert result.items[-1] == COMPACTION_ITEM and result.kept == 2
    assert result.items.index(CONTEXT[0]) == result.items.index(conversation()[2]) - 1
    assert provider.requests[0].input[-1] == {"type": "compaction_trigger"}
    assert recorder.stages() == ["remote"]


async def test_an_unsupported_trigger_is_remembered_and_the_endpoint_is_tried(
    tmp_path: Path,
) -> None:
    output = [user_message("Now deploy it."), COMPACTION_ITEM]
    provider = ScriptedProvider(
        streams=[ProviderError("not_found", "404 page not found", status=404)],
        compacts=[CompactResult(output=output, usage=USAGE)],
    )
    recorder = Recorder()
    run = make_run(tmp_path, provider, recorder)
    result = await run_remote(run, conversation(), BUDGET, CONTEXT)
    assert result.remote_form == "standalone" and run.remote_form == "standalone"
    assert recorder.said == [
        ("Remote compaction with the compaction trigger failed (404 page not found); trying "
        "/responses/compact.")
    ]
    config = run.config()
    assert run.capabilities.unsupported(config.base_url, config.model) == {"trigger"}
    assert remote_forms(config, run.capabilities) == ["standalone"]
    # The message the server no longer holds left the view: its notes go before the item.
    assert is_notes_message(result.items[-2]) and is_compaction_item(result.items[-1])
    assert CONTEXT[0] in result.items


async def test_an_unreachable_server_is_not_asked_again(tmp_path: Path) -> None:
    provider = ScriptedProvider(streams=[ProviderError("connection", "connection refused")])
    run = make_run(tmp_path, provider, Recorder())
    with pytest.raises(ProviderError, match="connection refused"):
        await run_remote(run, conversation(), BUDGET, CONTEXT)
    assert provider.compact_requests == []  # the other form is on the same server


async def test_no_form_left_is_said_as_not_found(tmp_path: Path) -> None:
    run = make_run(tmp_path, ScriptedProvider(), Recorder())
    config = run.config()
    for form in REMOTE_FORMS:
        run.capabilities.mark_unsupported(config.base_url, config.model, form)
    with pytest.raises(ProviderError) as raised:
        await run_remote(run, conversation(), BUDGET, CONTEXT)
    assert raised.value.category == "not_found"
    assert raised.value.message == "the server offers no remote compaction"


async def test_when_every_form_fails_the_last_failure_is_raised_and_one_handover_said(
    tmp_path: Path,
) -> None:
    # The trigger refused as an item the server does not know: remembered as not offered.
    unknown = ProviderError("bad_request", "Unknown item type: compaction_trigger", status=400)
    last = ProviderError("server", "HTTP 500: it broke", status=500)
    provider = ScriptedProvider(streams=[unknown], compacts=[last])
    recorder = Recorder()
    run = make_run(tmp_path, provider, recorder)
    with pytest.raises(ProviderError) as raised:
        await run_remote(run, conversation(), BUDGET, CONTEXT)
    assert raised.value is last
    assert recorder.said == [
        (
            "Remote compaction with the compaction trigger failed (Unknown item type: "
            "compaction_trigger); trying /responses/compact."
        )
    ]
    assert recorder.said_in == ["turn_1"]
    config = run.config()
    assert run.capabilities.unsupported(config.base_url, config.model) == {"trigger"}


def test_insertions_go_before_the_last_user_message_and_the_compaction_item() -> None:
    u1, u2, a = user_message("one"), user_message("two"), assistant_message("a")
    assert insert_before_last_user([u1, a, u2, a], CONTEXT) == [u1, a, *CONTEXT, u2, a]
    assert insert_before_last_user([a], CONTEXT) == [*CONTEXT, a]
    assert insert_before_last_user([u1, a, u2], CONTEXT) == [u1, a, *CONTEXT, u2]  # last
    assert insert_before_last_user([a, u1, a], CONTEXT) == [a, *CONTEXT, u1, a]  # second
    notes = [user_message("notes")]
    assert insert_before_compaction([u1, COMPACTION_ITEM, u2], notes) == [
        u1, *notes, COMPACTION_ITEM, u2,
    ]
    assert insert_before_compaction([u1], notes) == [u1, *notes]
    assert insert_before_compaction([u1], []) == [u1]


# --- what each form sends and gives back ----------------------------------------------------------


def _only(run: Any, form: str) -> None:
    """Only ``form`` is offered by the run's server (the other marked unsupported)."""
    config = run.config()
    for other in REMOTE_FORMS:
        if other != form:
            run.capabilities.mark_unsupported(config.base_url, config.model, other)


@pytest.mark.parametrize("carry", [True, False])
async def test_the_standalone_form_sends_the_sessions_settings_and_counts_what_is_kept(
    tmp_path: Path, carry: bool
) -> None:
    output = [user_message("Now deploy it."), COMPACTION_ITEM]
    provider = ScriptedProvider(compacts=[CompactResult(output=output, usage=USAGE)])
    run = make_run(tmp_path, provider, Recorder(), model="gpt-5", reasoning_effort="low",
                   instructions="Be brief.", demo_hints=True, carry_notes=carry)
    _only(run, "standalone")
    result = await run_remote(run, conversation(), BUDGET, CONTEXT)
    sent = provider.compact_requests[0]
    assert (sent.model, sent.instructions, sent.prompt_cache_key, sent.reasoning_effort) == (
        "gpt-5", "Be brief.", "session_1", "low"
    )
    assert provider.headers == [run.headers()] and run.headers()
    assert (result.strategy, result.usage, result.remote_form) == ("remote", USAGE, "standalone")
    # The first message's facts left with it: carried, in a notes message before the item.
    assert (result.carried is not None and bool(result.carried.notes)) is carry
    # "Now deploy it.": neither the context's user message nor the notes message counts.
    assert result.kept == 1
    assert result.shrunk is None


async def test_the_standalone_output_is_fitted_to_the_room_its_compaction_and_context_kept(
    tmp_path: Path,
) -> None:
    small = compaction_budget(4_000, 3_600, 300)
    long_user = user_message("deploy the service now please " * 400)
    output = [long_user, assistant_message("ok " * 300), COMPACTION_ITEM]
    provider = ScriptedProvider(compacts=[CompactResult(output=output, usage=USAGE)])
    run = make_run(tmp_path, provider, Recorder())
    _only(run, "standalone")
    result = await run_remote(run, conversation(), small, CONTEXT)
    assert result.shrunk is not None and set(result.shrunk) == {
        "dropped_messages", "truncated_messages"
    }
    assert result.shrunk["dropped_messages"] + result.shrunk["truncated_messages"] > 0
    assert COMPACTION_ITEM in result.items and CONTEXT[0] in result.items
    assert provider.compact_requests[0].input[-1] == conversation()[-1]


async def test_the_standalone_request_is_trimmed_to_the_window(tmp_path: Path) -> None:
    from app.core.items import function_call, function_call_output

    history = [*conversation(), function_call("read_file", "{}", "c1"),
               function_call_output("c1", "the file " * 20_000)]
    provider = ScriptedProvider(compacts=[CompactResult(output=[COMPACTION_ITEM], usage=USAGE)])
    run = make_run(tmp_path, provider, Recorder())
    _only(run, "standalone")
    await run_remote(run, history, BUDGET, CONTEXT)
    assert provider.compact_requests[0].input[-1]["type"] == "function_call"  # output trimmed


@pytest.mark.parametrize("form", ["trigger", "standalone"])
async def test_a_retry_is_shown_as_its_stage(tmp_path: Path, form: str) -> None:
    busy = ProviderError("server", "busy")
    provider = ScriptedProvider(
        streams=[busy, [COMPACTION_ITEM]],
        compacts=[busy, CompactResult(output=[COMPACTION_ITEM], usage=USAGE)],
    )
    recorder = Recorder()
    run = make_run(tmp_path, provider, recorder, max_retries=1)
    _only(run, form)
    result = await run_remote(run, conversation(), BUDGET, CONTEXT)
    assert result.remote_form == form
    retries = [e for e in recorder.events if getattr(e, "stage", None) == "retrying"]
    assert [e.message for e in retries] == ["Retrying remote compaction (1/1)…"]


@pytest.mark.parametrize("carry", [True, False])
async def test_the_trigger_forms_history_carries_the_notes_of_what_it_left_out(
    tmp_path: Path, carry: bool
) -> None:
    small = compaction_budget(4_000, 3_600, 300)
    history = [*[user_message(f"Remember: port {8000 + n} serves api {n}. " + "x " * 400)
                 for n in range(6)], assistant_message("Noted.")]
    provider = ScriptedProvider(streams=[[COMPACTION_ITEM]])
    run = make_run(tmp_path, provider, Recorder(), carry_notes=carry, demo_hints=True)
    result = await run_remote(run, history, small, CONTEXT)
    notes = [item for item in result.items if is_notes_message(item)]
    assert (len(notes) == 1) is carry and (result.carried is not None) is carry
    assert result.kept < 6 and result.kept_truncated  # the oldest kept one is shortened
    assert (result.strategy, result.usage, result.items[-1]) == ("remote", USAGE, COMPACTION_ITEM)
    assert provider.headers == [run.headers()]


async def test_the_trigger_forms_kept_messages_get_what_the_item_and_the_context_leave(
    tmp_path: Path,
) -> None:
    # A 700-token compaction item: the kept messages' budget is the room less the item and
    # the context block, under its ceiling, so both figures decide what is kept.
    small = compaction_budget(4_000, 3_600, 300)
    item = {"type": "compaction", "encrypted_content": "opaque" * 466}
    history = [user_message(f"Step {n}: " + "move the files along " * 80) for n in range(4)]
    provider = ScriptedProvider(streams=[[item]])
    run, reads = reading_notes(make_run(tmp_path, provider, Recorder(), context=CONTEXT))
    result = await run_remote(run, history, small, CONTEXT)
    counts = run.counts
    context_tokens = sum(counts.count_item(i) for i in CONTEXT)
    budget = small.kept_budget(counts.count_item(item), context_tokens)
    assert budget < small.kept_ceiling
    kept, truncated, carried, _ = select_with_notes(
        history, budget, small.notes_budget(), counts.count
    )
    assert result.items == assemble(kept, item, CONTEXT, notes_items(carried))
    assert result.kept_truncated and truncated
    assert reads and reads[0] == history  # the notes were read by the session's reader


async def test_the_standalone_output_over_its_room_keeps_its_notes_shortened_by_the_session_s_count(
    tmp_path: Path,
) -> None:
    # A room (120) smaller than the context, the notes and the item together: the messages
    # go, then the notes (protected: never dropped) are shortened, counted as the session
    # counts; the fitted history is what ``fit_items`` gives with those counts.
    tight = CompactionBudget(4_000, 3_600, target=120, overhead=0, summary=96, kept_ceiling=64)
    output = [
        user_message("deploy the service now please " * 400),
        assistant_message("ok " * 300),
        COMPACTION_ITEM,
    ]
    history = [
        user_message(
            "Remember: the API key lives in vault path secret/billing/api and port 8443 serves "
            "it. Always use /srv/app/config.yaml. " * 3
        ),
        assistant_message("Noted."),
        user_message("deploy the service now please " * 400),
    ]
    provider = ScriptedProvider(compacts=[CompactResult(output=output, usage=USAGE)])
    run = make_run(tmp_path, provider, Recorder())
    _only(run, "standalone")
    result = await run_remote(run, history, tight, CONTEXT)
    assert result.carried is not None and not result.carried.empty
    before = insert_before_compaction(
        insert_before_last_user(filter_remote_output(output), CONTEXT), [result.carried.item()]
    )
    counts = run.counts
    fitted = fit_items(
        before,
        [counts.count_item(i) for i in before],
        120,
        protect=lambda i: is_compaction_item(i) or is_notes_message(i) or i in CONTEXT,
        count=counts.count,
        count_item=counts.count_item,
    )
    assert result.items == fitted.items
    assert [is_notes_message(i) for i in result.items].count(True) == 1
    assert result.shrunk == {"dropped_messages": 2, "truncated_messages": fitted.truncated}
    assert fitted.truncated >= 1 and result.kept == 0


async def test_the_standalone_form_carries_the_notes_of_what_left_only(tmp_path: Path) -> None:
    stays = user_message("Remember: port 8443 serves the billing api.")
    leaves = user_message("Remember: the API key lives in vault path secret/billing/api.")
    output = [stays, COMPACTION_ITEM]
    provider = ScriptedProvider(compacts=[CompactResult(output=output, usage=USAGE)])
    run = make_run(tmp_path, provider, Recorder())
    _only(run, "standalone")
    history = [leaves, assistant_message("Noted."), stays, assistant_message("Noted.")]
    result = await run_remote(run, history, BUDGET, CONTEXT)
    assert result.carried is not None
    notes = message_text(result.carried.item())
    assert "secret/billing/api" in notes and "8443" not in notes
