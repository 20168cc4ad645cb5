"""The CI guard of ``bench.run --guard``: a figure more than 25 % above its target fails the
run, but only if it is still over when measured a second time."""

from __future__ import annotations

from typing import Any

from bench.run import GUARD_MARGIN, guard, over_guard


def _result(name: str, value: float, limit: float = 100.0) -> dict[str, Any]:
    return {
        "name": name,
        "targets": [{"what": "added", "value": value, "limit": limit, "unit": "ms",
                     "pass": value <= limit}],
    }


def test_a_figure_within_the_margin_passes_the_guard_even_over_its_target() -> None:
    assert over_guard(_result("a", 100 * (1 + GUARD_MARGIN))) == []
    assert over_guard(_result("a", 50)) == []
    failures = over_guard(_result("a", 126))
    assert len(failures) == 1 and "126ms" in failures[0] and "25%" in failures[0]


def test_an_error_is_a_guard_failure() -> None:
    assert over_guard({"name": "a", "error": "exit 1: boom"}) == ["a: exit 1: boom"]


def test_a_figure_over_the_guard_is_measured_once_more_and_the_second_result_counts() -> None:
    results = [_result("fine", 10), _result("noisy", 200), _result("slow", 300)]
    second = {"noisy": _result("noisy", 90), "slow": _result("slow", 290)}
    reruns: list[str] = []

    def rerun(name: str) -> dict[str, Any]:
        reruns.append(name)
        return second[name]

    failures = guard(results, ["fine", "noisy", "slow"], rerun)
    assert reruns == ["noisy", "slow"]  # each once; the passing one not at all
    assert results[1] is second["noisy"] and results[2] is second["slow"]
    assert len(failures) == 1 and failures[0].startswith("slow:")
