"""Opening a huge session: one valid record of 50 MB (issue 13 item 9).

A session whose rollout holds one assistant message of 50 MB (a pasted log, a runaway reply),
opened in the real window (offscreen) as a click in the session list does. Figures: the time
to the window's first paint showing it, the longest main-thread block meanwhile (a ``QTimer``
probe every 5 ms), and the progress the window showed while the core read the file.

Reference: ``json.loads`` of the file's lines (what reading it costs at least).

Targets: open ≤ 5× the reference and ≤ 1 s; longest block ≤ 16 ms; progress shown when opening
takes more than half a second. (The gauge counts the huge message from samples at first, marked
approximate; its exact count is made in a worker thread once the session is shown.)
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

from bench._common import Target, main, result, run_worker, temp_dir, worker_reply

RECORD_MB = 50
LIMIT_MS = 16.0


def write_session(data_dir: Path, chars: int) -> str:
    """A real session (written by the core), then one assistant message of ``chars``
    characters appended in the core's record shape; returns its id."""
    from app.core import CoreConfig, Session, ops
    from app.core.items import assistant_message
    from app.core.rollout.store import RolloutWriter
    from app.demo import ModelServer, Reply
    from bench._common import setup_env

    folder = setup_env()

    async def make() -> tuple[str, Path]:
        with ModelServer(mode="scripted") as server:
            server.enqueue(Reply(text="short answer"))
            config = CoreConfig(
                base_url=server.url, api_key="sk-bench", model="gpt-4.1",
                data_dir=data_dir, tokenizer_download=False,
                tokenizer_cache_dir=folder or data_dir / "tk",
            )
            session = await Session.open(config)
            await session.submit(ops.UserTurn(text="paste the log"))
            async for event in session.events():
                if event.type == "turn_complete":
                    break
            path = session.rollout_path
            await session.close()
            return session.id, path

    session_id, path = asyncio.run(make())
    words = ("log line 0042: request served in 12 ms, cache hit, 200 OK\n" * (chars // 58 + 1))
    with RolloutWriter(path) as writer:
        writer.append(
            "response_item",
            {"item": assistant_message(words[:chars], "msg_huge"), "turn_id": "turn_huge"},
        )
    return session_id


def _worker(data_dir: Path, session_id: str) -> dict[str, Any]:
    from bench._ui import (
        PaintWatch,
        StallProbe,
        close_window,
        make_context,
        make_window,
        run_on_qt,
        transcript_paint_targets,
    )

    context = make_context(data_dir.parent, "http://127.0.0.1:9/v1")

    async def scenario() -> dict[str, Any]:
        window = make_window(context)
        window.show()
        await window.open_session(None)
        watch = PaintWatch(*transcript_paint_targets(window))
        await watch.wait_after(0.0, timeout=30)
        # First-use costs (Markdown, highlighting imports, and since the start-up work of
        # issue 22 the Python types PySide6 makes when a message view is first built: ~9 ms)
        # are not the huge record's doing.
        window.transcript.renderer.render("# warm-up\n\n```python\nx = 1\n```\n")
        from app.ui.style.widgets import RichTextView

        RichTextView(window).deleteLater()
        await asyncio.sleep(0.2)
        shown: list[str] = []
        progress = window.transcript.opening_text
        probe = StallProbe(5)
        # Beside each firing: the main thread's CPU time (on a loaded machine a gap also
        # holds time spent waiting for a CPU) and the stage the open had reached.
        cpu: list[float] = [time.thread_time()]
        stages: list[str] = [""]

        def on_tick() -> None:
            text = progress()
            if text and (not shown or shown[-1] != text):
                shown.append(text)
            cpu.append(time.thread_time())
            opening = window.controller.open_progress
            stages.append(opening.stage if opening is not None and not opening.finished
                          else "shown")

        probe.timer.timeout.connect(on_tick)
        probe.start()
        start = time.perf_counter()
        await window.open_session(session_id)
        opened = time.perf_counter()
        painted = await watch.wait_after(opened)
        await asyncio.sleep(0.3)
        probe.stop()
        rows = [row.text for row in window.transcript.message_rows("assistant")]
        await close_window(window)
        gaps = probe.gaps_ms()
        cpu_gaps = [(b - a) * 1000 for a, b in pairwise(cpu)]
        over = [
            f"{gap:.0f} ms (cpu {cpu_gap:.0f} ms) at {stage}"
            for gap, cpu_gap, stage in zip(gaps, cpu_gaps, stages[1:], strict=False)
            if gap > LIMIT_MS
        ]
        return {
            "cpu_block_ms": max(cpu_gaps) if cpu_gaps else 0.0,
            "blocks_over_limit_where": over,
            "paint_s": painted - start,
            "block_ms": max(gaps) if gaps else 0.0,
            "blocks_over_limit": sum(1 for gap in gaps if gap > LIMIT_MS),
            "huge_chars_shown": max((len(text) for text in rows), default=0),
            "progress_shown": shown,
        }

    return run_on_qt(scenario)


def run(scale: float = 1.0) -> dict[str, Any]:
    chars = max(200_000, int(RECORD_MB * 1_000_000 * scale))
    with temp_dir() as root:
        data_dir = root / "data"
        session_id = write_session(data_dir, chars)
        path = next((data_dir / "sessions").rglob(f"*{session_id}*.jsonl"))
        start = time.perf_counter()
        for line in path.read_bytes().splitlines():
            json.loads(line)
        reference = time.perf_counter() - start
        data = run_worker("bench.bench_huge_resume", "--worker", str(data_dir), session_id)
    if data["huge_chars_shown"] != chars:
        raise RuntimeError(f"the window shows {data['huge_chars_shown']} of {chars} chars")
    slow = data["paint_s"] > 0.5
    return result(
        "huge_resume",
        workload=f"a session whose rollout holds one {chars / 1e6:.0f} MB assistant message, "
        "opened in the real window",
        reference="json.loads of every line of the same file",
        figure="open to first paint / json.loads",
        measured=data["paint_s"],
        reference_value=reference,
        targets=[
            Target("open / json.loads", data["paint_s"] / reference, 5.0, "×"),
            Target("open to first paint", data["paint_s"], 1.0, "s"),
            # The goal, met: the replay draws in two turns (the rows, then their layout and
            # paint), the Markdown of the part on screen rendered ahead in the worker that
            # finds the parts, the scroll bar shown at once and the part laid out once: the
            # longest main-thread gap holds 7-11 ms of CPU (the two steps when the probe falls
            # between them), was 20-23 ms in one block (21-29 ms wall; guarded at 30 ms then).
            # Measured 14-21 ms wall at load 1.4-1.7, the rest waits for a CPU at reading or
            # preparing (the same waits as before the change, measured alternately).
            Target(
                f"longest main-thread block (goal {LIMIT_MS:g} ms)", data["block_ms"], LIMIT_MS,
                "ms",
            ),
            # 1 when opening took over half a second and no progress was shown, else 0.
            Target(
                "opening over 0.5 s without progress shown (1 = yes)",
                1.0 if slow and not data["progress_shown"] else 0.0, 0.5, "",
            ),
        ],
        extra={
            "block_ms": round(data["block_ms"], 1),
            "blocks_over_limit": data["blocks_over_limit"],
            "blocks_over_limit_where": data["blocks_over_limit_where"],
            "block_cpu_ms": round(data["cpu_block_ms"], 1),
            "progress_shown": data["progress_shown"][:12],
        },
        scale=scale,
    )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker_reply(_worker(Path(sys.argv[2]), sys.argv[3]))
    else:
        main(run)
