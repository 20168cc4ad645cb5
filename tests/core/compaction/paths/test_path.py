"""What a compaction path works with (PathRun): the notes' budget and the setting that turns
them off, how kept messages are counted, the notes of messages a server compaction removed,
and the progress it reports."""

from __future__ import annotations

from pathlib import Path

from app.core import protocol as p
from app.core.compaction.budget import compaction_budget
from app.core.compaction.notes.block import CarriedOver, is_notes_message
from app.core.compaction.paths.local import COMPACTION_HEADERS
from app.core.compaction.paths.path import notes_items
from app.core.items import assistant_message, user_message
from app.core.tokens.counter import approx_tokens

from ..compaction_fakes import Recorder, ScriptedProvider, make_run

BUDGET = compaction_budget(16_000, 14_400, 500)
NO_WINDOW = compaction_budget(None, None, 500)


def test_the_notes_budget_follows_the_setting(tmp_path: Path) -> None:
    on = make_run(tmp_path, ScriptedProvider(), Recorder())
    off = make_run(tmp_path, ScriptedProvider(), Recorder(), carry_notes=False)
    assert on.notes_budget(BUDGET) == BUDGET.notes_budget() and BUDGET.notes_budget()
    assert off.notes_budget(BUDGET) is None


def test_kept_messages_are_counted_by_codexs_rule_when_no_window_sizes_the_budget(
    tmp_path: Path,
) -> None:
    run = make_run(tmp_path, ScriptedProvider(), Recorder())
    context = [user_message("<environment_context>cwd /srv</environment_context>")]
    count, context_tokens = run.kept_counting(NO_WINDOW, context)
    assert count is approx_tokens
    assert context_tokens == run.counts.count_item(context[0]) > 0
    count, _ = run.kept_counting(BUDGET, context)
    assert count == run.counts.count  # Coco's own counter, remembered for this compaction


def test_only_the_messages_that_left_the_view_give_notes(tmp_path: Path) -> None:
    run = make_run(tmp_path, ScriptedProvider(), Recorder())
    gone = "The database port is 5433 on staging."
    still = "The cache host is redis-cache-9 in prod."
    history = [user_message(gone), assistant_message("ok"), user_message(still)]
    carried = run.carry(history, BUDGET, still={still})
    assert carried is not None and carried.notes == (gone,)
    assert run.carry(history, BUDGET) is not None
    off = make_run(tmp_path, ScriptedProvider(), Recorder(), carry_notes=False)
    assert off.carry(history, BUDGET) is None


def test_progress_is_reported_for_the_run_s_turn_and_headers_follow_demo_hints(
    tmp_path: Path,
) -> None:
    recorder = Recorder()
    run = make_run(tmp_path, ScriptedProvider(), recorder)
    run.progress("local", "Summarising locally…")
    (event,) = recorder.events
    assert isinstance(event, p.CompactionProgress)
    assert (event.turn_id, event.stage, event.message) == ("turn_1", "local", "Summarising locally…")
    assert run.headers() is None
    assert make_run(tmp_path, ScriptedProvider(), recorder, demo_hints=True).headers() == (
        COMPACTION_HEADERS
    )


def test_notes_items_hold_the_block_only_when_there_is_one() -> None:
    assert notes_items(None) == [] and notes_items(CarriedOver()) == []
    (item,) = notes_items(CarriedOver(notes=("Port 8080.",)))
    assert is_notes_message(item)


def test_the_carried_notes_are_sized_with_the_sessions_own_counter(tmp_path: Path) -> None:
    run = make_run(tmp_path, ScriptedProvider(), Recorder())
    counted: list[str] = []
    real = run.counts.count

    def count(text: str) -> int:
        counted.append(text)
        return real(text)

    run.counts.count = count  # type: ignore[method-assign]
    history = [user_message("The database port is 5433 on staging."), assistant_message("ok")]
    carried = run.carry(history, BUDGET)
    assert carried is not None and carried.notes
    assert any("5433" in text for text in counted)  # the block was counted by it, not guessed
