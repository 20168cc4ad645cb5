"""The carried notes (issue 23): the user's facts, files and commands kept over compactions
without asking a model. The extractor, the block's text, merging across compactions and the
budget."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from app.core.compaction.budget import NOTES_FLOOR
from app.core.compaction.notes.carryover import (
    MAX_NOTE_CHARS,
    NOTES_LABEL,
    CarriedOver,
    carry_over,
    extract_notes,
    is_notes_message,
    notes_from_text,
    previous_notes,
    specificity,
    tool_traffic,
)
from app.core.compaction.rebuild import build_compacted_history, real_user_messages
from app.core.items import (
    assistant_message,
    function_call,
    function_call_output,
    message_text,
    user_message,
)
from app.core.tokens.counter import approx_tokens

# One message per kind of fact, each the user's own sentence.
FACTS = {
    "name": "My name is Ada Lovelace.",
    "identifier": "The flag lives in billing_rollout_enabled on the server.",
    "path": "The config is in /etc/billing/app.yaml on the box.",
    "url": "Dashboards are at https://grafana.acme.example/d/billing today.",
    "number with unit": "Each worker gets 512 MB of memory.",
    "port": "The gateway listens on port 8443.",
    "money": "The budget is $12,500 for everything.",
    "date": "The cut-over happens on March 14, 2027.",
    "time": "The stand-up is at 9:30 am.",
    "code span": "Deploy it with `make deploy-staging` please.",
    "e-mail": "Send alerts to ops@acme.example anytime.",
    "always": "We always run the linter first.",
    "never": "Never propose a rewrite.",
    "must": "Deploys must go through the pipeline.",
    "don't": "Don't touch the vendored folder.",
    "please use": "Please use tabs for the makefiles.",
    "make sure": "Make sure the tests pass before you stop.",
}

PROSE = (
    "I spent the morning thinking about how the team works together and what makes a good "
    "day. It was a quiet week, and I don't really know what to make of it yet. We talked "
    "about lunch, the weather and a film someone liked. Nothing much happened after that, so "
    "we went home early and read for a while."
)
LOGS = """Here is what it printed:
2026-11-25 10:00:01 INFO starting worker 3 on /var/run/worker.sock
2026-11-25 10:00:02 WARN retry 1/5 after 200 ms
2026-11-25 10:00:04 ERROR timeout after 30s talking to 10.0.0.12:5432
Traceback (most recent call last):
  File "/srv/app/worker.py", line 88, in run
    conn = pool.get(timeout=30)
TimeoutError: pool exhausted"""
CODE = """```python
def connect(host: str, port: int = 5432) -> Connection:
    return Connection(f"postgres://{host}:{port}/billing", timeout_ms=4250)
```
class Pool:
    def __init__(self, size=37):
        self.size = size"""


@pytest.mark.parametrize("kind", list(FACTS))
def test_every_kind_of_fact_comes_out_in_the_users_words(kind: str) -> None:
    text = FACTS[kind]
    message = f"Some context first. {text} And that was it."
    notes = extract_notes(message)
    assert notes == [text], kind


def test_messages_without_facts_give_few_or_no_notes() -> None:
    assert extract_notes(PROSE) == []
    assert extract_notes(LOGS) == []
    assert extract_notes(CODE) == []


def test_facts_around_a_code_block_still_come_out() -> None:
    message = f"The port is 8443.\n{CODE}\nNever deploy on Fridays."
    assert extract_notes(message) == ["The port is 8443.", "Never deploy on Fridays."]


def test_a_fact_inside_a_run_on_paragraph_comes_out_short() -> None:
    filler = "and then we went on talking about the thing we were building " * 30
    message = f"{filler}so the staging gateway listens on port 8443 {filler}"
    notes = extract_notes(message)
    assert len(notes) == 1
    note = notes[0]
    assert "port 8443" in note
    assert len(note) <= MAX_NOTE_CHARS + 4
    # The user's own words: the note is a piece of the message, ellipses aside.
    assert note.strip("…") in message


def test_the_truncation_marker_is_not_a_fact() -> None:
    assert extract_notes("We went on…412 tokens truncated…and on.") == []


def test_specificity_ranks_values_above_bare_rules() -> None:
    assert specificity("Never do that.") < specificity("The gateway listens on port 8443.")
    assert specificity("Never do that.") < specificity("Never propose MongoDB.")


def test_block_text_reads_back_into_its_lists() -> None:
    carried = CarriedOver(
        notes=("The port is 8443.", "Never propose MongoDB."),
        files_changed=("app/main.py",),
        files_read=("README.md", "docs/setup.md"),
        commands=("pytest -q",),
    )
    text = carried.text()
    assert text.startswith(NOTES_LABEL)
    assert "- `pytest -q`" in text
    assert notes_from_text(text) == carried
    assert is_notes_message(carried.item())
    assert carried.files == ["app/main.py (changed)", "README.md (read)", "docs/setup.md (read)"]


def test_duplicates_are_noted_once() -> None:
    carried = carry_over(
        ["The port is 8443.", "the port is 8443!", "The port is 8443. Use port 8443 always."],
        [],
        CarriedOver(),
        1_000,
    )
    assert carried.notes == ("The port is 8443. Use port 8443 always.",) or carried.notes == (
        "The port is 8443.",
        "Use port 8443 always.",
    )


def _tool_turn(call_id: str, name: str, arguments: dict[str, object], output: str) -> list:
    return [
        function_call(name, json.dumps(arguments), call_id),
        function_call_output(call_id, output),
    ]


def test_files_and_commands_newest_first_failed_calls_left_out() -> None:
    items = [
        *_tool_turn("1", "read_file", {"path": "README.md"}, "# Readme"),
        *_tool_turn("2", "read_file", {"path": "missing.txt"}, "read_file failed: No such file"),
        *_tool_turn("3", "shell", {"command": ["pytest", "-q"]}, "3 passed"),
        *_tool_turn("4", "write_file", {"path": "app/x.py", "content": "x"}, "ok"),
        *_tool_turn(
            "5", "apply_patch", {"input": "*** Begin Patch\n*** Update File: app/y.py\n"}, "ok"
        ),
        *_tool_turn("6", "read_file", {"path": "docs/a.md"}, "text"),
        *_tool_turn("7", "read_file", {"path": "README.md"}, "# Readme"),
    ]
    changed, read, commands = tool_traffic(items)
    assert changed == ["app/y.py", "app/x.py"]
    assert read == ["README.md", "docs/a.md"]
    assert commands == ["pytest -q"]


def _compact(history: list, summary: str, budget: int, notes_budget: int) -> list:
    return build_compacted_history(
        history, summary, budget=budget, notes_budget=notes_budget
    ).items


def test_notes_merge_across_three_compactions_nothing_lost() -> None:
    filler = "We kept talking about the plan for a while. " * 20
    history = [
        user_message(f"{filler}The gateway listens on port 8443. {filler}"),
        assistant_message("ok"),
        *_tool_turn("1", "read_file", {"path": "README.md"}, "# Readme"),
        user_message(filler),
    ]
    history = _compact(history, "S1", budget=60, notes_budget=400)
    history += [
        user_message(f"{filler}Never propose MongoDB for this. {filler}"),
        assistant_message("ok"),
        user_message(filler),
    ]
    history = _compact(history, "S2", budget=60, notes_budget=400)
    history += [
        user_message(f"{filler}Send alerts to ops@acme.example please. {filler}"),
        assistant_message("ok"),
        *_tool_turn("2", "shell", {"command": "make test"}, "ok"),
        user_message(filler),
    ]
    history = _compact(history, "S3", budget=60, notes_budget=400)
    blocks = [item for item in history if is_notes_message(item)]
    assert len(blocks) == 1  # one block, the earlier ones merged into it
    carried = previous_notes(history)
    assert carried.notes == (
        "The gateway listens on port 8443.",
        "Never propose MongoDB for this.",
        "Send alerts to ops@acme.example please.",
    )
    assert carried.files_read == ("README.md",)
    assert carried.commands == ("make test",)
    # The block sits just before the summary, and is never taken for a user message.
    assert history.index(blocks[0]) == len(history) - 2
    assert all(not t.startswith(NOTES_LABEL) for t in real_user_messages(history))


def test_budget_pressure_drops_the_least_specific_and_oldest_first() -> None:
    previous = CarriedOver(
        notes=(
            "Never skip the review.",  # a bare rule: least specific, oldest
            "The gateway listens on port 8443.",
            "Always be kind.",  # a bare rule, newer
        )
    )
    leaving = ["Send every alert to ops@acme.example.", "The config is /etc/billing/app.yaml."]
    full = carry_over(leaving, [], previous, 10_000)
    assert len(full.notes) == 5 and full.dropped == 0
    budget = approx_tokens(full.text()) - 8  # one short note too many
    squeezed = carry_over(leaving, [], previous, budget)
    assert approx_tokens(squeezed.text()) <= budget
    assert squeezed.dropped >= 1
    assert "Never skip the review." not in squeezed.notes  # first out
    assert "The gateway listens on port 8443." in squeezed.notes
    assert "Send every alert to ops@acme.example." in squeezed.notes
    # The order of what stays is unchanged: oldest first.
    assert list(squeezed.notes) == [n for n in full.notes if n in squeezed.notes]


def test_the_block_never_exceeds_its_budget_however_much_leaves() -> None:
    leaving = [f"Server {i} listens on port {8000 + i} at /srv/node-{i}/run." for i in range(300)]
    tools = [
        item
        for i in range(50)
        for item in _tool_turn(str(i), "read_file", {"path": f"src/m{i}.py"}, "x")
    ]
    for budget in (NOTES_FLOOR, 120, 200, 1_000):
        carried = carry_over(leaving, tools, CarriedOver(), budget)
        assert approx_tokens(carried.text()) <= budget
        assert carried.dropped > 0  # the budget forced some out, and says so
        if budget > NOTES_FLOOR:
            assert carried.notes  # the lists give way to the notes
    # Among equally specific notes, the newest stay.
    assert carry_over(leaving, tools, CarriedOver(), 200).notes[-1].startswith("Server 299")
    # A budget too small for even the label: no block at all.
    assert carry_over(leaving, tools, CarriedOver(), 20).empty


def test_rebuilt_history_counts_the_block_within_the_room() -> None:
    filler = "We kept talking about the plan for a while. " * 30
    history = [
        user_message(f"The gateway listens on port 8443. {filler}"),
        assistant_message("ok"),
        user_message(f"Never propose MongoDB. {filler}"),
        assistant_message("ok"),
        user_message(filler),
    ]
    room = 600
    rebuilt = build_compacted_history(
        history, "S", budget=500, room=room, notes_budget=150
    )
    total = sum(approx_tokens(message_text(item)) + 4 for item in rebuilt.items)
    assert total <= room
    assert rebuilt.carried.notes  # the facts of the messages that left are carried
    assert "The gateway listens on port 8443." in rebuilt.carried.notes


def test_no_notes_budget_means_no_block() -> None:
    history = [user_message("The gateway listens on port 8443. " + "words " * 400)]
    history.append(user_message("next " * 400))
    rebuilt = build_compacted_history(history, "S", budget=100)
    assert not any(is_notes_message(item) for item in rebuilt.items)
    assert rebuilt.carried.empty


def test_a_message_is_read_for_facts_once_however_often_it_leaves_the_view(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Compaction cost (issue 22): a compaction run again after an undo, or the narrower pass
    of the same compaction, reads no message for facts twice."""
    from app.core.compaction.notes import cache as carryover

    read: list[str] = []
    real = carryover.extract_chunk

    def watched(texts: Sequence[str]) -> list[tuple[str, int]]:
        read.extend(texts)
        return real(texts)

    monkeypatch.setattr(carryover, "extract_chunk", watched)
    texts = [f"Our staging port is {8000 + i} and the owner is svc-orchard-{i}." for i in range(40)]
    first = carryover.extract_many(texts)
    assert len(read) == len(texts) and first
    assert carryover.extract_many(texts) == first  # the same notes…
    assert len(read) == len(texts)  # …and not one message read again


def test_containment_remembered_across_merges_gives_what_searching_gives() -> None:
    import random

    from app.core.compaction.notes.carryover import Containment, contained_by_search

    rng = random.Random(7)
    words = ["port", "ports", "8443", "db", "the", "then", "he", "billing", "bill", "a"]
    containment = Containment()
    pool = [" ".join(rng.choices(words, k=rng.randint(1, 6))) for _ in range(40)]
    for merge in range(400):
        if merge % 50 == 0:  # now and then another conversation altogether
            pool = [" ".join(rng.choices(words, k=rng.randint(1, 6))) for _ in range(40)]
        keys = list(dict.fromkeys(rng.sample(pool, rng.randint(0, 20))))
        if keys and rng.random() < 0.4:  # a note that says part of another
            inner = rng.choice(keys).split(" ")
            keys.append(" ".join(inner[1:] or inner))
        expected = contained_by_search(keys)
        assert containment.of(keys) == expected, keys
        assert containment.of(list(keys)) == expected  # asked again: remembered, the same
    # A note gone since the last merge no longer makes the ones inside it go.
    assert containment.of(["the billing db", "billing db"]) == {1}
    assert containment.of(["billing db", "the port"]) == set()
    assert containment.of(["billing db", "billing db"]) == {0, 1}  # the same note twice


def test_a_note_inside_another_of_the_block_is_not_carried() -> None:
    previous = CarriedOver(notes=("The gateway listens on port 8443 behind the proxy.",))
    leaving = ["The gateway listens on port 8443.", "Deploys must go through the pipeline."]
    carried = carry_over(leaving, [], previous, 2_000)
    assert carried.notes == (
        "The gateway listens on port 8443 behind the proxy.",
        "Deploys must go through the pipeline.",
    )
    assert carried.dropped == 1


def test_the_remembered_specificity_of_a_note_is_the_one_read_again() -> None:
    from app.core.compaction.notes.carryover import _specificity

    for text in [*FACTS.values(), PROSE, "The gateway listens on port 8443."]:
        assert _specificity(text) == specificity(text) == _specificity(text)
