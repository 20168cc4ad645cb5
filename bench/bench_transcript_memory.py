"""Transcript memory: a session of 10 000 messages open in the window.

Figure: in a fresh interpreter, the window is shown with an empty session and settled; then the
10 000-message session is opened (as a click in the session list does) and painted. The RSS
growth (``/proc/self/statm``, after ``gc.collect()``) is compared with the same 10 000 message
texts held as Python strings (``sys.getsizeof`` of each, plus the list). A second fresh
interpreter resumes the same session with the core alone (``tracemalloc``: what the session
holds), to show what part is the core's.

Target: ≤ 3× the strings.
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
    peak_rss_mb,
    result,
    run_worker,
    temp_dir,
    warm_counter,
    worker_reply,
)

FULL_MESSAGES = 10_000


def make_session(data_dir: Path, scale: float) -> Any:
    """A rollout of ``10 000 × scale`` messages (user questions and Markdown answers)."""
    from bench._rollout import RolloutSynth

    counter = warm_counter()
    turns = max(10, int(FULL_MESSAGES * scale) // 2)
    synth = RolloutSynth(TextMaker(seed=17, counter=counter), counter)
    return synth.write(
        data_dir / "sessions", turns=turns, user_tokens=55, answer_tokens=410, tool_every=0
    )


def message_texts(path: Path) -> list[str]:
    """The text of every user and assistant message in the rollout, in order."""
    from app.core.items import is_message, message_text

    texts: list[str] = []
    with open(path, "rb") as file:
        for line in file:
            record = json.loads(line)
            if record.get("type") != "response_item":
                continue
            item = record["payload"].get("item") or {}
            if is_message(item) and item.get("role") in ("user", "assistant"):
                texts.append(message_text(item))
    return texts


def strings_bytes(texts: list[str]) -> int:
    """Memory of the texts as Python strings: each object plus the list holding them."""
    return sum(sys.getsizeof(text) for text in texts) + sys.getsizeof(texts)


def _settled_rss() -> float:
    gc.collect()
    return current_rss_mb()


def _worker_window(data_dir: Path, session_id: str) -> dict[str, Any]:
    from bench import _ui

    warm_counter()
    context = _ui.make_context(data_dir.parent, "http://127.0.0.1:9/v1")

    async def scenario() -> dict[str, Any]:
        window = _ui.make_window(context)
        await window.open_session(None)
        window.show()
        watch = _ui.PaintWatch(*_ui.transcript_paint_targets(window))
        await watch.wait_after(0.0, timeout=30)
        # What the process pays once, not the session: the Markdown and highlighting imports
        # and, since the start-up work of issue 22 left them to the first message shown, the
        # Python types PySide6 makes when a message view is first built (0.4 MB of Python
        # objects alone; paid at start-up before, so outside this figure).
        window.transcript.renderer.render("# warm-up\n\n```python\nx = 1\n```\n")
        from app.ui.style.widgets import RichTextView

        RichTextView(window).deleteLater()
        await asyncio.sleep(0.1)
        before = _settled_rss()
        start = time.perf_counter()
        await window.open_session(session_id)
        await watch.wait_after(time.perf_counter())
        painted = time.perf_counter() - start
        await asyncio.sleep(0.1)
        after = _settled_rss()
        rows = len(window.transcript.rows) if hasattr(window.transcript, "rows") else None
        await _ui.close_window(window)
        return {"before_mb": before, "after_mb": after, "open_to_paint_s": painted, "rows": rows}

    out = _ui.run_on_qt(scenario)
    out["peak_mb"] = peak_rss_mb()
    out["emit_bug_mitigated"] = _ui.EMIT_BUG_MITIGATED
    return out


def _worker_core(data_dir: Path, session_id: str) -> dict[str, Any]:
    from app.core import Session

    warm_counter()
    config = core_config("http://127.0.0.1:9/v1", data_dir)

    async def scenario() -> dict[str, Any]:
        import tracemalloc

        before = _settled_rss()
        tracemalloc.start()
        session = await Session.open(config, session_id=session_id)
        gc.collect()
        held, _peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        after = _settled_rss()
        entries = len(session.transcript())
        await session.close()
        return {"before_mb": before, "after_mb": after, "traced_bytes": held, "entries": entries}

    return asyncio.run(scenario())


def run(scale: float = 1.0) -> dict[str, Any]:
    """Measure the window's memory for a long session; see the module docstring."""
    with temp_dir() as root:
        data_dir = root / "data"
        stats = make_session(data_dir, scale)
        texts = message_texts(stats.path)
        reference = strings_bytes(texts)
        text_chars = sum(len(text) for text in texts)
        window = run_worker(
            "bench.bench_transcript_memory", "--worker", "window", str(data_dir), stats.session_id
        )
        core = run_worker(
            "bench.bench_transcript_memory", "--worker", "core", str(data_dir), stats.session_id
        )
    mb = 1024 * 1024
    window_bytes = (window["after_mb"] - window["before_mb"]) * mb
    core_bytes = core["traced_bytes"]
    ratio = window_bytes / reference
    return result(
        "transcript_memory",
        workload=f"a session of {len(texts)} messages ({text_chars / 1e6:.1f} M chars) open in "
        "the window",
        reference="the same message texts as Python strings",
        figure="window RSS growth / strings",
        measured=window_bytes,
        reference_value=float(reference),
        unit="bytes",
        targets=[Target("window memory / strings", ratio, 3.0, "×")],
        extra={
            "window_growth_mb": round(window_bytes / mb, 1),
            "strings_mb": round(reference / mb, 1),
            "core_only_traced_mb": round(core_bytes / mb, 1),
            "core_only_ratio": round(core_bytes / reference, 2),
            "core_only_rss_growth_mb": round(core["after_mb"] - core["before_mb"], 1),
            "window_peak_rss_mb": round(window["peak_mb"], 1),
            "window_open_to_paint_s": round(window["open_to_paint_s"], 3),
            "rows": window["rows"],
            "pyside_emit_refcount_bug_mitigated": window["emit_bug_mitigated"],
        },
        scale=scale,
    )


def _worker_main(argv: list[str]) -> None:
    mode, data_dir, session_id = argv[0], Path(argv[1]), argv[2]
    if mode == "window":
        worker_reply(_worker_window(data_dir, session_id))
    elif mode == "core":
        worker_reply(_worker_core(data_dir, session_id))
    else:
        raise SystemExit(f"unknown worker mode {mode!r}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        _worker_main(sys.argv[2:])
    else:
        main(run)
