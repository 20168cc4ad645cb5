"""Run every benchmark, each in its own interpreter, and print the table.

    python -m bench.run            # full workloads (several minutes; the UI ones dominate)
    python -m bench.run --quick    # tiny workloads, a smoke run (about a minute)
    python -m bench.run --only resume,tokens --json results.json
    python -m bench.run --guard    # what CI runs: exit 1 when a figure is over 125 % of its
                                   # target twice in a row (it is measured again once)

Each benchmark runs as ``python -m bench.<module> --json --scale X`` so memory and start-up
figures are not polluted by another benchmark's leftovers.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench._common import REPO, format_amount, setup_env

BENCHMARKS: dict[str, str] = {
    "streaming": "bench.bench_streaming",
    "resume": "bench.bench_resume",
    "compaction": "bench.bench_compaction",
    "tokens": "bench.bench_tokens",
    "startup": "bench.bench_startup",
    "transcript_memory": "bench.bench_transcript_memory",
    "soak": "bench.bench_soak",
    "long_lines": "bench.bench_long_lines",
    "huge_resume": "bench.bench_huge_resume",
    "recall": "bench.bench_recall",
    "retention": "bench.bench_retention",
    "mcp": "bench.bench_mcp",
    "branches": "bench.bench_branches",
    "attachments": "bench.bench_attachments",
    "branch_window": "bench.bench_branch_window",
}
# Run with ``--only`` but not by default, so not guarded in CI: their goals are not met yet
# (see bench/README.md).
NOT_YET_GUARDED: dict[str, str] = {}
QUICK_SCALE = 0.01
# ``--guard`` (CI): a figure more than this share above its target fails the run.
GUARD_MARGIN = 0.25


def run_one(module: str, scale: float, timeout: float) -> dict[str, Any]:
    """One benchmark in a fresh interpreter; its result dict (or an error entry)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    setup_env()
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        env["TIKTOKEN_CACHE_DIR"] = os.environ["TIKTOKEN_CACHE_DIR"]
    started = time.perf_counter()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", module, "--json", "--scale", str(scale)],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"name": module, "error": f"timed out after {timeout:.0f} s"}
    wall = time.perf_counter() - started
    for line in proc.stdout.splitlines():
        if line.startswith("BENCH-RESULT "):
            res: dict[str, Any] = json.loads(line[len("BENCH-RESULT ") :])
            res["wall_s"] = wall
            return res
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-15:]
    return {"name": module, "error": f"exit {proc.returncode}: " + " | ".join(tail)}


def _targets_text(res: dict[str, Any]) -> str:
    parts = []
    for target in res["targets"]:
        mark = "ok" if target["pass"] else "FAIL"
        parts.append(f"{target['what']} {target['value']:.3g}{target['unit']} "
                     f"(≤{target['limit']:g}) {mark}")
    return "; ".join(parts)


def table(results: list[dict[str, Any]]) -> str:
    """A Markdown table of the results."""
    lines = [
        "| figure | measured | reference | ratio | targets |",
        "|---|---|---|---|---|",
    ]
    for res in results:
        if "error" in res:
            lines.append(f"| {res['name']} | error | | | {res['error'][:200]} |")
            continue
        unit = res["unit"]
        lines.append(
            f"| {res['name']}: {res['figure']} | {format_amount(res['measured'], unit)} | "
            f"{format_amount(res['reference_value'], unit)} | {res['ratio']:.3g}× | "
            f"{_targets_text(res)} |"
        )
    return "\n".join(lines)


def over_guard(res: dict[str, Any], margin: float = GUARD_MARGIN) -> list[str]:
    """What in ``res`` is more than ``margin`` above its target, in words (an error counts)."""
    if "error" in res:
        return [f"{res['name']}: {res['error']}"]
    return [
        f"{res['name']}: {target['what']} {target['value']:.3g}{target['unit']} is more than "
        f"{margin:.0%} above its target ({target['limit']:g}{target['unit']})"
        for target in res["targets"]
        if target["value"] > target["limit"] * (1 + margin)
    ]


def _run_and_report(name: str, scale: float, timeout: float) -> dict[str, Any]:
    print(f"running {name} (scale {scale:g})…", file=sys.stderr, flush=True)
    res = run_one({**BENCHMARKS, **NOT_YET_GUARDED}[name], scale, timeout)
    if "error" in res:
        print(f"  {name}: {res['error']}", file=sys.stderr, flush=True)
    else:
        print(f"  {name}: ratio {res['ratio']:.3g}, "
              f"{'pass' if res['pass'] else 'FAIL'} ({res['wall_s']:.0f} s)",
              file=sys.stderr, flush=True)
    return res


def best_of(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """``second`` with each of its figures the better of the two measurements. A busy machine
    only ever adds time, so the lower figure is the nearer one; each figure is judged on its
    own (a stall measured over once and a ratio measured over in the other run are both
    within). An error in either counts."""
    if "error" in first or "error" in second:
        return first if "error" in first else second
    firsts = {target["what"]: target for target in first["targets"]}
    targets = []
    for target in second["targets"]:
        other = firsts.get(target["what"])
        if other is not None and other["value"] < target["value"]:
            target = {**target, "value": other["value"], "pass": other["pass"]}
        targets.append(target)
    return {**second, "targets": targets, "pass": all(t["pass"] for t in targets)}


def guard(
    results: list[dict[str, Any]],
    names: list[str],
    rerun: Callable[[str], dict[str, Any]],
    margin: float = GUARD_MARGIN,
) -> list[str]:
    """The CI guard: every figure within ``margin`` of its target. A benchmark with a figure
    over it is measured once more (the machine may have been busy); each figure then counts
    at the better of its two measurements (``best_of``, which replaces the first in
    ``results``), and what is still over is returned."""
    failures: list[str] = []
    for index, name in enumerate(names):
        over = over_guard(results[index], margin)
        if not over:
            continue
        # What the first measurement found is printed: the table shows the better of the two.
        print(f"  {name} is over the guard ({'; '.join(over)}); measuring it once more",
              file=sys.stderr, flush=True)
        results[index] = best_of(results[index], rerun(name))
        failures.extend(over_guard(results[index], margin))
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run Coco's benchmarks and print the table.")
    parser.add_argument("--quick", action="store_true", help=f"tiny inputs (scale {QUICK_SCALE})")
    parser.add_argument("--scale", type=float, help="workload scale (default 1, full size)")
    parser.add_argument(
        "--only", help="comma-separated names: " + ", ".join([*BENCHMARKS, *NOT_YET_GUARDED])
    )
    parser.add_argument("--json", type=Path, help="also write every result to this file")
    parser.add_argument("--timeout", type=float, default=1800.0, help="per benchmark, seconds")
    parser.add_argument(
        "--guard", action="store_true",
        help=f"fail (exit 1) when a figure is more than {GUARD_MARGIN:.0%} above its target "
        "after one re-measurement (what CI runs)",
    )
    args = parser.parse_args(argv)
    scale = args.scale if args.scale is not None else (QUICK_SCALE if args.quick else 1.0)
    names = list(BENCHMARKS) if not args.only else [n.strip() for n in args.only.split(",")]
    unknown = [n for n in names if n not in BENCHMARKS and n not in NOT_YET_GUARDED]
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)}")
    results = [_run_and_report(name, scale, args.timeout) for name in names]
    failures: list[str] = []
    if args.guard:
        failures = guard(
            results, names, lambda name: _run_and_report(name, scale, args.timeout)
        )
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    if args.guard:
        if failures:
            print(f"\nBenchmark guard FAILED ({GUARD_MARGIN:.0%} above a target, measured "
                  "twice):")
            for failure in failures:
                print(f"  - {failure}")
            return 1
        print(f"\nBenchmark guard: every figure within {GUARD_MARGIN:.0%} of its target.")
        return 0
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
