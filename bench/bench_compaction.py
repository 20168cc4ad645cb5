"""Compaction overhead: local and remote compaction of a 1 000 000-token history.

The scripted server answers at once. Figure, per strategy: ``submit(Compact())`` until the
compaction turn's ``turn_complete``, minus the time of the same request sent with no compaction
logic: the body the server received for that compaction, POSTed again with the same ``openai``
client (``client.post`` of that body, streamed and read to the end). Remote compaction is measured
in the form Coco tries first, the ``compaction_trigger`` item on /responses (until November 2026
the benchmark queued an answer only for /responses/compact, so every remote run also included
six failed trigger requests of the whole history and their retries). The difference is everything Coco adds (copying the history, building the request
and handing it to the SDK, rebuilding the history, counting it, the rollout and index writes,
the events). Each run is followed by an undo, so the same history is compacted every time; runs
alternate with the bare request and the medians are compared.

For the breakdown, the same body is also sent through the SDK's typed method the provider uses
(``responses.create`` with keyword arguments), and the time inside
chosen core functions is recorded (``Spans``).

Target: what Coco adds ≤ 25 ms, for each strategy.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time
from pathlib import Path
from typing import Any

from bench._common import (
    Spans,
    Target,
    TextMaker,
    core_config,
    main,
    result,
    temp_dir,
    warm_counter,
)

FULL_TOKENS = 1_000_000
TURN_TOKENS = 500  # ≈ 55 user + 410 answer + a tool call every 10th turn
# About 360 words, each point its own: one sentence repeated 40 times is what a junk summary
# looks like (issue 39) and would be refused and asked again.
_WORDS = ["cache", "gateway", "schema", "budget", "rollout", "billing", "platform", "staging", "port", "config", "deploy", "review", "decision", "owner", "region", "metric", "alert", "runbook", "backup", "index", "query", "latency", "quota", "ticket"]
_PICK = random.Random(42)
SUMMARY = "## Summary\n\n" + "\n".join(
    f"- {n}. " + " ".join(_PICK.choice(_WORDS) for _ in range(8)) + "." for n in range(40)
)


async def _wait_for(events: asyncio.Queue[Any], kind: str, timeout: float = 120.0) -> list[Any]:
    seen: list[Any] = []
    while True:
        event = await asyncio.wait_for(events.get(), timeout)
        seen.append(event)
        if event.type == kind:
            return seen


async def _measure(
    server: Any, config: Any, session_id: str, strategy: str, repeat: int, typed_repeat: int
) -> dict[str, Any]:
    import openai

    from app.core import Session, ops
    from app.demo import Reply
    from app.demo.conversation import encode_compaction

    # The window's collector policy: what exists is frozen before a turn, so a full collection
    # never walks a long history in the middle of one (app/ui/runtime/memory.py; no Qt in it).
    from app.ui.runtime.memory import turn_starting

    # Remote compaction is measured in the form Coco tries first (and Codex sends today): the
    # ``compaction_trigger`` item on /responses, answered with one ``compaction`` item.
    endpoint = "responses"
    session = await Session.open(config, session_id=session_id)
    events: asyncio.Queue[Any] = asyncio.Queue()

    async def pump() -> None:
        async for event in session.events():
            events.put_nowait(event)

    pump_task = asyncio.create_task(pump())
    await _wait_for(events, "token_count")
    tokens_before = session.token_usage().total
    client = openai.AsyncOpenAI(
        base_url=config.base_url, api_key=config.api_key.get_secret_value(), max_retries=0
    )

    usage = {
        "input_tokens": tokens_before,
        "output_tokens": 300,
        "total_tokens": tokens_before + 300,
    }

    def enqueue() -> None:
        if strategy == "remote":
            server.enqueue(Reply(compaction=encode_compaction(SUMMARY), usage=usage))
        else:
            server.enqueue(Reply(text=SUMMARY, usage=usage))

    spans = _spans(strategy)
    span_runs: list[dict[str, float]] = []

    async def coco_once() -> tuple[float, Any]:
        enqueue()
        turn_starting()  # what the window does before every turn (and the bare run below)
        spans.reset()
        start = time.perf_counter()
        await session.submit(ops.Compact())
        seen = await _wait_for(events, "turn_complete")
        elapsed = time.perf_counter() - start
        span_runs.append(spans.snapshot_ms())
        compacted = [e for e in seen if e.type == "context_compacted"]
        if not compacted or compacted[0].strategy != strategy:
            got = [getattr(e, "message", e.type) for e in seen]
            raise RuntimeError(f"expected a {strategy} compaction, got {got}")
        await session.submit(ops.UndoCompaction())
        await _wait_for(events, "compaction_undone")
        return elapsed, compacted[0]

    async def bare_once(body: dict[str, Any], headers: dict[str, str], typed: bool) -> float:
        """The same body, POSTed raw (``typed=False``, the reference) or through the SDK's
        typed method as the provider calls it (``typed=True``, for the breakdown)."""
        import httpx2

        enqueue()
        path = "/responses"
        turn_starting()
        start = time.perf_counter()
        if typed:
            stream = await client.responses.create(**body, extra_headers=headers)
            async for _line in stream.response.aiter_lines():
                pass
            await stream.close()
        else:
            raw_stream = await client.post(
                path,
                cast_to=httpx2.Response,
                body=body,
                options={"headers": headers},
                stream=True,
                stream_cls=openai.AsyncStream[Any],
            )
            async for _line in raw_stream.aiter_lines():
                pass
            await raw_stream.aclose()
        return time.perf_counter() - start

    coco_runs: list[float] = []
    bare_runs: list[float] = []
    typed_runs: list[float] = []
    with spans:
        # Warm-up: one compaction (connection, lazy imports), then each bare request once.
        _, marker = await coco_once()
        recorded = server.requests_to(endpoint)[-1]
        body = recorded.body
        headers = {"x-coco-request-kind": recorded.headers.get("x-coco-request-kind", "")}
        await bare_once(body, headers, typed=False)
        span_runs.clear()
        for index in range(repeat):
            elapsed, marker = await coco_once()
            coco_runs.append(elapsed)
            bare_runs.append(await bare_once(body, headers, typed=False))
            if index < typed_repeat:
                typed_runs.append(await bare_once(body, headers, typed=True))

    await client.close()
    await session.close()
    pump_task.cancel()
    outside = [
        run_s * 1000 - spans_ms["model request"]
        for run_s, spans_ms in zip(coco_runs, span_runs, strict=True)
    ]
    return {
        "coco_s": statistics.median(coco_runs),
        "bare_s": statistics.median(bare_runs),
        "typed_s": statistics.median(typed_runs) if typed_runs else None,
        "coco_runs": coco_runs,
        "bare_runs": bare_runs,
        "typed_runs": typed_runs,
        "outside_request_ms": statistics.median(outside),
        "spans_ms": {k: statistics.median(r[k] for r in span_runs) for k in span_runs[0]},
        "tokens_before": marker.tokens_before,
        "tokens_after": marker.tokens_after,
        "request_mb": len(recorded.raw) / 1e6,
        "input_items": len(body.get("input", [])),
    }


def _spans(strategy: str) -> Spans:
    """Where Coco's own time goes during one compaction (for the report, not the figure)."""
    from app.core.compaction.paths import local as engine
    from app.core.compaction.paths import local_path, remote_path
    from app.core.compaction.paths import remote as remote_engine
    from app.core.conversation.history import ContextHistory
    from app.core.conversation.transcript import Transcript
    from app.core.rollout.store import RolloutWriter
    from app.core.sessions.record import SessionRecord

    request = (
        ("model request", remote_engine, "sample")
        if strategy == "remote"
        else ("model request", engine, "sample")
    )
    return Spans(
        [
            request,
            ("history.items() copy", ContextHistory, "items"),
            ("history.replace() recount", ContextHistory, "replace"),
            ("build_compacted_history", local_path, "build_compacted_history"),
            ("filter_remote_output", remote_path, "filter_remote_output"),
            ("rollout append", RolloutWriter, "append"),
            ("rollout fsync", RolloutWriter, "sync"),
            ("index update (worker thread)", SessionRecord, "_write_index"),
            ("transcript.entries() copies", Transcript, "entries"),
        ]
    )


def _make_history(data_dir: Path, tokens: int) -> Any:
    from bench._rollout import RolloutSynth

    counter = warm_counter()
    synth = RolloutSynth(TextMaker(seed=11, counter=counter), counter)
    return synth.write(
        data_dir / "sessions",
        turns=max(4, tokens // TURN_TOKENS),
        user_tokens=55,
        answer_tokens=410,
    )


def run(scale: float = 1.0) -> dict[str, Any]:
    """Measure local and remote compaction overhead; see the module docstring."""
    from app.demo import ModelServer

    repeat = 5 if scale >= 0.5 else 2
    typed_repeat = 3 if scale >= 0.5 else 1
    tokens = max(10_000, int(FULL_TOKENS * scale))
    server = ModelServer(mode="scripted").start()
    try:
        with temp_dir() as root:
            data_dir = root / "data"
            stats = _make_history(data_dir, tokens)
            out: dict[str, dict[str, Any]] = {}
            for strategy in ("local", "remote"):
                config = core_config(
                    server.url, data_dir, remote_compaction=strategy == "remote"
                )
                out[strategy] = asyncio.run(
                    _measure(server, config, stats.session_id, strategy, repeat, typed_repeat)
                )
    finally:
        server.stop()
    added = {k: v["coco_s"] - v["bare_s"] for k, v in out.items()}
    worst = max(added, key=lambda k: added[k])
    extra: dict[str, Any] = {
        "history_tokens": stats.history_tokens,
        "history_items": stats.history_items,
    }
    for name, data in out.items():
        extra[f"{name}_total_ms"] = round(data["coco_s"] * 1000, 2)
        extra[f"{name}_bare_request_ms"] = round(data["bare_s"] * 1000, 2)
        extra[f"{name}_added_ms"] = round(added[name] * 1000, 2)
        extra[f"{name}_ratio"] = round(data["coco_s"] / data["bare_s"], 3)
        extra[f"{name}_runs_ms"] = [round(x * 1000, 1) for x in data["coco_runs"]]
        extra[f"{name}_bare_runs_ms"] = [round(x * 1000, 1) for x in data["bare_runs"]]
        extra[f"{name}_sdk_typed_request_ms"] = (
            round(data["typed_s"] * 1000, 2) if data["typed_s"] is not None else None
        )
        extra[f"{name}_sdk_typed_runs_ms"] = [round(x * 1000, 1) for x in data["typed_runs"]]
        extra[f"{name}_added_outside_request_ms"] = round(data["outside_request_ms"], 2)
        extra[f"{name}_spans_ms"] = data["spans_ms"]
        extra[f"{name}_request_mb"] = round(data["request_mb"], 2)
        extra[f"{name}_tokens_before_after"] = [data["tokens_before"], data["tokens_after"]]
    return result(
        "compaction_overhead",
        workload=f"local and remote compaction of a {stats.history_tokens / 1e6:.2f} M-token "
        f"history ({stats.history_items} items), instant scripted model",
        reference="the same request body POSTed by a bare openai client, no compaction logic",
        figure=f"compaction / bare request ({worst}, the larger overhead)",
        measured=out[worst]["coco_s"],
        reference_value=out[worst]["bare_s"],
        targets=[
            # The goal of issue 22. Main-thread CPU Coco adds, local / remote: 29 / 26 ms before
            # the notes material, counts and containment of the carried notes were remembered
            # between compactions (wall 35-42 / 27-32 ms on an idle machine), 8-9 ms after.
            # A difference of two medians: on a small history Coco's own work is within the
            # runs' noise and the difference can come out below zero (both requests now reuse
            # their connection); that counts as adding nothing. The signed figures are in
            # ``extra`` (``local_added_ms``, ``remote_added_ms``).
            Target("local: Coco adds", max(0.0, added["local"]) * 1000, 25.0, "ms"),
            Target("remote: Coco adds", max(0.0, added["remote"]) * 1000, 25.0, "ms"),
        ],
        extra=extra,
        scale=scale,
    )


if __name__ == "__main__":
    main(run)
