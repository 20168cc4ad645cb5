"""Branches on the 5 000-turn resume session (issue 36): edit, switch to and fork at its first,
middle and last turn.

Figure: the slowest of those, from the op's submission until the new view is ready (the
``branch_switched`` event for an edit or a switch, ``session_forked`` for a fork), against the
time the same session takes to open (``Session.open`` to its first event) in the same fresh
interpreter. A branch view is rebuilt from the rollout off the window's thread, so it may cost
what an open costs, never more; a fork reads the rollout once. The session is searched once
before the ops (the recall index catches up with a reopened session in a worker thread first).

Target: every one ≤ 1× the session's resume time. The window's blocks while it draws these
ops are ``bench_branch_window``'s.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import time
from pathlib import Path
from typing import Any

from bench._common import (
    Target,
    core_config,
    main,
    result,
    run_worker,
    temp_dir,
    warm_counter,
    worker_reply,
)
from bench.bench_resume import make_rollout


async def _until(session: Any, op: Any, kinds: tuple[str, ...]) -> float:
    """Seconds from ``op``'s submission to the first event of ``kinds``; an op the core
    refused (an ``error`` event) is no figure: it raises."""
    start = time.perf_counter()
    await session.submit(op)
    async for event in session.events():
        if event.type in kinds:
            return time.perf_counter() - start
        if event.type == "error":
            raise RuntimeError(f"{type(op).__name__} refused: {event.message}")
    raise RuntimeError("the session ended first")


async def _idle(session: Any) -> None:
    """Until the core's slot is free: a compaction an edited turn leads to starts after the
    turn has ended, and an op sent meanwhile would be refused."""
    while session.busy:
        await asyncio.sleep(0.005)


async def _measure(data_dir: Path, session_id: str) -> dict[str, Any]:
    from app.core import Session, ops
    from app.core.preload import preload
    from app.demo import ModelServer, Reply

    preload()  # what the window loads ahead a second after a session is shown
    with ModelServer(mode="scripted") as server:
        config = core_config(server.url, data_dir)
        start = time.perf_counter()
        session = await Session.open(config, session_id=session_id)
        async for _event in session.events():
            break
        resume_s = time.perf_counter() - start
        # The recall index catches up with a reopened session in a worker thread; a search
        # waits for it, so the ops below are not timed against that one-off work.
        await _until(session, ops.FindInConversation(query="compaction"), ("conversation_matches",))
        # The session list's index exists, as in the app (its sidebar keeps it): a fork adds
        # its entry to it.
        from app.core.sessions import SessionLibrary

        SessionLibrary(config.sessions_dir).get(session_id)
        nodes = session.tree().nodes
        picks = {"first": nodes[0].turn_id, "middle": nodes[len(nodes) // 2].turn_id,
                 "last": nodes[-1].turn_id}
        times: dict[str, float] = {}
        for where, turn_id in picks.items():
            server.enqueue(Reply(text=f"edited at the {where} turn"))
            # and a summary for the compaction an edit near the end leads to (the edited turn
            # brings the history over the limit); one left over answers the next edit
            server.enqueue(Reply(text="SUMMARY: the conversation so far, on this branch."))
            times[f"edit_{where}"] = await _until(
                session, ops.EditTurn(turn_id=turn_id, text=f"edited {where}"),
                ("branch_switched",),
            )
            async for event in session.events():  # the edited turn runs to its end
                if event.type == "turn_complete":
                    break
            await _idle(session)
            times[f"switch_{where}"] = await _until(
                session, ops.SwitchBranch(turn_id=turn_id), ("branch_switched",)
            )
            await _idle(session)
            times[f"fork_{where}"] = await _until(
                session, ops.ForkSession(turn_id=turn_id), ("session_forked",)
            )
            gc.collect()
        await session.close()
    return {"resume_s": resume_s, "times": times}


def run(scale: float = 1.0) -> dict[str, Any]:
    with temp_dir() as root:
        data_dir = root / "data"
        stats = make_rollout(data_dir, scale)
        timing = run_worker("bench.bench_branches", "--worker", str(data_dir), stats.session_id)
    resume_s, times = timing["resume_s"], timing["times"]
    slowest = max(times.values())
    targets = [
        Target(f"{name} / resume", value / resume_s, 1.0, "×") for name, value in times.items()
    ]
    return result(
        "branches",
        workload=f"{stats.turns}-turn rollout, {stats.compactions} compactions, "
        f"{stats.bytes / 1e6:.1f} MB: edit, switch, fork at the first, middle and last turn",
        reference="opening the same session (Session.open to its first event)",
        figure="slowest branch op until its view is ready / resume",
        measured=slowest,
        reference_value=resume_s,
        targets=targets,
        extra={"resume_s": round(resume_s, 4), **{f"{k}_s": round(v, 4) for k, v in times.items()}},
        scale=scale,
    )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        warm_counter()
        worker_reply(asyncio.run(_measure(Path(sys.argv[2]), sys.argv[3])))
    else:
        main(run)
