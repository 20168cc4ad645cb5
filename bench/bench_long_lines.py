"""Long unbroken lines: the longest main-thread block while the real window (offscreen) shows
them (issue 13 item 3).

Five steps, each timed by a ``QTimer`` probe firing every 5 ms (the largest gap between two
firings is the longest block), from the action until the window's first paint after it:

- **reply**: a model reply that is one line of 1 MB without a space, streamed by the offline
  server (own process) in deltas of 256 characters, until the paint after ``turn_complete``;
- **paste**: the same 128 KB of hex pasted into the composer (as Ctrl+V does), until the paint
  (a paste this long is held as a chip, ``app/ui/composer/paste_chips.py``, not laid out in the box);
- **user**: a user message of 128 KB of hex sent (``send_message``), until the paint after
  ``turn_complete`` (a short reply);
- **reopen**: the session of the first step opened again, as a click in the session list does;
- **first**: before those, the first message of the process ("hi", a short reply), sent once
  the new window has settled (what it needs is loaded ahead then: ``app.ui.runtime.preload``). It is
  not about long lines, and not in the headline figure.

Reference: the same window streaming a reply of ordinary prose (words and paragraphs) of the
same length, its longest block likewise (the figure is long-line block / prose block).

Beside them, the longest single call of two things that block the main thread but are not
the window's layout: the core counting a message's tokens (``TokenCounter.count``) and the
full collection once a reopened session is shown (``memory.session_shown``); and the longest
block in which neither ran (``*_window_only_block_ms``); and, since on a loaded machine a gap
also holds time the process waited for a CPU, the main thread's CPU time in the longest gap
(``*_block_cpu_ms``).

Targets: longest block ≤ 16 ms in each step.
"""

from __future__ import annotations

import asyncio
import random
import sys
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

from bench._common import Target, TextMaker, main, result, run_worker, temp_dir, worker_reply

LINE_CHARS = 1_000_000
HEX_CHARS = 128_000
CHUNK_CHARS = 256
LIMIT_MS = 16.0  # issue 22's goal for every step (blocks over it are counted)
# What CI guards: the goal where a step meets it, else the interim target (two full runs on an
# idle 2-core machine, 2026-11-25 evening):
# - reply 15.1 / 14.9 ms: the goal, once a part renders when it is laid out and the stream is
#   read in slices (18.7 before);
# - paste 5.8 / 5.5 ms: the goal; a 128 KB paste is a chip in the composer, not a 128 KB line for
#   Qt to lay out (50-58 ms before);
# - user 23.9 / 24.7 ms (26-30 before; the message arriving twice is rendered once, the recall
#   worker is no longer started at every turn), then the goal: the tools no longer go through the
#   SDK's transform, a long message's parts and a resize under way are laid out by the passes
#   after the block that received them (main-thread CPU of the longest block 8.9-10.5 -> 5.9-6.5
#   ms, alternated runs on a loaded 2-core machine);
# - reopen 14.5 / 10.8 ms: the goal, once its replay lays out in one pass (14.6-16.3 before).
# - first (the first message of the process, "hi", sent once the window has settled): 171-180
#   ms while it imported the Markdown renderer, the SDK's request classes and the HTTP stack and
#   built the first message view in the block that sent it; 13.0-14.6 ms with those made ahead,
#   in a worker thread and at idle (``app.ui.runtime.preload``): the goal.
STEP_LIMITS_MS = {"reply": 16.0, "paste": 16.0, "user": 16.0, "reopen": 16.0, "first": 16.0}
LONGEST: list[Any] = []  # [token counting, collection after open], set by the worker


def one_line(chars: int, seed: int = 7) -> str:
    """``chars`` characters of letters, digits and punctuation, without any whitespace."""
    rng = random.Random(seed)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/=_-.,;:"
    return "".join(rng.choices(alphabet, k=chars))


def hex_text(chars: int, seed: int = 11) -> str:
    rng = random.Random(seed)
    return "".join(rng.choices("0123456789abcdef", k=chars))


async def _timed(window: Any, action: Any, until: str | None) -> dict[str, Any]:
    """Run ``action()``; the longest main-thread block until the first paint after the event
    ``until`` (or after ``action`` returned, when None)."""
    from bench._ui import PaintWatch, StallProbe, transcript_paint_targets

    done = asyncio.Event()

    def on_event(event: Any) -> None:
        if event.type == until:
            done.set()

    if until is not None:
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
    for longest in LONGEST:
        longest.take()
    result_value = action()
    if asyncio.iscoroutine(result_value):
        await result_value
    if until is not None:
        await asyncio.wait_for(done.wait(), 900)
    finished = time.perf_counter()
    painted = await watch.wait_after(finished)
    await asyncio.sleep(0.2)  # what the last paint set off (parts coming on screen)
    probe.stop()
    cpu.append(time.thread_time())
    gaps = probe.gaps_ms()
    stamps = probe.stamps
    cpu_gaps = [(b - a) * 1000 for a, b in pairwise(cpu)]
    # The longest block that is the window's own work (no core token count, no collection).
    window_gaps = [
        (b - a) * 1000 for a, b in pairwise(stamps)
        if not any(longest.overlaps(a, b) for longest in LONGEST)
    ]
    for longest in LONGEST:
        longest.spans.clear()
    return {
        "window_block_ms": round(max(window_gaps) if window_gaps else 0.0, 1),
        "core_token_count_ms": LONGEST[0].take() if LONGEST else 0.0,
        "gc_after_open_ms": LONGEST[1].take() if LONGEST else 0.0,
        "elapsed_s": round(painted - start, 3),
        "block_ms": round(max(gaps) if gaps else 0.0, 1),
        "cpu_block_ms": round(max(cpu_gaps) if cpu_gaps else 0.0, 1),
        "blocks_over_limit": sum(1 for gap in gaps if gap > LIMIT_MS),
    }


class Longest:
    """The longest single call of ``owner.name`` per step (blocks that are not layout: the
    core counting tokens, the full collection after a session is shown)."""

    def __init__(self, owner: Any, name: str) -> None:
        self.longest_ms = 0.0
        self.spans: list[tuple[float, float]] = []  # (start, end) of calls over 5 ms
        original = getattr(owner, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                end = time.perf_counter()
                self.longest_ms = max(self.longest_ms, (end - start) * 1000)
                if end - start > 0.005:
                    self.spans.append((start, end))

        setattr(owner, name, timed)

    def take(self) -> float:
        value, self.longest_ms = round(self.longest_ms, 1), 0.0
        return value

    def overlaps(self, start: float, end: float) -> bool:
        return any(a < end and b > start for a, b in self.spans)


def paste(window: Any, text: str) -> None:
    """Paste ``text`` into the composer as Ctrl+V does."""
    from PySide6.QtCore import QMimeData

    data = QMimeData()
    data.setText(text)
    window.composer.edit.insertFromMimeData(data)


async def _preloaded() -> None:
    """Wait as a person reads a new window before typing: until what the first message of
    the process needs has been loaded ahead (``app.ui.runtime.preload``), when this Coco does that."""
    try:
        from app.ui.runtime import preload
    except ImportError:
        return
    for _ in range(500):  # it starts a second after the session is shown and painted
        thread = preload.started()
        if thread is not None:
            await asyncio.to_thread(thread.join, 30)
            settled = getattr(preload, "settled", None)  # and the window's part, when it has one
            if settled is not None:
                await asyncio.to_thread(settled().wait, 30)
            return
        await asyncio.sleep(0.01)


def _worker(reply_url: str, prose_url: str, short_url: str, hex_file: Path) -> dict[str, Any]:
    from app.core.tokens import counter as tokens
    from app.ui.runtime import memory
    from bench._ui import close_window, make_context, make_window, run_on_qt

    LONGEST[:] = [Longest(tokens.TokenCounter, "count"), Longest(memory, "session_shown")]

    hex_message = hex_file.read_text(encoding="utf-8")
    root = hex_file.parent

    async def scenario() -> dict[str, Any]:
        out: dict[str, Any] = {}
        # Warm-up on the short server: the first reply and the first reopen pay for imports
        # (Markdown, highlighting) and first-use costs that are not the long lines' doing.
        async def fresh_window(url: str, folder: str) -> Any:
            window = make_window(make_context(root / folder, url))
            window.show()
            await window.open_session(None)
            await asyncio.sleep(0.1)
            return window

        window = await fresh_window(short_url, "b")
        await _preloaded()
        out["first"] = await _timed(window, lambda: window.send_message("hi"), "turn_complete")
        warm_id = window.session.id
        await window.open_session(None)
        out["reopen_short"] = await _timed(window, lambda: window.open_session(warm_id), None)
        await window.open_session(None)
        await asyncio.sleep(0.1)
        out["paste"] = await _timed(window, lambda: paste(window, hex_message), None)
        window.composer.set_text("")
        await asyncio.sleep(0.1)
        out["user"] = await _timed(
            window, lambda: window.send_message(hex_message), "turn_complete"
        )
        await close_window(window)

        window = await fresh_window(reply_url, "a")
        out["reply"] = await _timed(window, lambda: window.send_message("go"), "turn_complete")
        session_id = window.session.id
        shown = window.transcript.message_rows("assistant")[-1].text
        out["reply_chars_shown"] = len(shown)
        await window.open_session(None)
        await asyncio.sleep(0.1)
        out["reopen"] = await _timed(window, lambda: window.open_session(session_id), None)
        await close_window(window)

        window = await fresh_window(prose_url, "c")
        out["prose"] = await _timed(window, lambda: window.send_message("go"), "turn_complete")
        await close_window(window)
        return out

    return run_on_qt(scenario)


def run(scale: float = 1.0) -> dict[str, Any]:
    """Measure the longest main-thread block for long lines; see the module docstring."""
    from bench._server_proc import ServerProcess

    line_chars = max(2_000, int(LINE_CHARS * scale))
    hex_chars = max(1_000, int(HEX_CHARS * scale))
    prose = TextMaker(seed=5).plain(line_chars // 4)[:line_chars]
    with temp_dir() as root:
        files = {
            "reply": root / "line.txt", "prose": root / "prose.txt", "short": root / "ok.txt",
        }
        files["reply"].write_text(one_line(line_chars), encoding="utf-8")
        files["prose"].write_text(prose, encoding="utf-8")
        files["short"].write_text("Noted.", encoding="utf-8")
        hex_file = root / "hex.txt"
        hex_file.write_text(hex_text(hex_chars), encoding="utf-8")
        with (
            ServerProcess(files["reply"], copies=1, chunk_size=CHUNK_CHARS) as reply_server,
            ServerProcess(files["prose"], copies=1, chunk_size=CHUNK_CHARS) as prose_server,
            ServerProcess(files["short"], copies=2, chunk_size=CHUNK_CHARS) as short_server,
        ):
            data = run_worker(
                "bench.bench_long_lines", "--worker", reply_server.url, prose_server.url,
                short_server.url, str(hex_file), timeout=3600,
            )
    if data["reply_chars_shown"] != line_chars:
        raise RuntimeError(f"the window shows {data['reply_chars_shown']} of {line_chars} chars")
    steps = ("reply", "paste", "user", "reopen")
    longest = max(data[step]["block_ms"] for step in steps) / 1000
    prose_block = max(data["prose"]["block_ms"], 0.1) / 1000
    return result(
        "long_lines",
        workload=f"a {line_chars:,}-character reply without whitespace streamed in "
        f"{CHUNK_CHARS}-character deltas, a {hex_chars:,}-character hex user message, and "
        "the first session reopened, in the real window",
        reference="the same window streaming a reply of ordinary prose of the same length",
        figure="longest main-thread block, long lines / prose",
        measured=longest,
        reference_value=prose_block,
        targets=[
            Target(
                f"longest block: {step} (goal {LIMIT_MS:g} ms)", data[step]["block_ms"],
                STEP_LIMITS_MS.get(step, LIMIT_MS), "ms",
            )
            for step in (*steps, "first")
        ],
        extra={
            "first_block_ms": data["first"]["block_ms"],
            "first_block_cpu_ms": data["first"]["cpu_block_ms"],
            **{f"{step}_block_ms": data[step]["block_ms"] for step in (*steps, "prose")},
            "reopen_short_session_block_ms": data["reopen_short"]["block_ms"],
            **{f"{step}_elapsed_s": data[step]["elapsed_s"] for step in (*steps, "prose")},
            **{f"{step}_blocks_over_{LIMIT_MS:.0f}ms": data[step]["blocks_over_limit"]
               for step in (*steps, "prose")},
            **{f"{step}_core_token_count_longest_ms": data[step]["core_token_count_ms"]
               for step in (*steps, "prose")},
            "reopen_gc_after_open_ms": data["reopen"]["gc_after_open_ms"],
            **{f"{step}_window_only_block_ms": data[step]["window_block_ms"]
               for step in (*steps, "prose")},
            **{f"{step}_block_cpu_ms": data[step]["cpu_block_ms"] for step in (*steps, "prose")},
        },
        scale=scale,
    )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker_reply(_worker(sys.argv[2], sys.argv[3], sys.argv[4], Path(sys.argv[5])))
    else:
        main(run)
