"""Token accounting: append one item to a 1 000 000-token history and read the usage.

Figure: ``ContextHistory.append(item)`` followed by ``usage()`` (median over many appends, each a
fresh ~500-token answer), against a full recount of the same history with the same
``TokenCounter`` (what a non-incremental design would do on every append).

Target: ≤ 1 ms per append (and so: incremental, not a recount). The tokenizer is loaded first,
so counts are exact (tiktoken), the costlier path.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from bench._common import Target, TextMaker, main, median_time, result, warm_counter

FULL_TOKENS = 1_000_000
ITEM_TOKENS = 500


def _build_items(text: TextMaker, tokens: int) -> list[dict[str, Any]]:
    from app.core.items import assistant_message, user_message

    items: list[dict[str, Any]] = []
    budget = 0
    turn = 0
    while budget < tokens:
        if turn % 2 == 0:
            body = text.plain(60)
            items.append(user_message(body))
            budget += 64
        else:
            body = text.markdown(ITEM_TOKENS)
            items.append(assistant_message(body, f"msg_{turn:08d}"))
            budget += ITEM_TOKENS + 4
        turn += 1
    return items


def run(scale: float = 1.0) -> dict[str, Any]:
    """Measure incremental append+usage against a full recount; see the module docstring."""
    from app.core.conversation.history import ContextHistory

    counter = warm_counter()
    text = TextMaker(seed=7, counter=counter)
    target_tokens = max(20_000, int(FULL_TOKENS * scale))
    history = ContextHistory(counter, "You are Coco, a helpful assistant.")
    build_start = time.perf_counter()
    for item in _build_items(text, target_tokens):
        history.append(item)
    # Top up with exact counts until the history really holds the target.
    while history.usage() < target_tokens:
        history.append(_build_items(text, ITEM_TOKENS)[-1])
    build_s = time.perf_counter() - build_start
    start_tokens = history.usage()
    start_items = len(history)

    appends = 200 if scale >= 0.5 else 40
    new_items = [_build_items(text, 2 * ITEM_TOKENS)[1] for _ in range(appends)]
    per_append: list[float] = []
    for item in new_items:
        began = time.perf_counter()
        history.append(item)
        history.usage()
        per_append.append(time.perf_counter() - began)
    append_s = statistics.median(per_append)

    items = history.raw_items()

    def recount() -> int:
        return sum(counter.count_item(item) for item in items)

    recount_s, recount_runs = median_time(recount, 3 if scale >= 0.5 else 1)
    recounted = recount()
    return result(
        "token_accounting",
        workload=f"append one ~{ITEM_TOKENS}-token item to a {start_tokens / 1e6:.2f} M-token "
        f"history ({start_items} items) and read usage()",
        reference="a full recount of the history (same TokenCounter)",
        figure="append+usage / full recount",
        measured=append_s,
        reference_value=recount_s,
        targets=[Target("time per append", append_s * 1000, 1.0, "ms")],
        extra={
            "appends_timed": appends,
            "append_p90_ms": round(sorted(per_append)[int(0.9 * len(per_append))] * 1000, 4),
            "append_max_ms": round(max(per_append) * 1000, 4),
            "recount_runs_s": [round(x, 4) for x in recount_runs],
            "history_tokens_after": history.usage(),
            "recount_tokens": recounted,
            "exact_counts": counter.exact,
            "build_s": round(build_s, 2),
        },
        scale=scale,
    )


if __name__ == "__main__":
    main(run)
