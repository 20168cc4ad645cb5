"""The junk-summary rule (issue 39) on its corpus: good summaries of many shapes
(``data/good_summaries.json``: handoff and checkpoint, short and long, tables, code, lists of
facts, other languages) are never rejected; the small model's kinds of junk (one sentence
looped, Coco's wrapper, the instructions or the prompt given back) are caught. Real Gemma 3
270M answers (``data/gemma_summaries.json``, collected with ``bench/llama_summaries.py`` from
the shared llama.cpp server and labelled by hand) are judged as labelled."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core.compaction.junk_summary import (
    check_summary,
    echoed_share,
    repeated_share,
    strip_wrapper,
)
from app.core.compaction.notes.block import NOTES_INTRO
from app.core.compaction.prompts import build_prompt, summary_prefix

DATA = Path(__file__).parent / "data"
INSTRUCTIONS = "You are Coco, a helpful assistant."
SOURCES = (
    INSTRUCTIONS,
    build_prompt(None, "handoff", None, words=179),
    build_prompt(None, "checkpoint", None, words=179),
)


def corpus(name: str) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = json.loads((DATA / name).read_text(encoding="utf-8"))
    return entries


GOOD = corpus("good_summaries.json")
# Shaped on what Gemma 3 270M answered the compaction prompt on the shared llama-server (the
# first 100 characters of each answer, from bench/llama_summaries.py's log), loops completed to
# a 256-token answer as the server's output limit ends them.
JUNK = {
    "label loop": "I am a 179-word summary.\n告诉我\nYou are a 179-word summary.\n告诉我\n" * 12,
    "name loop": "You are Ada Lovelace. audiencia\nに通りのmodel\n" * 15,
    "refusal loop": "I'm sorry, I can't help you.\n告訴model\n" * 20,
    "model loop": "The user is a model. anaknya\nuserdata\nYou are a model. anaknya\nuserdata\n" * 10,
    "file loop": "Save it as a .md file.\n\n## Save as .md\n" * 15,
    "template echo": SOURCES[2],
    "wrapper echo": summary_prefix() + "\n" + summary_prefix(),
}


# Every answer Gemma 3 270M gave the compaction prompt on the shared llama-server (4 096-token
# window, temperature 0, 256 tokens at most): 15 conversations, plain, after a first summary and
# with carried notes, asked for a handoff note and for a checkpoint.
GEMMA = corpus("gemma_summaries.json")
AS_LABELLED = {"loop": "repetition", "echo": "echo", "copy": None}


def test_the_real_model_corpus_holds_each_case_asked() -> None:
    assert len(GEMMA) == 30
    assert {entry["label"] for entry in GEMMA} == set(AS_LABELLED)
    assert all(entry["stop"] == "length" for entry in GEMMA)  # every answer ran to the limit


@pytest.mark.parametrize("entry", GEMMA, ids=[e["case"] for e in GEMMA])
def test_each_real_small_model_answer_is_judged_as_labelled(entry: dict[str, Any]) -> None:
    """A loop is repetition, the prompt given back an echo. The conversation given back word
    for word (stray tokens between its messages) is not a summary, but it is let through on
    purpose: it holds the conversation's own facts, and a good summary that quotes what the
    user said must never be rejected for it."""
    style = entry["case"].split("/")[1]
    prompt = build_prompt(None, style, None, words=179)
    checked = check_summary(entry["summary"], sources=(INSTRUCTIONS, prompt))
    assert checked.junk == AS_LABELLED[entry["label"]]


def test_the_good_corpus_is_varied() -> None:
    assert len(GOOD) >= 20


@pytest.mark.parametrize("text", JUNK.values(), ids=list(JUNK))
def test_every_kind_of_small_model_junk_is_caught(text: str) -> None:
    assert check_summary(text, sources=SOURCES).junk is not None


@pytest.mark.parametrize("entry", GOOD, ids=[e["case"] for e in GOOD])
def test_no_good_summary_is_ever_rejected(entry: dict[str, Any]) -> None:
    checked = check_summary(entry["summary"], sources=SOURCES)
    assert checked.junk is None
    # Far from the thresholds, not just under them.
    assert repeated_share(entry["summary"]) < 0.25
    assert echoed_share(entry["summary"], SOURCES) < 0.25


def test_cocos_wrapper_is_stripped_whole_or_by_the_sentence() -> None:
    good = "The user wants a CSV reader that streams 2 GB files; next, try pyarrow."
    prefix = summary_prefix()
    assert strip_wrapper(f"{prefix}\n{good}") == good
    first_sentence = prefix.split(". ")[0] + "."
    assert strip_wrapper(f"{first_sentence} {good}") == good
    assert strip_wrapper(f"{NOTES_INTRO}\n\n{good}") == good
    assert check_summary(f"{prefix}\n{good}").text == good


def test_a_text_that_is_only_wrapper_is_junk_and_nothing_at_all_is_not() -> None:
    assert check_summary(summary_prefix() + "\n" + summary_prefix()).junk == "empty"
    assert check_summary("").junk is None  # an empty answer is a fragment, not junk


def test_one_sentence_repeated_is_repetition() -> None:
    assert check_summary("I'm a model. " * 40).junk == "repetition"
    assert check_summary("I'm a model. Nothing else happened.").junk is None  # too short


def test_the_prompt_given_back_is_an_echo() -> None:
    prompt = SOURCES[1]
    assert check_summary(prompt, sources=SOURCES).junk == "echo"
    assert check_summary(INSTRUCTIONS + " " + prompt[:400], sources=SOURCES).junk == "echo"
