"""The local path: the model summarises a copy of the history without tools, the new history
ends with the summary, and a cut-short summary keeps the earlier one beside it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.core import protocol as p
from app.core.compaction.budget import compaction_budget
from app.core.compaction.paths.local import COMPACTION_HEADERS
from app.core.compaction.paths.local_path import previous_summary, prompt_words, run_local
from app.core.compaction.paths.path import PathRun
from app.core.compaction.prompts import build_prompt, is_summary_message, summary_text
from app.core.compaction.rebuild import build_compacted_history
from app.core.items import Item, assistant_message, message_text, user_message
from app.core.providers.base import ProviderError
from app.core.providers.sampling import RetryNotice

from ..compaction_fakes import (
    USAGE,
    Recorder,
    ScriptedProvider,
    item_counts,
    make_run,
    reading_notes,
)

BUDGET = compaction_budget(16_000, 14_400, 500)


def conversation() -> list[Item]:
    history: list[Item] = []
    for n in range(6):
        history.append(user_message(f"Question {n}: how do I configure service svc-{n}?"))
        history.append(assistant_message(f"Answer {n}: " + "details " * 40))
    return history


async def test_the_summary_comes_last_in_the_rebuilt_history(tmp_path: Path) -> None:
    provider = ScriptedProvider(streams=[[assistant_message("The user configures services.")]])
    recorder = Recorder()
    run = make_run(tmp_path, provider, recorder)
    history = conversation()
    result = await run_local(run, history, item_counts(run, history), BUDGET, [], None, None)
    assert result.strategy == "local" and result.usage == USAGE
    assert result.summary == "The user configures services."
    assert message_text(result.items[-1]) == summary_text("The user configures services.")
    assert result.kept == 6 and not result.cut_short
    assert result.kept_previous_summary is False  # the event says false, not null
    assert recorder.stages() == ["local"]
    (progress,) = recorder.events
    assert progress == p.CompactionProgress(
        turn_id="turn_1", stage="local", message="Summarising locally…"
    )
    (request,) = provider.requests
    assert request.tools == [] and request.input[: len(history)] == history  # a copy, no tools
    assert not is_summary_message(request.input[-1])  # the prompt, asked last


async def test_a_cut_short_summary_keeps_the_earlier_one(tmp_path: Path) -> None:
    # Empty answers are fragments: retried once with more room, then the earlier one stays.
    provider = ScriptedProvider(streams=[[], []])
    run = make_run(tmp_path, provider, Recorder())
    history = [user_message(summary_text("Earlier: the user runs svc-1.")), *conversation()]
    result = await run_local(run, history, item_counts(run, history), BUDGET, [], None, None)
    assert result.cut_short and result.kept_previous_summary
    assert result.summary == "Earlier: the user runs svc-1."
    assert len(provider.requests) == 2


async def test_the_focus_and_the_word_budget_go_into_the_prompt(tmp_path: Path) -> None:
    provider = ScriptedProvider(streams=[[assistant_message("Focused.")]])
    run = make_run(tmp_path, provider, Recorder())
    history = conversation()
    await run_local(run, history, item_counts(run, history), BUDGET, [], "the database", None)
    prompt = message_text(provider.requests[0].input[-1])
    assert "the database" in prompt


def test_prompt_words_and_previous_summary() -> None:
    assert prompt_words(None) is None
    assert prompt_words(10) == 40 and prompt_words(1_000) == 700
    history = [
        user_message(summary_text("first")),
        user_message("hi"),
        user_message(summary_text("second")),
    ]
    assert previous_summary(history) == "second"
    assert previous_summary([user_message("no summary")]) is None


LOOP = "I'm a model. " * 60


async def test_a_junk_summary_is_retried_once_told_why_then_the_earlier_one_stays(
    tmp_path: Path,
) -> None:
    provider = ScriptedProvider(streams=[[assistant_message(LOOP)], [assistant_message(LOOP)]])
    run = make_run(tmp_path, provider, Recorder())
    history = [user_message(summary_text("Earlier: the user runs svc-1.")), *conversation()]
    result = await run_local(run, history, item_counts(run, history), BUDGET, [], None, None)
    assert result.summary_unusable == "repetition" and result.kept_previous_summary
    assert result.summary == "Earlier: the user runs svc-1."
    assert message_text(result.items[-1]) == summary_text("Earlier: the user runs svc-1.")
    assert not result.cut_short
    first, second = (message_text(r.input[-1]) for r in provider.requests)
    assert second.startswith(first) and "not a summary" in second[len(first) :]


async def test_a_junk_summary_with_no_earlier_one_installs_none(tmp_path: Path) -> None:
    echo = summary_text("") + " " + summary_text("")  # Coco's own wrapper given back
    provider = ScriptedProvider(streams=[[assistant_message(echo)], [assistant_message(LOOP)]])
    run = make_run(tmp_path, provider, Recorder())
    history = conversation()
    result = await run_local(run, history, item_counts(run, history), BUDGET, [], None, None)
    assert result.summary_unusable == "repetition" and not result.kept_previous_summary
    assert result.summary == ""
    assert not any(is_summary_message(item) for item in result.items)
    assert result.kept == 6  # the kept messages carry the conversation


async def test_a_junk_summary_good_on_the_retry_is_installed_without_its_wrapper(
    tmp_path: Path,
) -> None:
    good = "The user configures services svc-0 to svc-5; next, svc-6."
    provider = ScriptedProvider(
        streams=[[assistant_message(LOOP)], [assistant_message(summary_text(good))]]
    )
    run = make_run(tmp_path, provider, Recorder())
    history = conversation()
    result = await run_local(run, history, item_counts(run, history), BUDGET, [], None, None)
    assert result.summary_unusable is None and result.summary == good
    assert message_text(result.items[-1]) == summary_text(good)


# A small window: 1 600 tokens of history room, a 533-token summary budget, 480 for notes.
SMALL = compaction_budget(4_000, 3_600, 200)
SUMMARY = "The user configures six services. " + " ".join(f"fact{i}" for i in range(250))


def long_conversation() -> list[Item]:
    """Six long user messages, each with a rule, a file and a command for the notes."""
    history: list[Item] = []
    for n in range(6):
        history.append(
            user_message(
                f"Always keep service svc-{n} on port 84{n}3; the config is /etc/svc{n}/main.conf "
                f"and I run `systemctl restart svc{n}`. " + f"detail{n} " * 300
            )
        )
        history.append(assistant_message("Done. " + "ok " * 50))
    return history


CONTEXT = [user_message("<environment_context>" + " cwd" * 400 + "</environment_context>")]


async def test_the_rebuilt_history_is_sized_by_the_summary_the_context_and_the_notes(
    tmp_path: Path,
) -> None:
    # The kept messages get what the summary and the context blocks leave; the carried notes
    # then push the whole past the room, so it is shrunk, and the result says what went.
    provider = ScriptedProvider(streams=[[assistant_message(SUMMARY)]])
    run, reads = reading_notes(make_run(tmp_path, provider, Recorder(), context=CONTEXT))
    history = long_conversation()
    result = await run_local(run, history, item_counts(run, history), SMALL, CONTEXT, None, None)
    count = run.counts.count
    context_tokens = sum(run.counts.count_item(item) for item in CONTEXT)
    rebuilt = build_compacted_history(
        history,
        SUMMARY,
        initial_context=CONTEXT,
        budget=SMALL.kept_budget(count(summary_text(SUMMARY)), context_tokens),
        room=SMALL.history_room,
        count=count,
        notes_budget=SMALL.notes_budget(),
    )
    assert result.items == rebuilt.items and CONTEXT[0] in result.items
    assert reads and reads[0] == history  # the notes were read by the session's reader
    assert result.kept == rebuilt.kept_user_messages
    assert result.kept_truncated and rebuilt.kept_truncated
    shrunk = rebuilt.shrunk
    assert shrunk.any
    assert result.shrunk == {
        "dropped_messages": shrunk.dropped_messages,
        "truncated_messages": shrunk.truncated_messages,
        "summary_truncated": shrunk.summary_truncated,
    }
    assert result.carried == rebuilt.carried and not rebuilt.carried.empty


async def test_with_the_notes_off_none_are_carried_and_nothing_needs_shrinking(
    tmp_path: Path,
) -> None:
    provider = ScriptedProvider(streams=[[assistant_message("Six services configured.")]])
    run = make_run(tmp_path, provider, Recorder(), carry_notes=False)
    history = long_conversation()
    result = await run_local(run, history, item_counts(run, history), SMALL, [], None, None)
    assert result.carried is None and result.shrunk is None and result.kept_truncated


async def test_the_request_leaves_out_what_does_not_fit_and_says_so(tmp_path: Path) -> None:
    provider = ScriptedProvider(streams=[[assistant_message(SUMMARY)]])
    recorder = Recorder()
    run = make_run(tmp_path, provider, recorder)
    history = long_conversation()
    result = await run_local(run, history, item_counts(run, history), SMALL, [], None, None)
    sent = provider.requests[0].input[:-1]
    left_out = len(history) - len(sent)
    assert left_out > 1 and sent == history[left_out:] and result.trimmed == left_out
    assert recorder.events[1] == p.CompactionProgress(
        turn_id="turn_1",
        stage="trimming",
        message=f"Making room for the summary (left out {left_out} older items)…",
        trimmed=left_out,
    )


async def test_a_message_shortened_for_the_request_counts_as_one_left_out(tmp_path: Path) -> None:
    provider = ScriptedProvider(streams=[[assistant_message(SUMMARY)]])
    recorder = Recorder()
    run = make_run(tmp_path, provider, recorder)
    history = [user_message("word " * 5_000)]  # over the request's room alone: shortened
    result = await run_local(run, history, item_counts(run, history), SMALL, [], None, None)
    assert result.trimmed == 1
    assert recorder.events[1] == p.CompactionProgress(
        turn_id="turn_1",
        stage="trimming",
        message="Making room for the summary (left out 1 older item)…",
        trimmed=1,
    )


@pytest.mark.parametrize(
    ("asked", "compaction_model", "sent"),
    [("asked", "summariser", "asked"), (None, "summariser", "summariser"), (None, None, "main")],
)
async def test_the_summary_is_asked_of_the_given_model_else_the_setting_else_the_session_s(
    tmp_path: Path, asked: str | None, compaction_model: str | None, sent: str
) -> None:
    provider = ScriptedProvider(streams=[[assistant_message("Summary.")]])
    run = make_run(tmp_path, provider, Recorder(), model="main", compaction_model=compaction_model)
    history = conversation()
    await run_local(run, history, item_counts(run, history), BUDGET, [], None, asked)
    assert provider.requests[0].model == sent


async def test_the_request_follows_the_settings(tmp_path: Path) -> None:
    # Its own prompt and style, the session's cache key, a reasoning model's doubled limit and
    # the demo model's header.
    provider = ScriptedProvider(streams=[[assistant_message("Summary.")]])
    run = make_run(
        tmp_path,
        provider,
        Recorder(),
        model="o3-mini",
        compact_prompt="Sum it up.",
        summary_style="checkpoint",
        demo_hints=True,
    )
    history = conversation()
    await run_local(run, history, item_counts(run, history), SMALL, [], "ports", None)
    (request,) = provider.requests
    assert message_text(request.input[-1]) == build_prompt(
        "Sum it up.", "checkpoint", "ports", words=prompt_words(SMALL.summary)
    )
    assert request.prompt_cache_key == "session_1"
    assert request.max_output_tokens == 2 * (SMALL.summary or 0)
    assert provider.headers == [COMPACTION_HEADERS]


async def test_the_summary_s_own_words_budget_and_style_reach_the_prompt(tmp_path: Path) -> None:
    provider = ScriptedProvider(streams=[[assistant_message("Summary.")]])
    run = make_run(tmp_path, provider, Recorder(), summary_style="checkpoint")
    history = conversation()
    await run_local(run, history, item_counts(run, history), SMALL, [], None, None)
    assert message_text(provider.requests[0].input[-1]) == build_prompt(
        None, "checkpoint", None, words=prompt_words(SMALL.summary)
    )
    assert provider.headers == [None]


async def test_a_failed_request_is_retried_as_the_settings_say_and_announced_for_the_turn(
    tmp_path: Path,
) -> None:
    provider = ScriptedProvider(
        streams=[ProviderError("server", "HTTP 500", status=500), [assistant_message("Summary.")]]
    )
    notices: list[tuple[str, int]] = []

    def retry_notice(turn_id: str) -> RetryNotice:
        return lambda attempt, most, error: notices.append((turn_id, attempt))

    run: PathRun = make_run(tmp_path, provider, Recorder(), max_retries=1)
    run = replace(run, retry_notice=retry_notice)
    history = conversation()
    result = await run_local(run, history, item_counts(run, history), BUDGET, [], None, None)
    assert result.summary == "Summary." and notices == [("turn_1", 1)]


async def test_a_junk_summary_over_a_junk_earlier_one_installs_neither(tmp_path: Path) -> None:
    provider = ScriptedProvider(streams=[[assistant_message(LOOP)], [assistant_message(LOOP)]])
    run = make_run(tmp_path, provider, Recorder())
    history = [user_message(summary_text(LOOP)), *conversation()]
    result = await run_local(run, history, item_counts(run, history), BUDGET, [], None, None)
    assert result.summary == "" and not result.kept_previous_summary
    assert not any(is_summary_message(item) for item in result.items)


async def test_a_fragment_after_an_earlier_summary_is_kept_after_it(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        streams=[[assistant_message("The user")], [assistant_message("The user asked")]],
        stops=["length", "length"],
    )
    run = make_run(tmp_path, provider, Recorder())
    history = [user_message(summary_text("Earlier: the user runs svc-1.")), *conversation()]
    result = await run_local(run, history, item_counts(run, history), BUDGET, [], None, None)
    assert result.cut_short and result.kept_previous_summary
    assert result.summary == "Earlier: the user runs svc-1.\n\nThe user asked"
