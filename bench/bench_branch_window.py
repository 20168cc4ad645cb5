"""The window while a 5 000-turn conversation's branches are drawn (issue 36): an edit at its
first, middle and last turn, and each time the switch back, in the real window (offscreen).

Figure: the window's longest main-thread block (a 5 ms timer's longest gap) from an op's
submission until the branch is drawn again (and the edit's answer, and the compaction an edit
at the end leads to, have ended), against one frame at 60 Hz. The session is opened in the
window as a click in the list does; the model's server runs in a process of its own.

Target: every one ≤ 16 ms. The core's side (each op until its view is ready, against the
session's resume) is ``bench_branches``'.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from bench._common import Target, main, result, run_worker, temp_dir, warm_counter, worker_reply
from bench.bench_long_lines import _preloaded
from bench.bench_resume import make_rollout

FRAME_S = 0.016


def _window_blocks(data_dir: Path, session_id: str) -> dict[str, Any]:
    """The window's longest block while an edit at the first, middle and last turn, and the
    switch back, are drawn (the session opened in the window as a click in the list does)."""
    from app.core import ops
    from bench._server_proc import ServerProcess
    from bench._ui import StallProbe, close_window, make_context, make_window, run_on_qt

    # The model's server in a process of its own, as a real one is: in this one, its reading
    # of a 5 000-turn request (one C call) held the interpreter from the window for 40-50 ms.
    answer = data_dir.parent / "answer.txt"
    answer.write_text("An answer on the new branch.", encoding="utf-8")
    # An answer a turn, and one a compaction's summary (an edit at the end goes over the limit).
    with ServerProcess(answer, copies=12, chunk_size=8) as server:
        context = make_context(data_dir.parent, server.url)

        async def scenario() -> dict[str, Any]:
            window = make_window(context)
            window.show()
            await window.open_session(session_id)
            await _preloaded()  # a person reads the reopened conversation before editing it
            controller = window.controller
            nodes = controller.session.tree().nodes
            newest = nodes[-1].turn_id
            blocks: dict[str, float] = {}
            probe = StallProbe()

            async def drawn_after(op: Any) -> float:
                before = controller.redraw.drawn if controller.redraw else 0
                probe.start()
                controller.submit(op)
                while controller.redraw is None or controller.redraw.drawn == before:
                    await asyncio.sleep(0.005)
                # An edit's answer streams into the new drawing; the compaction it may lead to
                # starts after its turn has ended (the core holds its slot until it has decided):
                # an op sent in between was refused, and its drawing never came.
                while controller.busy or controller.session.busy:
                    await asyncio.sleep(0.005)
                await asyncio.sleep(0.05)  # the second step of the two-step replay
                probe.stop()
                return probe.longest_ms()

            for where, index in (("first", 0), ("middle", len(nodes) // 2), ("last", -1)):
                turn_id = nodes[index].turn_id
                blocks[f"edit_{where}"] = await drawn_after(
                    ops.EditTurn(turn_id=turn_id, text=f"edited {where}", carry_summary=False)
                )
                blocks[f"switch_{where}"] = await drawn_after(
                    ops.SwitchBranch(turn_id=newest, carry_summary=False)
                )
            await close_window(window)
            return blocks

        return run_on_qt(scenario)


def run(scale: float = 1.0) -> dict[str, Any]:
    with temp_dir() as root:
        data_dir = root / "data"
        stats = make_rollout(data_dir, scale)
        blocks = run_worker("bench.bench_branch_window", "--window", str(data_dir), stats.session_id)
    targets = [
        Target(f"window's longest block, {name}", value, FRAME_S * 1000, "ms")
        for name, value in blocks.items()
    ]
    return result(
        "branch_window",
        workload=f"{stats.turns}-turn rollout, {stats.compactions} compactions, "
        f"{stats.bytes / 1e6:.1f} MB, in the window: an edit at the first, middle and last turn, "
        "each followed by the switch back",
        reference="16 ms (one frame at 60 Hz)",
        figure="window's longest block while a branch is drawn",
        measured=max(blocks.values()) / 1000,
        reference_value=FRAME_S,
        targets=targets,
        extra={f"block_{k}_ms": round(v, 2) for k, v in blocks.items()},
        scale=scale,
        unit="s",
    )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--window":
        warm_counter()
        worker_reply(_window_blocks(Path(sys.argv[2]), sys.argv[3]))
    else:
        main(run)
