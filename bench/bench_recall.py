"""Recall: the full-text index of a 5 000-turn, 2.5 M-token session (the resume benchmark's
rollout, two compactions inside).

Figures: building the index from scratch from the rollout (read and index every record), against
``json.loads`` of every line of the same file; a search through the recall tool (sanitising,
the in-view digests of the model's view, FTS5, excerpts within the budget), median and slowest
of varied queries; indexing a new turn (its records appended to the rollout, then indexed); the
index's size on disk against the rollout's.

Targets: a query ≤ 50 ms; a new turn indexed ≤ 5 ms; the build ≤ 3 s; the index ≤ the rollout.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from pathlib import Path
from typing import Any

from bench._common import Target, main, median_time, result, temp_dir

QUERIES = [
    "limit", "count", "tokenizer budget", "the quick answer", "ORCHARD_SHARD_COUNT",
    "svc-orchard-41", "window size", "summary of the plan", "why did we choose", "error",
    '"unbalanced quote', "NEAR OR *", "return value", "files read", "zzzz-not-there",
]
NEW_TURNS = 40


def _reference(path: Path) -> list[Any]:
    with open(path, "rb") as file:
        return [json.loads(line) for line in file]


def _view(path: Path, items: int) -> list[dict[str, Any]]:
    """The last ``items`` items of the rollout, standing for the model's view."""
    from app.core.rollout.store import read_rollout

    records, _ = read_rollout(path)
    found = [r.payload["item"] for r in records if r.type == "response_item"]
    return found[-items:]


def run(scale: float = 1.0) -> dict[str, Any]:
    """Measure the recall index; see the module docstring."""
    from app.core.items import assistant_message, user_message
    from app.core.recall import RecallTool
    from app.core.rollout.store import RolloutWriter, read_rollout
    from app.core.tokens.counter import TokenCounter
    from bench._common import warm_counter
    from bench.bench_resume import make_rollout

    repeat = 3 if scale >= 0.5 else 1
    with temp_dir() as root:
        data_dir = root / "data"
        stats = make_rollout(data_dir, scale)
        path: Path = stats.path
        rollout_bytes = path.stat().st_size
        reference_s, _ = median_time(lambda: _reference(path), repeat)
        counter: TokenCounter = warm_counter()
        view = _view(path, 400)

        def fresh_tool() -> RecallTool:
            return RecallTool(path, history=lambda: view, window=lambda: 128_000,
                              count=counter.count)

        builds: list[float] = []
        for _ in range(repeat):
            tool = fresh_tool()
            tool.index.path.unlink(missing_ok=True)
            began = time.perf_counter()
            tool.index.flush()  # not told what the rollout holds: reads and indexes it all
            builds.append(time.perf_counter() - began)
            tool.index.close()
        build_s = statistics.median(builds)
        index_bytes = tool.index.path.stat().st_size

        # Searches through the tool, on the index as a resumed session finds it.
        records = len(read_rollout(path)[0])
        tool = fresh_tool()
        writer = RolloutWriter(path)
        tool.index.follow(writer, records=records)
        tool.index.flush()
        per_query: list[float] = []
        found = 0

        async def searches() -> None:
            nonlocal found
            for _ in range(repeat):
                for query in QUERIES:
                    began = time.perf_counter()
                    answer = await tool.search(query)
                    per_query.append(time.perf_counter() - began)
                    found += answer.output.startswith(("No earlier", "1 ", "2 ", "3 ", "4 ", "5 "))

        asyncio.run(searches())
        query_s = statistics.median(per_query)

        # A new turn: its records appended (the writer tells the index), then indexed.
        per_turn: list[float] = []
        for n in range(NEW_TURNS):
            user = user_message(f"New question {n} about the shard limiter and svc-orchard-{n}")
            answer = assistant_message("An answer of about five hundred tokens. " * 45)
            began = time.perf_counter()
            writer.append("response_item", {"item": user, "turn_id": f"new{n}"})
            writer.append("response_item", {"item": answer, "turn_id": f"new{n}"})
            writer.append("event", {"kind": "token_count", "total": n})
            tool.index.flush()
            per_turn.append(time.perf_counter() - began)
        turn_s = statistics.median(per_turn)
        tool.index.close()
        writer.close()

    targets = [
        Target("query (median)", query_s * 1000, 50.0, "ms"),
        Target("query (slowest)", max(per_query) * 1000, 50.0, "ms"),
        Target("index a new turn", turn_s * 1000, 5.0, "ms"),
        Target("build from scratch", build_s, 3.0, "s"),
        Target("index size / rollout size", index_bytes / rollout_bytes, 1.0, "×"),
    ]
    return result(
        "recall",
        workload=f"{stats.turns}-turn rollout, {stats.tokens / 1e6:.2f} M tokens, "
        f"{stats.compactions} compactions, {rollout_bytes / 1e6:.1f} MB; {len(QUERIES)} queries",
        reference="json.loads of every line of the same file",
        figure="index build / json.loads",
        measured=build_s,
        reference_value=reference_s,
        targets=targets,
        extra={
            "turns": stats.turns,
            "records": records,
            "rollout_mb": round(rollout_bytes / 1e6, 2),
            "index_mb": round(index_bytes / 1e6, 2),
            "build_runs_s": [round(x, 3) for x in builds],
            "query_median_ms": round(query_s * 1000, 2),
            "query_max_ms": round(max(per_query) * 1000, 2),
            "queries_answered": found,
            "new_turn_median_ms": round(turn_s * 1000, 3),
            "new_turn_max_ms": round(max(per_turn) * 1000, 3),
        },
        scale=scale,
    )


if __name__ == "__main__":
    main(run)
