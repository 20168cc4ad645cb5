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
