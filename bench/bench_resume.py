"""Resume: open a 5 000-turn rollout (about 2.5 M tokens, two compactions inside).

Figure: ``Session.open(config, session_id=...)`` until its first event, against ``json.loads`` of
every line of the same file (the parsed lines kept in a list, as a resume must keep them), in the
same fresh interpreter; peak memory of a second fresh interpreter that only resumes. When the
window exists (``app.ui``), the figure becomes the time from the call to the first paint of the
window showing that session (the median of three fresh interpreters, the highest of whose peak
RSS is then the memory figure); the core-only figures stay beside it.

Targets: resume ≤ 2× the reference (the core alone, to its first event, ≤ 1×) and ≤ 2 s; peak
memory ≤ 400 MB.

The tokenizer is loaded before timing (exact counts: the costlier case, and the usual one when a
session is opened from the sidebar after start-up).
"""

from __future__ import annotations

import asyncio
import gc
import json
import sys
import time
from pathlib import Path
from typing import Any

from bench._common import (
    Target,
    TextMaker,
    core_config,
    current_rss_mb,
    main,
    median_time,
    peak_rss_mb,
    result,
    run_worker,
    temp_dir,
    warm_counter,
    worker_reply,
)

FULL_TURNS = 5000
USER_TOKENS = 55
ANSWER_TOKENS = 410  # with a tool call every 10th turn: ≈ 500 tokens a turn, 2.5 M in all
# The window's figure is the median of this many fresh interpreters (the reference's is the
# median of five runs): one run, as before, was 1.8-2.8x on the same code and machine.
PAINT_RUNS = 3


def make_rollout(data_dir: Path, scale: float) -> Any:
    """Write the big rollout into ``data_dir/sessions``; returns its ``RolloutStats``."""
    from bench._rollout import RolloutSynth

    counter = warm_counter()
    turns = max(12, int(FULL_TURNS * scale))
    synth = RolloutSynth(TextMaker(seed=5, counter=counter), counter)
    return synth.write(
        data_dir / "sessions",
        turns=turns,
        user_tokens=USER_TOKENS,
        answer_tokens=ANSWER_TOKENS,
        compact_at=(turns // 3, 2 * turns // 3),
    )


def _reference(path: Path) -> list[Any]:
    with open(path, "rb") as file:
        return [json.loads(line) for line in file]


async def _resume_to_first_event(config: Any, session_id: str) -> tuple[float, Any]:
    from app.core import Session

    start = time.perf_counter()
    session = await Session.open(config, session_id=session_id)
    async for _event in session.events():
        break
    elapsed = time.perf_counter() - start
    return elapsed, session


def _worker_time(data_dir: Path, session_id: str, repeat: int) -> dict[str, Any]:
    from app.core.rollout.store import rollout_path

    warm_counter()
    config = core_config("http://127.0.0.1:9/v1", data_dir)
    path = rollout_path(config.sessions_dir, session_id)
    reference, ref_runs = median_time(lambda: _reference(path), repeat)

    async def resume_runs() -> list[float]:
        runs: list[float] = []
        for _ in range(repeat):
            elapsed, session = await _resume_to_first_event(config, session_id)
            runs.append(elapsed)
            await session.close()
            del session
            gc.collect()
        return runs

    runs = asyncio.run(resume_runs())
    runs_sorted = sorted(runs)
    return {
        "reference_s": reference,
        "reference_runs": ref_runs,
        "resume_s": runs_sorted[len(runs) // 2],
        "resume_runs": runs,
    }


def _worker_memory(data_dir: Path, session_id: str) -> dict[str, Any]:
    warm_counter()
    config = core_config("http://127.0.0.1:9/v1", data_dir)
    before = current_rss_mb()

    async def once() -> dict[str, Any]:
        elapsed, session = await _resume_to_first_event(config, session_id)
        held = current_rss_mb()
        await session.close()
        return {"elapsed_s": elapsed, "held_mb": held}

    out = asyncio.run(once())
    out.update(baseline_mb=before, peak_mb=peak_rss_mb())
    return out


def _worker_paint(data_dir: Path, session_id: str) -> dict[str, Any]:
    from bench._ui import resume_to_first_paint

    warm_counter()
    return resume_to_first_paint(data_dir, session_id)


def _median_paint(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run with the median time to first paint (each in a fresh interpreter, a first open
    of the process), with every run's time and the highest peak memory of them."""
    ordered = sorted(runs, key=lambda run: run["paint_s"])
    median = dict(ordered[len(ordered) // 2])
    median["paint_runs_s"] = [run["paint_s"] for run in runs]
    median["peak_mb"] = max(run["peak_mb"] for run in runs)
    return median


def ui_available() -> bool:
    """True when ``app.ui`` has a main window the benchmarks know how to build."""
    try:
        from bench._ui import main_window_class

        return main_window_class() is not None
    except Exception:  # noqa: BLE001 - any import problem means "not yet"
        return False


def run(scale: float = 1.0) -> dict[str, Any]:
    """Measure resume against parsing the same file; see the module docstring."""
    repeat = 5 if scale >= 0.5 else 3
    with temp_dir() as root:
        data_dir = root / "data"
        stats = make_rollout(data_dir, scale)
        timing = run_worker(
            "bench.bench_resume", "--worker", "time", str(data_dir), stats.session_id, str(repeat)
        )
        memory = run_worker(
            "bench.bench_resume", "--worker", "memory", str(data_dir), stats.session_id
        )
        paint: dict[str, Any] | None = None
        paint_error: str | None = None
        if ui_available():
            try:
                paint = _median_paint([
                    run_worker(
                        "bench.bench_resume", "--worker", "paint", str(data_dir), stats.session_id
                    )
                    for _ in range(PAINT_RUNS if scale >= 0.5 else 1)
                ])
            except Exception as exc:  # noqa: BLE001 - report, do not hide the core figures
                paint_error = str(exc).splitlines()[0][:300]
    resume_s = timing["resume_s"]
    reference_s = timing["reference_s"]
    measured = paint["paint_s"] if paint else resume_s
    # With the window, peak memory is the window process's (it resumed the same session).
    peak = paint["peak_mb"] if paint else memory["peak_mb"]
    targets = [
        # The goal (issue 22), met: 1.69-1.88 in 5 of 6 runs at load 0.8 (one 2.13), 1.54-1.87
        # on a loaded 2-core machine (load 2.5-7.5),
        # 2.23-2.39 before the window stopped collecting while it opens a session and the
        # replay stopped copying every transcript entry (it was guarded at 2.5 until then).
        Target("resume / json.loads", measured / reference_s, 2.0, "×"),
        Target("resume, core alone / json.loads", resume_s / reference_s, 1.0, "×"),
        Target("resume time", measured, 2.0, "s"),
        Target(
            "peak memory, window process" if paint else "peak memory, core process", peak, 400.0,
            "MB",
        ),
    ]
    extra: dict[str, Any] = {
        "turns": stats.turns,
        "records": stats.records,
        "file_mb": round(stats.bytes / 1e6, 2),
        "tokens_written": stats.tokens,
        "compactions": stats.compactions,
        "history_tokens_at_end": stats.history_tokens,
        "resume_to_first_event_s": round(resume_s, 4),
        "resume_runs_s": [round(x, 4) for x in timing["resume_runs"]],
        "reference_runs_s": [round(x, 4) for x in timing["reference_runs"]],
        "core_memory_baseline_mb": round(memory["baseline_mb"], 1),
        "core_memory_held_mb": round(memory["held_mb"], 1),
        "core_memory_peak_mb": round(memory["peak_mb"], 1),
    }
    if paint:
        extra.update({f"ui_{k}": (round(v, 4) if isinstance(v, float) else v)
                      for k, v in paint.items()})
        extra["ui_paint_runs_s"] = [round(x, 4) for x in paint["paint_runs_s"]]
    elif paint_error:
        extra["ui_error"] = paint_error
    else:
        extra["ui"] = "no main window in app.ui yet: figure is resume to first event"
    return result(
        "resume",
        workload=f"{stats.turns}-turn rollout, {stats.tokens / 1e6:.2f} M tokens, "
        f"{stats.compactions} compactions, {stats.bytes / 1e6:.1f} MB",
        reference="json.loads of every line of the same file",
        figure="resume to first paint / json.loads" if paint else "resume to first event / json.loads",
        measured=measured,
        reference_value=reference_s,
        targets=targets,
        extra=extra,
        scale=scale,
    )


def _worker_main(argv: list[str]) -> None:
    mode, data_dir, session_id = argv[0], Path(argv[1]), argv[2]
    if mode == "time":
        worker_reply(_worker_time(data_dir, session_id, int(argv[3])))
    elif mode == "memory":
        worker_reply(_worker_memory(data_dir, session_id))
    elif mode == "paint":
        worker_reply(_worker_paint(data_dir, session_id))
    else:
        raise SystemExit(f"unknown worker mode {mode!r}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        _worker_main(sys.argv[2:])
    else:
        main(run)
