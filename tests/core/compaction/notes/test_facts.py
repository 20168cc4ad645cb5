"""What makes a statement a fact: the kinds found in a sentence, their priority where two
kinds match the same words, rules said as rules, and how specific a note is."""

from __future__ import annotations

from itertools import pairwise

from app.core.compaction.notes.facts import facts_of, score_of, specificity


def kinds(sentence: str) -> list[str]:
    return [kind for _, _, kind in facts_of(sentence)]


def test_each_kind_of_fact_is_found() -> None:
    assert "url" in kinds("Dashboards are at https://grafana.example.com/d/billing today.")
    assert "email" in kinds("Write to ops-team@example.org when it breaks.")
    assert "path" in kinds("The config is in /etc/billing/app.yaml on the box.")
    assert "number" in kinds("The budget is 250 ms per request.")
    assert "date" in kinds("The release is on 2026-12-01.")
    assert "ident" in kinds("The flag lives in billing_rollout_enabled.")
    assert "name" in kinds("My name is Ada Lovelace.")
    assert "code" in kinds("Run `make check` first.")


def test_plain_talk_holds_no_fact() -> None:
    assert facts_of("that sounds good, thanks a lot") == []
    assert specificity("that sounds good, thanks a lot") == 0


def test_a_rule_counts_at_a_clause_start_not_in_the_middle_of_prose() -> None:
    assert "rule" in kinds("Never use tabs in this repository.")
    assert "rule" in kinds("Also, we always deploy through CI.")
    assert "rule" not in kinds("I never thought it would work")


def test_facts_do_not_overlap_and_the_first_listed_kind_holds_the_words() -> None:
    found = facts_of("See https://example.com/a/b/c.py for it.")
    assert [kind for _, _, kind in found] == ["url"]  # not also a path inside the URL
    spans = [(start, end) for start, end, _ in facts_of("At 10:30 on 2026-01-02 port 8080.")]
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in pairwise(spans))
    assert len(spans) >= 3


def test_a_note_with_more_kinds_of_fact_is_more_specific() -> None:
    plain = specificity("Always be kind.")
    rich = specificity("Always deploy svc-42 from /srv/app at 09:00 on 2026-01-05.")
    assert 0 < plain < rich
    # A second fact of the same kind adds one, a second kind adds its weight.
    assert score_of([(0, 1, "url"), (2, 3, "url")]) == score_of([(0, 1, "url")]) + 1


def rule_spans(sentence: str) -> list[tuple[int, int]]:
    return [(start, end) for start, end, kind in facts_of(sentence) if kind == "rule"]


def test_a_rule_is_held_by_its_own_word_not_the_clause_mark_before_it() -> None:
    assert facts_of("Yes, never use tabs.") == [(5, 10, "rule")]
    assert rule_spans("Never use tabs.") == [(0, 5)]


def test_a_rule_word_after_a_mark_or_a_leading_word_is_a_rule_and_after_prose_is_not() -> None:
    assert rule_spans("We talked about the deploy at length, and never use tabs.") == [(42, 47)]
    assert rule_spans("It is late and we never deploy.") == [(18, 23)]  # the word just before
    assert rule_spans("Tell X never to do it.") == []  # a name before it: prose
    assert rule_spans("Yes,   never mind.") == [(7, 12)]  # spaces after the mark


def test_a_rule_word_inside_a_long_unbroken_run_is_not_a_clause_start() -> None:
    # The 24 characters before the word are looked at: a run of them without a space is a
    # path or a token, not a clause, once the word is past them.
    at_24 = "a" * 23 + "(never do that"
    assert rule_spans(at_24) == [(24, 29)]
    at_25 = "a" * 24 + "(never do that"
    assert rule_spans(at_25) == []
    spaced = "b " + "a" * 23 + "(never do that"  # the space is 25 characters back
    assert rule_spans(spaced) == []
    # A word skipped in a run does not end the search for the next one.
    assert rule_spans("x=" * 15 + "never. Then always check it") == [(42, 48)]


def test_plain_capitals_are_not_names_but_other_acronyms_are() -> None:
    assert kinds("That is OK with me.") == []
    assert kinds("We said OK and then AWS took it.") == ["proper"]
    assert facts_of("We deploy it on AWS today.") == [(16, 19, "proper")]


def test_facts_that_touch_are_both_kept() -> None:
    assert facts_of("`ls``pwd`") == [(0, 4, "code"), (4, 9, "code")]


def test_the_kinds_tried_on_a_sentence_follow_cheap_looks_at_it() -> None:
    from app.core.compaction.notes.facts import _kinds_to_try

    tried = _kinds_to_try
    assert tried("plain words only") == []
    # A date: a weekday or a month named alone, or a digit beside "-", "/", ":" or a hint.
    assert tried("see you on monday") == ["date"]
    assert tried("back in march") == ["date"]
    assert "date" not in tried("a well-known thing")
    assert "date" not in tried("3 apples")
    assert "date" in tried("3-4 apples")
    assert "date" in tried("3/4 apples")
    assert "date" in tried("3:4 apples")
    assert "date" in tried("in 1999 apples")
    # A path: a slash, a backslash or a dotted word.
    assert "path" in tried("a/b")
    assert "path" in tried("C:\\x")
    assert tried("see app.main") == ["path", "ident"]
    assert "path" not in tried("a b. c")
    # An identifier: a digit with a "-" or seven hex characters; a "-" alone is not one.
    assert "ident" not in tried("a well-known thing")
    assert "ident" in tried("svc-42 is up")
    assert "ident" in tried("commit 3abcdef12 here")
    assert "ident" not in tried("commit 3 abc here")
