"""How recall ranks (app/core/recall/ranking.py), each rule at its boundary: the exact phrase,
then every word, then any word, each by BM25; what the model no longer sees before what it
sees; never the message that asked; a lower tier asked only while the higher ones hold fewer
passages out of view than the limit."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from app.core.compaction.notes.block import NOTES_LABEL
from app.core.compaction.prompts import summary_prefix
from app.core.items import Item, assistant_message, user_message
from app.core.recall.index import RecallIndex
from app.core.recall.query import build_query
from app.core.recall.ranking import ranked
from app.core.recall.records import RecordIndexer
from app.core.recall.results import RecallResult
from app.core.recall.searchable import asking_message, item_digest
from app.core.recall.store import open_memory
from app.core.rollout.store import RolloutWriter

PHRASE = user_message("The staging server listens on port 7001 behind the gateway.")
ALL_WORDS = user_message("A server for staging listens where its port was chosen by the gateway team.")
MOST_WORDS = assistant_message("The staging port changed twice this week.")
SOME_WORD = assistant_message("The port of Lisbon is busy in summer.")
UNRELATED = user_message("Bake the bread at 220 degrees.")
ASKED = user_message("Which port does the staging server listen on?")


def index_of(tmp_path: Path, items: list[Item]) -> RecallIndex:
    """The index of a rollout of ``items`` (record ``n`` is ``items[n]``), caught up."""
    path = tmp_path / "s.jsonl"
    with RolloutWriter(path) as writer:
        for item in items:
            writer.append("response_item", {"item": item, "turn_id": "t"})
    index = RecallIndex(path)
    index.flush()
    return index


def search(
    index: RecallIndex,
    text: str,
    limit: int = 5,
    *,
    view: Sequence[Item] = (),
    exclude: Sequence[Item] = (),
    where: Callable[[int], bool] | None = None,
) -> RecallResult:
    query = build_query(text)
    assert query is not None
    digests = frozenset(d for d in map(item_digest, view) if d is not None)
    excluded = frozenset(d for d in map(item_digest, exclude) if d is not None)
    return index.search(query, limit, digests, where, excluded)


def texts(result: RecallResult) -> list[str]:
    return [hit.text for hit in result.hits]


def test_phrase_then_every_word_then_most_words_then_some(tmp_path: Path) -> None:
    index = index_of(tmp_path, [SOME_WORD, MOST_WORDS, ALL_WORDS, PHRASE, UNRELATED])
    result = search(index, "staging server listens on port")
    assert texts(result) == [
        "The staging server listens on port 7001 behind the gateway.",
        "A server for staging listens where its port was chosen by the gateway team.",
        "The staging port changed twice this week.",  # three of the words: BM25 over any
        "The port of Lisbon is busy in summer.",  # one of them
    ]
    assert [hit.all_words for hit in result.hits] == [True, True, False, False]
    assert result.all_words


def test_words_nowhere_together_still_find_the_passages_holding_most(tmp_path: Path) -> None:
    index = index_of(tmp_path, [SOME_WORD, MOST_WORDS, UNRELATED])
    result = search(index, "staging port gateway")
    assert texts(result) == [MOST_WORDS["content"][0]["text"], SOME_WORD["content"][0]["text"]]
    assert not result.all_words and not any(hit.all_words for hit in result.hits)


def test_the_message_that_asked_is_never_an_answer(tmp_path: Path) -> None:
    index = index_of(tmp_path, [SOME_WORD, ASKED])
    # The question holds every word; the old passage only "port": it is still the answer.
    result = search(index, "port staging server listen", view=[ASKED], exclude=[ASKED])
    assert texts(result) == ["The port of Lisbon is busy in summer."]
    (tmp_path / "b").mkdir()
    alone = index_of(tmp_path / "b", [UNRELATED, ASKED])
    assert search(alone, "staging server", view=[ASKED], exclude=[ASKED]).hits == []
    # Without ``exclude`` (the user's own find box) the question is a match like any other.
    assert texts(search(alone, "staging server", view=[ASKED])) == [
        "Which port does the staging server listen on?"
    ]


def test_out_of_view_comes_before_a_better_match_in_view(tmp_path: Path) -> None:
    index = index_of(tmp_path, [PHRASE, SOME_WORD])
    result = search(index, "staging server listens on port", view=[PHRASE])
    assert texts(result) == [
        "The port of Lisbon is busy in summer.",
        "The staging server listens on port 7001 behind the gateway.",
    ]
    assert [hit.in_view for hit in result.hits] == [False, True]


def test_within_a_tier_bm25_orders_by_how_much_a_passage_says_of_rare_words(
    tmp_path: Path,
) -> None:
    once = user_message("quetzal appears here once among many other ordinary words of a note")
    often = user_message("quetzal quetzal quetzal")
    index = index_of(tmp_path, [once, often, *[user_message(f"filler {n}") for n in range(20)]])
    assert [hit.text for hit in search(index, "quetzal").hits] == [
        "quetzal quetzal quetzal",
        "quetzal appears here once among many other ordinary words of a note",
    ]


@pytest.mark.parametrize(("limit", "expected"), [(1, 1), (2, 2), (3, 3)])
def test_a_lower_tier_fills_only_what_the_higher_ones_leave(
    tmp_path: Path, limit: int, expected: int
) -> None:
    # Two passages hold every word out of view; the third only one of them.
    index = index_of(tmp_path, [ALL_WORDS, PHRASE, SOME_WORD])
    result = search(index, "staging port server", limit)
    assert len(result.hits) == expected
    assert [hit.all_words for hit in result.hits] == [True, True, False][:expected]


def test_in_view_passages_of_a_higher_tier_do_not_stop_the_lower_one(tmp_path: Path) -> None:
    # The phrase is in view: the limit of one is not met by it, so the any-word tier is asked
    # and its passage out of view comes first.
    index = index_of(tmp_path, [PHRASE, SOME_WORD])
    result = search(index, "staging server listens on port", 1, view=[PHRASE])
    assert texts(result) == ["The port of Lisbon is busy in summer."]


def test_where_keeps_only_the_records_it_accepts(tmp_path: Path) -> None:
    index = index_of(tmp_path, [PHRASE, ALL_WORDS])
    result = search(index, "staging port", where=lambda seq: seq == 1)
    assert [hit.seq for hit in result.hits] == [1]


def test_the_asking_message_is_the_last_the_user_wrote() -> None:
    summary = user_message(f"{summary_prefix()}\nThe user asked about ports.")
    injected = user_message("<environment_context>cwd</environment_context>")
    notes = user_message(f"{NOTES_LABEL} Kept from older messages: the port is 7001.")
    answer = assistant_message("Port 7001.")
    assert asking_message([ASKED, answer, summary, notes, injected]) == item_digest(ASKED)
    assert asking_message([UNRELATED, ASKED]) == item_digest(ASKED)
    assert asking_message([answer, summary]) is None
    assert asking_message([]) is None


def test_the_exact_phrase_comes_first_though_bm25_prefers_another(tmp_path: Path) -> None:
    scattered = user_message("crane harbour blue, crane harbour blue, crane harbour blue")
    exact = user_message("We met at noon. " * 20 + "Then the blue harbour crane lifted it.")
    index = index_of(tmp_path, [scattered, exact])
    # BM25 alone ranks the short, repetitive passage first (both hold every word) ...
    assert texts(search(index, "crane blue harbour"))[0].startswith("crane harbour blue")
    # ... the words as asked, in their order, rank above it.
    assert texts(search(index, "blue harbour crane"))[0].startswith("We met at noon.")


def _asked(items: list[Item], text: str, limit: int) -> list[str]:
    """The FTS queries ``ranked`` asks for ``text`` over an index of ``items`` (the record
    numbers their positions), nothing in view."""
    conn = open_memory()
    records = RecordIndexer()
    for seq, item in enumerate(items):
        records.add(conn, seq, "response_item", "t", {"item": item, "turn_id": "t"})
    query = build_query(text)
    assert query is not None
    asked: list[str] = []
    conn.set_trace_callback(asked.append)
    ranked(conn, query, limit, frozenset())
    return [sql for sql in asked if "MATCH" in sql]


def test_a_lower_tier_is_asked_only_while_the_higher_ones_leave_room() -> None:
    # Two passages hold every word: a limit of two is met by the every-word tier, so the
    # any-word one is never asked; a limit of three asks it.
    items = [ALL_WORDS, PHRASE, SOME_WORD]
    assert len(_asked(items, "staging port server", 2)) == 2  # the phrase, every word
    assert len(_asked(items, "staging port server", 3)) == 3
    assert len(_asked(items, "staging port server", 1)) == 2


def test_the_same_query_is_not_asked_twice_for_two_tiers() -> None:
    # One word: "every word" and "any word" are the same query, asked once.
    assert len(_asked([PHRASE, SOME_WORD], "port", 5)) == 1
