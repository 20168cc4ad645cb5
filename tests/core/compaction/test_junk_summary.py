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
    junk_words,
    repeated_share,
    retry_note,
    strip_wrapper,
    wrapper_texts,
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


def test_each_kind_of_junk_is_said_in_its_own_words() -> None:
    assert junk_words("empty") == "it only repeated Coco's own wrapper text"
    assert junk_words("repetition") == "it mostly repeated itself"
    assert junk_words("echo") == "it mostly repeated the instructions"


def test_the_retry_tells_the_model_what_was_wrong_in_its_own_terms() -> None:
    ask = (
        "). Write the summary itself now, in your own words: say what happened in this "
        "conversation, once, without repeating any sentence or these instructions."
    )
    assert retry_note("empty") == (
        "\n\nYour previous answer was not a summary (it only repeated the wrapper text" + ask
    )
    assert retry_note("echo") == (
        "\n\nYour previous answer was not a summary (it mostly repeated the instructions" + ask
    )


def test_shares_count_every_gram_to_the_last_word() -> None:
    assert repeated_share("x y z x y z") == 0.25  # xyz yzx zxy xyz: one of four repeats
    sources = ["alpha beta gamma delta epsilon"]
    assert echoed_share("one alpha beta gamma delta epsilon", sources) == 0.5


def test_a_text_too_short_for_a_gram_shares_nothing() -> None:
    assert repeated_share("too short") == 0.0
    assert echoed_share("four words at most", ["four words at most"]) == 0.0


def test_eight_words_are_judged_and_seven_are_not() -> None:
    assert check_summary("a b a b a b a b").junk == "repetition"
    assert check_summary("a b a b a b a").junk is None


def test_half_the_trigrams_repeated_is_already_repetition() -> None:
    text = "a b c a b c a b"  # abc bca cab abc bca cab: three of six repeat
    assert repeated_share(text) == 0.5
    assert check_summary(text).junk == "repetition"


def test_half_the_five_grams_copied_is_already_an_echo_and_the_text_is_kept() -> None:
    source = "alpha beta gamma delta epsilon zeta eta"
    text = "alpha beta gamma delta epsilon zeta eta one two three"
    assert repeated_share(text) == 0.0
    assert echoed_share(text, [source]) == 0.5
    checked = check_summary(text, sources=[source])
    assert checked.junk == "echo" and checked.text == text


def test_the_wrappers_labels_are_stripped_on_their_own_and_blank_runs_closed() -> None:
    assert summary_prefix().startswith("[Coco context summary] ")
    assert "[Coco context summary]" in wrapper_texts()
    assert strip_wrapper("[Coco context summary]\nThe user wants a CSV reader.") == (
        "The user wants a CSV reader."
    )
    assert strip_wrapper("First point.\n\n\n\nSecond point.") == "First point.\n\nSecond point."


def test_the_wrapper_texts_come_longest_first() -> None:
    """A whole wrapper is stripped before its own sentences and labels, which it contains."""
    lengths = [len(text) for text in wrapper_texts()]
    assert lengths == sorted(lengths, reverse=True)
    assert wrapper_texts()[0] == max(summary_prefix(), NOTES_INTRO, key=len)
