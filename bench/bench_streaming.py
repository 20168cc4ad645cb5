"""Streaming: a 50 000-token Markdown reply, streamed as fast as the offline server can, rendered
by the real window (offscreen Qt).

Figure: from ``window.send_message(...)`` until the window's first paint after the turn
completed (the whole reply on screen), against the same stream consumed by the bare ``openai``
client with no UI (``responses.create(stream=True)``, each SSE event decoded with ``json.loads``:
the least any consumer does; iterating the SDK's typed event objects is slower and is shown
beside it), in the same fresh interpreter, runs alternating, medians compared. The server runs in its own process,
one delta per ~token (4 characters).

Second figure: the longest main-thread stall during the stream, from a ``QTimer`` probe firing
every 5 ms (the largest gap between two firings). Beside it (``stall_cpu_ms_per_run``), the
main thread's CPU time in its longest block: on a loaded machine a gap also holds the time the
process waited for a CPU.

Targets: ratio ≤ 1.25; longest stall ≤ 16 ms.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

from bench._common import (
    MODEL,
    Target,
    TextMaker,
    main,
    result,
    run_worker,
    temp_dir,
    warm_counter,
    worker_reply,
)

FULL_TOKENS = 50_000
CHUNK_CHARS = 4  # about one token per delta, as the API streams
PROMPT = "Write the full report, with every section."


def make_reply(tokens: int, counter: Any) -> str:
    """A long Markdown answer: sections of headings, prose, lists and code."""
    text = TextMaker(seed=3, counter=counter)
    sections = max(1, tokens // 500)
    return "\n\n".join(text.markdown(tokens // sections) for _ in range(sections))


async def _bare_stream(url: str, typed: bool) -> tuple[float, int]:
    """One stream through the bare client: each SSE event decoded with ``json.loads``
    (``typed=False``, the reference: the least any consumer does), or iterated as the SDK's
    typed event objects (``typed=True``, shown beside it)."""
    import json

    import openai

    client = openai.AsyncOpenAI(base_url=url, api_key="sk-bench", max_retries=0)
    chars = 0
    start = time.perf_counter()
    stream = await client.responses.create(
        model=MODEL,
        instructions="You are Coco, a helpful assistant.",
        input=[{"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": PROMPT}]}],
        stream=True,
        store=False,
    )
    if typed:
        async for event in stream:
            if event.type == "response.output_text.delta":
                chars += len(event.delta)
    else:
        async for line in stream.response.aiter_lines():
            if line.startswith("data: "):
                event = json.loads(line[6:])
                if event.get("type") == "response.output_text.delta":
                    chars += len(event["delta"])
        await stream.close()
    elapsed = time.perf_counter() - start
    await client.close()
    return elapsed, chars


async def _window_stream(window: Any, reply: str) -> dict[str, Any]:
    from bench._ui import PaintWatch, StallProbe, transcript_paint_targets

    await window.open_session(None)
    await asyncio.sleep(0.05)
    done = asyncio.Event()
    deltas = 0

    def on_event(event: Any) -> None:
        nonlocal deltas
        if event.type == "agent_message_delta":
            deltas += 1
        elif event.type == "turn_complete":
            done.set()

    window.bridge.event_received.connect(on_event)
    watch = PaintWatch(*transcript_paint_targets(window))
    probe = StallProbe(5)
    # Beside each firing, the main thread's CPU time: on a loaded machine a wall-clock gap
    # also holds the time the process waited for a CPU, which no code of Coco's can shorten.
    cpu: list[float] = []
    probe.timer.timeout.connect(lambda: cpu.append(time.thread_time()))
    probe.start()
    cpu.append(time.thread_time())
    start = time.perf_counter()
    window.send_message(PROMPT)
    await asyncio.wait_for(done.wait(), 600)
    completed = time.perf_counter()
    painted = await watch.wait_after(completed)
    probe.stop()
    cpu.append(time.thread_time())
    rows = window.transcript.message_rows("assistant")
    shown = rows[-1].text if rows else ""
    if shown != reply:
        raise RuntimeError(f"the window shows {len(shown)} chars, expected {len(reply)}")
    gaps = probe.gaps_ms()
    cpu_gaps = [(b - a) * 1000 for a, b in pairwise(cpu)]
    return {
        "elapsed": painted - start,
        "to_turn_complete": completed - start,
        "stall_ms": max(gaps) if gaps else 0.0,
        "stall_cpu_ms": max(cpu_gaps) if cpu_gaps else 0.0,
        "stalls_over_16ms": sum(1 for gap in gaps if gap > 16),
        "probe_firings": len(gaps),
        "deltas": deltas,
        "renders": getattr(window.transcript, "render_count", None),
    }


def _worker(url: str, reply_file: Path, repeat: int) -> dict[str, Any]:
    from bench._ui import close_window, make_context, make_window, run_on_qt

    reply = reply_file.read_text(encoding="utf-8")
    warm_counter()
    root = reply_file.parent / "ui"

    async def scenario() -> dict[str, Any]:
        context = make_context(root, url)
        window = make_window(context)
        window.show()
        # Warm-up: one bare stream and one window stream (imports, connections, fonts).
        await _bare_stream(url, typed=False)
        await _window_stream(window, reply)
        typed: list[float] = []
        raw: list[float] = []
        ui: list[dict[str, Any]] = []
        chars = 0
        for _ in range(repeat):
            elapsed, chars = await _bare_stream(url, typed=False)
            raw.append(elapsed)
            typed.append((await _bare_stream(url, typed=True))[0])
            ui.append(await _window_stream(window, reply))
        await close_window(window)
        return {"typed": typed, "raw": raw, "ui": ui, "chars": chars}

    from bench import _ui

    out = run_on_qt(scenario)
    out["emit_bug_mitigated"] = _ui.EMIT_BUG_MITIGATED
    return out


def run(scale: float = 1.0) -> dict[str, Any]:
    """Measure streaming into the window against the bare client; see the module docstring."""
    from bench._server_proc import ServerProcess

    repeat = 3 if scale >= 0.5 else 1
    tokens = max(500, int(FULL_TOKENS * scale))
    counter = warm_counter()
    reply = make_reply(tokens, counter)
    reply_tokens = counter.count(reply)
    with temp_dir() as root:
        reply_file = root / "reply.md"
        reply_file.write_text(reply, encoding="utf-8")
        # Each repetition uses three streams (typed, raw, window) plus two warm-up streams.
        with ServerProcess(reply_file, copies=3 * repeat + 2, chunk_size=CHUNK_CHARS) as server:
            data = run_worker(
                "bench.bench_streaming", "--worker", server.url, str(reply_file), str(repeat)
            )
    ui = data["ui"]
    ui_s = statistics.median(r["elapsed"] for r in ui)
    typed_s = statistics.median(data["typed"])
    raw_s = statistics.median(data["raw"])
    stall = max(r["stall_ms"] for r in ui)
    return result(
        "streaming",
        workload=f"{reply_tokens}-token Markdown reply ({len(reply)} chars, "
        f"~{len(reply) // CHUNK_CHARS} deltas) streamed as fast as possible into the window",
        reference="the same stream consumed by the bare openai client, no UI (each SSE event "
        "decoded with json.loads)",
        figure="window / bare client",
        measured=ui_s,
        reference_value=raw_s,
        targets=[
            Target("window / bare client", ui_s / raw_s, 1.25, "×"),
            # The goal: 15.2 / 16.2 ms in two full runs on an idle machine once the stream is
            # read in slices and a part renders when laid out (18-19.5 ms before; 24-26 before
            # the turn's end left the window's thread).
            Target("longest main-thread stall (goal 16 ms)", stall, 16.0, "ms"),
        ],
        extra={
            "bare_typed_events_s": round(typed_s, 4),
            "window_vs_typed_events": round(ui_s / typed_s, 3),
            "window_runs_s": [round(r["elapsed"], 3) for r in ui],
            "window_to_turn_complete_s": [round(r["to_turn_complete"], 3) for r in ui],
            "bare_runs_s": [round(x, 3) for x in data["raw"]],
            "bare_typed_runs_s": [round(x, 3) for x in data["typed"]],
            "stall_ms_per_run": [round(r["stall_ms"], 1) for r in ui],
            "stall_cpu_ms_per_run": [round(r["stall_cpu_ms"], 1) for r in ui],
            "stalls_over_16ms_per_run": [r["stalls_over_16ms"] for r in ui],
            "probe_firings_per_run": [r["probe_firings"] for r in ui],
            "deltas_per_run": [r["deltas"] for r in ui],
            "bare_chars": data["chars"],
            "pyside_emit_refcount_bug_mitigated": data["emit_bug_mitigated"],
        },
        scale=scale,
    )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker_reply(_worker(sys.argv[2], Path(sys.argv[3]), int(sys.argv[4])))
    else:
        main(run)
