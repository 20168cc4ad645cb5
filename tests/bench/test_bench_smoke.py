"""Each benchmark runs end to end on tiny inputs and returns a well-formed result.

No timing is asserted: targets are the benchmarks' business (``python -m bench.run``), and a
loaded test machine must not fail the suite. What is checked is that every figure is measured
(positive amounts), its ratio is computed from the two, and every target is reported.
"""

from __future__ import annotations

import importlib
import math
from typing import Any

import pytest

TINY = 0.01
MODULES = [
    "bench.bench_tokens",
    "bench.bench_compaction",
    "bench.bench_resume",
    "bench.bench_streaming",
    "bench.bench_startup",
    "bench.bench_transcript_memory",
    "bench.bench_soak",
    "bench.bench_long_lines",
    "bench.bench_huge_resume",
    "bench.bench_recall",
    "bench.bench_retention",
    "bench.bench_branches",
    "bench.bench_branch_window",
    "bench.bench_mcp",
]
KEYS = {
    "name", "workload", "reference", "figure", "unit", "measured", "reference_value", "ratio",
    "targets", "pass", "extra", "scale",
}


def check_result(res: dict[str, Any]) -> None:
    assert KEYS <= set(res), f"missing keys: {KEYS - set(res)}"
    assert res["unit"] in ("s", "bytes")
    assert res["measured"] > 0 and math.isfinite(res["measured"])
    assert res["reference_value"] > 0 and math.isfinite(res["reference_value"])
    assert res["ratio"] == pytest.approx(res["measured"] / res["reference_value"])
    assert res["targets"], "every figure has at least one target"
    for target in res["targets"]:
        assert {"what", "value", "limit", "unit", "pass"} <= set(target)
        assert target["value"] >= 0 and target["limit"] > 0
        assert target["pass"] == (target["value"] <= target["limit"])
    assert res["pass"] == all(t["pass"] for t in res["targets"])
    assert isinstance(res["extra"], dict)


@pytest.mark.slow
@pytest.mark.parametrize("module", MODULES)
def test_benchmark_runs_on_tiny_input(module: str) -> None:
    bench = importlib.import_module(module)
    res = bench.run(scale=TINY)
    check_result(res)
    assert res["scale"] == TINY


def test_run_table_lists_every_result() -> None:
    from bench.run import table

    ok = {
        "name": "resume", "figure": "resume / json.loads", "unit": "s", "measured": 0.5,
        "reference_value": 0.25, "ratio": 2.0,
        "targets": [{"what": "ratio", "value": 2.0, "limit": 3.0, "unit": "×", "pass": True}],
    }
    broken = {"name": "bench.bench_startup", "error": "exit 1: boom"}
    text = table([ok, broken])
    assert "| resume: resume / json.loads | 500.00 ms | 250.00 ms | 2× |" in text
    assert "bench.bench_startup | error" in text and "boom" in text
