"""The local path: the model summarises a copy of the history without tools, the new history
ends with the summary, and a cut-short summary keeps the earlier one beside it."""

from __future__ import annotations

from pathlib import Path

from app.core.compaction.budget import compaction_budget
from app.core.compaction.paths.local_path import previous_summary, prompt_words, run_local
from app.core.compaction.prompts import is_summary_message, summary_text
from app.core.items import Item, assistant_message, message_text, user_message

from ..compaction_fakes import USAGE, Recorder, ScriptedProvider, item_counts, make_run

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
    assert recorder.stages() == ["local"]
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
    provider = ScriptedProvider(
        streams=[[assistant_message(LOOP)], [assistant_message(LOOP)]]
    )
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
