"""Soak: long conversations through the real core against the demo model, on every window size.

    python -m bench.bench_soak               # 300 turns a case (a few minutes)
    python -m bench.bench_soak --scale 0.1   # 30 turns a case

Cases: windows of 4 096, 8 192, 16 000, 32 000 and 128 000 tokens, times three message mixes:
short chat (30–400 tokens a message), a pasted document (1 500–6 000 tokens) every fourth turn,
and tool-heavy turns (``read_file`` outputs of 2 000–8 000 tokens from a workspace). The demo
model honours the window as llama.cpp does (a request over it is refused; a reply stops where the
window is full) and the output limit Coco sets on a compaction request.

Per case: turns that ended in an error (target 0), compactions, median turns between them, the
largest post-compaction request as a share of the auto-compact limit (target ≤ 0.5), tokens freed
per compaction, and summaries cut short (target 0). A pasted document never exceeds what the
window can take as one message (Coco refuses those before sending, by design): on the 4k window
the documents are capped at 70 % of that room.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import statistics
import time
from pathlib import Path
from typing import Any

from bench._common import Target, TextMaker, core_config, main, result, temp_dir, warm_counter
from bench._server_proc import DemoServerProcess

WINDOWS = (4_096, 8_192, 16_000, 32_000, 128_000)
MIXES = ("chat", "paste", "tools")
FULL_TURNS = 300
PASTE_EVERY = 4
FILES = 12


def _case_turns(scale: float) -> int:
    return max(8, int(FULL_TURNS * scale))


def _workspace(root: Path, maker: TextMaker, rng: random.Random) -> Path:
    """Files of 2 000–8 000 tokens in at most 150 lines (the demo reads lines 1-200)."""
    folder = root / "ws"
    folder.mkdir()
    for index in range(FILES):
        text = maker.plain(rng.randint(2_000, 8_000))
        words = text.split()
        per_line = max(1, len(words) // 150 + 1)
        lines = [" ".join(words[i : i + per_line]) for i in range(0, len(words), per_line)]
        (folder / f"notes_{index}.txt").write_text("\n".join(lines) + "\n")
    return folder


def _message(mix: str, turn: int, maker: TextMaker, rng: random.Random, room: int) -> str:
    if mix == "tools" and turn % 2 == 0:
        return f"Please read notes_{rng.randrange(FILES)}.txt and tell me what it says."
    if mix == "paste" and turn % PASTE_EVERY == PASTE_EVERY - 1:
        size = rng.randint(1_500, 6_000)
        size = min(size, int(room * 0.7))
        return "Here is the document I mentioned:\n\n" + maker.plain(size)
    return maker.plain(rng.randint(30, 400))


async def _soak_case(window: int, mix: str, turns: int, data_dir: Path) -> dict[str, Any]:
    from app.core import Session, ops
    from app.core.compaction.policy import message_room

    rng = random.Random(window * 7 + MIXES.index(mix))
    maker = TextMaker(seed=window + len(mix), counter=warm_counter())
    workspace = _workspace(data_dir, maker, rng) if mix == "tools" else None
    # The demo model in a process of its own, as a real server is: in this one it took turns
    # at the interpreter with the core (the soak took a tenth longer).
    with DemoServerProcess(window) as server:
        config = core_config(
            server.url, data_dir / "data", model="coco-demo", context_window=window,
            workspace=workspace,
        )
        session = await Session.open(config)
        failed = 0
        errors: list[str] = []
        compactions: list[Any] = []
        compacted_at: list[int] = []
        limit = None
        for turn in range(turns):
            usage = session.token_usage()
            limit = usage.auto_compact_limit
            room = message_room(limit, 600) or window
            await session.submit(ops.UserTurn(text=_message(mix, turn, maker, rng, room)))
            async for event in session.events():
                if event.type == "context_compacted":
                    compactions.append(event)
                    compacted_at.append(turn)
                elif event.type == "error":
                    errors.append(event.message)
                elif event.type == "turn_complete":
                    failed += event.status != "completed"
                    break
        await session.close()
    gaps = [b - a for a, b in itertools.pairwise(compacted_at)]
    # The compacted history (instructions, tools and what the compaction left), as a share of
    # the limit; the user's new message that a pre-turn compaction put back after it is apart.
    shares = [(c.tokens_after - c.incoming_tokens) / limit for c in compactions if limit]
    whole = [c.tokens_after / limit for c in compactions if limit]
    freed = [c.tokens_before - c.tokens_after for c in compactions]
    return {
        "window": window,
        "mix": mix,
        "turns": turns,
        "failed_turns": failed,
        "errors": errors[:3],
        "compactions": len(compactions),
        "median_turns_between": statistics.median(gaps) if gaps else None,
        "max_post_share": max(shares) if shares else 0.0,
        "max_next_request_share": max(whole) if whole else 0.0,
        "median_freed": int(statistics.median(freed)) if freed else 0,
        "cut_short": sum(1 for c in compactions if c.summary_cut_short),
        "strategies": sorted({c.strategy for c in compactions}),
    }


def run(scale: float = 1.0) -> dict[str, Any]:
    turns = _case_turns(scale)
    cases: list[dict[str, Any]] = []
    started = time.perf_counter()
    with temp_dir() as root:
        for window in WINDOWS:
            for mix in MIXES:
                case_dir = root / f"{window}-{mix}"
                case_dir.mkdir()
                cases.append(asyncio.run(_soak_case(window, mix, turns, case_dir)))
    elapsed = time.perf_counter() - started
    failed = sum(c["failed_turns"] for c in cases)
    worst_share = max(c["max_post_share"] for c in cases)
    cut_short = sum(c["cut_short"] for c in cases)
    table = {
        f"{c['window']}/{c['mix']}": (
            f"failed {c['failed_turns']}, compactions {c['compactions']}, "
            f"median gap {c['median_turns_between']}, max post/limit {c['max_post_share']:.3f} "
            f"(with the new message {c['max_next_request_share']:.3f}), "
            f"median freed {c['median_freed']}, cut short {c['cut_short']}, "
            f"{'+'.join(c['strategies']) or '-'}"
            + (f", errors: {c['errors']}" if c["errors"] else "")
        )
        for c in cases
    }
    total_turns = turns * len(cases)
    return result(
        "soak",
        workload=f"{len(cases)} cases × {turns} turns through the real core and the demo model",
        reference="the same turns' count at 1 ms each (a scale for the soak's own time)",
        figure="soak wall time / turns × 1 ms",
        measured=elapsed,
        reference_value=total_turns * 0.001,
        targets=[
            Target("turns ended in an error", failed, 0.5, ""),
            Target("largest post-compaction request / limit", worst_share, 0.5, ""),
            Target("summaries cut short", cut_short, 0.5, ""),
        ],
        extra=table,
        scale=scale,
    )


if __name__ == "__main__":
    main(run)
