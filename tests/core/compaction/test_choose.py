"""Choosing the path: old tool outputs are pruned when that alone makes room (never on a
/compact); else remote when offered and no focus is asked; a remote failure falls back to the
local summary when the setting allows, and is said; else it fails as remote-only."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core import protocol as p
from app.core.compaction.budget import CompactionBudget, compaction_budget
from app.core.compaction.choose import prune_to_room, run_path
from app.core.compaction.paths.path import PathResult, PathRun
from app.core.items import (
    Item,
    assistant_message,
    function_call,
    function_call_output,
    message_text,
    user_message,
)
from app.core.providers.base import ProviderError

from .compaction_fakes import (
    COMPACTION_ITEM,
    Recorder,
    ScriptedProvider,
    item_counts,
    make_config,
    make_run,
)

BUDGET = compaction_budget(16_000, 14_400, 500)
SUMMARY = [assistant_message("The user ran tools and asked questions.")]


def with_old_output(recent_words: int = 10) -> list[Item]:
    return [
        user_message("Read the log please."),
        function_call("read_file", '{"path": "app.log"}', "c1"),
        function_call_output("c1", "log line " * 4_000),
        assistant_message("The log is long."),
        user_message("Thanks. " + "word " * recent_words),
        assistant_message("You are welcome."),
        user_message("One more thing."),
        assistant_message("Sure."),
    ]


async def choose(
    run: PathRun, history: list[Item], trigger: p.Trigger = "auto", *, focus: str | None = None,
    remote: bool = False,
) -> PathResult:
    return await run_path(
        run, trigger, history, item_counts(run, history), BUDGET,
        focus=focus, model=None, remote=lambda: remote, pinned_calls=frozenset,
    )


def test_pruning_is_chosen_only_when_it_alone_makes_room(tmp_path: Path) -> None:
    run = make_run(tmp_path, ScriptedProvider(), Recorder())
    history = with_old_output()
    counts = item_counts(run, history)
    pruned = prune_to_room(history, counts, BUDGET, run.counter, frozenset)
    assert pruned is not None and pruned.strategy == "prune" and pruned.pruned_outputs == 1
    assert sum(run.counter.count_item(i) for i in pruned.items) <= (BUDGET.history_room or 0)
    # The recent turns alone are over the room: pruning is not enough, the model summarises.
    big = with_old_output(recent_words=12_000)
    assert prune_to_room(big, item_counts(run, big), BUDGET, run.counter, frozenset) is None
    # No window to size a room from: nothing to measure against.
    no_window = compaction_budget(None, None, 500)
    assert prune_to_room(history, counts, no_window, run.counter, frozenset) is None
    # A pinned output stays as it is.
    assert prune_to_room(history, counts, BUDGET, run.counter, lambda: frozenset({"c1"})) is None


async def test_an_automatic_compaction_prunes_without_asking_the_model(tmp_path: Path) -> None:
    provider, recorder = ScriptedProvider(), Recorder()
    result = await choose(make_run(tmp_path, provider, recorder), with_old_output(), "auto")
    assert result.strategy == "prune" and provider.requests == []
    assert recorder.stages() == ["prune"]


async def test_a_manual_compaction_summarises_even_when_pruning_would_do(tmp_path: Path) -> None:
    provider = ScriptedProvider(streams=[SUMMARY])
    result = await choose(make_run(tmp_path, provider, Recorder()), with_old_output(), "manual")
    assert result.strategy == "local" and len(provider.requests) == 1


async def test_remote_is_chosen_when_available_and_a_focus_goes_local(tmp_path: Path) -> None:
    history = with_old_output(recent_words=12_000)
    provider = ScriptedProvider(streams=[[COMPACTION_ITEM]])
    result = await choose(make_run(tmp_path, provider, Recorder()), history, remote=True)
    assert result.strategy == "remote" and result.remote_form == "trigger"
    provider, recorder = ScriptedProvider(streams=[SUMMARY]), Recorder()
    run = make_run(tmp_path, provider, recorder)
    result = await choose(run, history, "manual", focus="the log", remote=True)
    assert result.strategy == "local"
    assert recorder.said == [
        ("A focus cannot be given to remote compaction: compacting locally so the summary "
        "follows it.")
    ]


async def test_a_remote_failure_falls_back_to_local_and_says_so(tmp_path: Path) -> None:
    failing = ProviderError("bad_request", "unknown parameter", status=400)
    provider = ScriptedProvider(streams=[failing, SUMMARY], compacts=[failing])
    recorder = Recorder()
    run = make_run(tmp_path, provider, recorder)
    result = await choose(run, with_old_output(), "manual", remote=True)
    assert result.strategy == "remote_then_local"
    assert result.remote_form == "standalone"  # the form tried last
    assert recorder.said[-1] == (
        "Remote compaction failed (unknown parameter); compacting locally instead."
    )
    assert message_text(result.items[-1]).endswith(message_text(SUMMARY[0]))


async def test_without_fallback_a_remote_failure_is_remote_only(tmp_path: Path) -> None:
    failing = ProviderError("bad_request", "unknown parameter", status=400)
    provider = ScriptedProvider(streams=[failing], compacts=[failing])
    run = make_run(tmp_path, provider, Recorder(), remote_fallback_to_local=False)
    with pytest.raises(ProviderError) as raised:
        await choose(run, with_old_output(), "manual", remote=True)
    assert raised.value.code == "remote_only" and len(provider.requests) == 1


async def test_an_unreachable_server_is_not_asked_for_a_local_summary(tmp_path: Path) -> None:
    provider = ScriptedProvider(streams=[ProviderError("connection", "connection refused")])
    run = make_run(tmp_path, provider, Recorder())
    with pytest.raises(ProviderError) as raised:
        await choose(run, with_old_output(), "manual", remote=True)
    assert raised.value.code == "remote_only" and len(provider.requests) == 1


def test_pruning_is_chosen_when_it_fills_the_room_exactly_and_not_one_token_over(
    tmp_path: Path,
) -> None:
    run = make_run(tmp_path, ScriptedProvider(), Recorder())
    history = with_old_output()
    counts = item_counts(run, history)
    pruned = prune_to_room(history, counts, BUDGET, run.counter, frozenset)
    assert pruned is not None
    after = sum(run.counter.count_item(item) for item in pruned.items)

    def room(tokens: int) -> CompactionBudget:
        return CompactionBudget(16_000, 14_400, tokens + 500, 500, 1_000, 1_000)

    assert prune_to_room(history, counts, room(after + 1), run.counter, frozenset) is not None
    exact = prune_to_room(history, counts, room(after), run.counter, frozenset)
    assert exact is not None and exact.items == pruned.items
    assert prune_to_room(history, counts, room(after - 1), run.counter, frozenset) is None


async def test_pruning_says_what_it_does_in_the_status_indicator(tmp_path: Path) -> None:
    recorder = Recorder()
    await choose(make_run(tmp_path, ScriptedProvider(), recorder), with_old_output(), "auto")
    progress = [e for e in recorder.events if isinstance(e, p.CompactionProgress)]
    assert [(e.turn_id, e.stage, e.message) for e in progress] == [
        ("turn_1", "prune", "Removing old tool outputs…")
    ]


async def test_the_notices_are_said_in_the_compacting_turn(tmp_path: Path) -> None:
    history = with_old_output(recent_words=12_000)
    recorder = Recorder()
    run = make_run(tmp_path, ScriptedProvider(streams=[SUMMARY]), recorder)
    await choose(run, history, "manual", focus="the log", remote=True)
    failing = ProviderError("bad_request", "unknown parameter", status=400)
    provider = ScriptedProvider(streams=[failing, SUMMARY], compacts=[failing])
    await choose(make_run(tmp_path, provider, recorder), with_old_output(), "manual", remote=True)
    assert recorder.said[0].startswith("A focus") and recorder.said[-1].startswith("Remote compaction failed")
    assert recorder.said_in == ["turn_1"] * len(recorder.said)


async def test_a_remote_only_failure_keeps_the_servers_category_and_message(
    tmp_path: Path,
) -> None:
    failing = ProviderError("bad_request", "unknown parameter", status=400)
    provider = ScriptedProvider(streams=[failing], compacts=[failing])
    run = make_run(tmp_path, provider, Recorder(), remote_fallback_to_local=False)
    with pytest.raises(ProviderError) as raised:
        await choose(run, with_old_output(), "manual", remote=True)
    error = raised.value
    assert (error.category, error.message, error.code) == (
        "bad_request", "unknown parameter", "remote_only"
    )
    assert error.__cause__ is failing


async def test_the_local_summary_follows_the_focus_and_the_model_asked(tmp_path: Path) -> None:
    focus = "the deployment port 8443"
    provider = ScriptedProvider(streams=[SUMMARY, SUMMARY])
    run = make_run(tmp_path, provider, Recorder())
    history = with_old_output()
    await run_path(
        run, "manual", history, item_counts(run, history), BUDGET,
        focus=focus, model="summariser-model", remote=lambda: False, pinned_calls=frozenset,
    )
    await choose(run, history, "manual")  # no focus, no model: the session's own
    focused, plain = provider.requests
    assert focused.model == "summariser-model" and plain.model == make_config(tmp_path).model
    assert focus in str(focused.input[-1]) and focus not in str(plain.input[-1])


async def test_pruning_looks_through_the_history_off_the_event_loops_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from app.core.compaction import choose as choose_module

    threads: list[threading.Thread] = []
    real = choose_module.prune_tool_outputs

    def noted(*args, **kwargs):  # type: ignore[no-untyped-def]
        threads.append(threading.current_thread())
        return real(*args, **kwargs)

    monkeypatch.setattr(choose_module, "prune_tool_outputs", noted)
    run = make_run(tmp_path, ScriptedProvider(), Recorder())
    result = await choose(run, with_old_output())
    assert result.strategy == "prune"
    assert threads and threading.main_thread() not in threads
