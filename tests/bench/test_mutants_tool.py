"""The mutation testing command's own rules: which modules it mutates, which it skips, and the
list of equivalent mutants it reads."""

from __future__ import annotations

from bench.mutants import equivalent_mutants, has_functions, own_tests, rule_modules


def test_a_module_with_no_function_is_skipped_and_one_with_a_method_is_not() -> None:
    assert "app/core/recall/results.py" in rule_modules()
    assert not has_functions("app/core/recall/results.py")  # dataclasses only
    assert has_functions("app/core/recall/query.py")
    assert has_functions("app/core/compaction/notes/carryover.py")  # Containment's methods


def test_a_module_runs_against_its_named_tests_or_its_packages_mirror() -> None:
    assert own_tests("app/core/compaction/notes/facts.py") == ("tests/core/compaction/notes/",)
    assert "tests/core/providers/" in own_tests("app/core/providers/errors/table.py")


def test_every_equivalent_mutant_listed_has_its_reason() -> None:
    listed = equivalent_mutants()
    assert listed
    assert all(name.startswith("app.core.") and reason for name, reason in listed.items())


def test_the_functions_mutmut_cannot_see_reached_are_given_their_tests() -> None:
    from bench.mutants import UNRECORDED, test_ids

    files = UNRECORDED["app.core.tokens.counter.xǁTokenCounterǁprecount"]
    ids = test_ids(files[0])
    assert "tests/core/tokens/test_precount.py::test_the_newest_64_long_counts_are_kept" in ids
    assert all(i.startswith("tests/core/tokens/test_precount.py::test_") for i in ids)
