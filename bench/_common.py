"""Shared plumbing for the benchmarks: environment, timing, results and synthetic conversations.

Every benchmark returns the same shape of dict (see :func:`result`): the measured time, the
reference time measured in the same run, their ratio, extra figures, and each target with
pass/fail. Nothing here asserts a target: the benchmarks report, the reader judges.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

REPO = Path(__file__).resolve().parents[1]
SHARED_TIKTOKEN = Path("/work/shared/data/tiktoken-cache")
MODEL = "gpt-4.1"  # o200k_base; its 1 047 576-token window holds a 1 M-token history


def setup_env() -> Path | None:
    """Point tiktoken at the shared BPE files (when present) and return that folder."""
    folder = Path(os.environ.get("TIKTOKEN_CACHE_DIR") or SHARED_TIKTOKEN)
    if folder.is_dir():
        os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
        return folder
    return None


@contextmanager
def temp_dir(prefix: str = "coco-bench-") -> Iterator[Path]:
    """An isolated data directory, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix=prefix) as name:
        yield Path(name)


def core_config(base_url: str, data_dir: Path, **overrides: Any) -> Any:
    """A ``CoreConfig`` for benchmarks: local data dir, shared tokenizer, no downloads."""
    from app.core import CoreConfig

    folder = setup_env()
    values: dict[str, Any] = {
        "base_url": base_url,
        "api_key": "sk-bench-not-a-secret",
        "model": MODEL,
        "instructions": "You are Coco, a helpful assistant.",
        "data_dir": data_dir,
        "tokenizer_cache_dir": folder or data_dir / "tiktoken",
        "tokenizer_download": False,
        "retry_base_delay": 0.001,
    }
    values.update(overrides)
    return CoreConfig(**values)


def warm_counter() -> Any:
    """A ``TokenCounter`` for :data:`MODEL` whose encoding is loaded (exact counts)."""
    from app.core.tokens.counter import TokenCounter

    folder = setup_env()
    counter = TokenCounter(MODEL, folder, allow_download=False)
    counter.wait_ready(60)
    return counter


# ------------------------------------------------------------------------------ timing


def median_time(fn: Callable[[], Any], repeat: int) -> tuple[float, list[float]]:
    """Median wall time of ``fn`` over ``repeat`` runs (seconds), and every run."""
    times: list[float] = []
    for _ in range(max(1, repeat)):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), times


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MB (Linux reports KiB)."""
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024 if sys.platform != "darwin" else peak / (1024 * 1024)


def current_rss_mb() -> float:
    """Resident set size now, in MB (Linux /proc; falls back to the peak elsewhere)."""
    try:
        with open("/proc/self/statm") as file:
            pages = int(file.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / (1024 * 1024)
    except (OSError, ValueError):
        return peak_rss_mb()


# ------------------------------------------------------------------------------ results


@dataclass(frozen=True)
class Target:
    """One target: ``value`` must be ≤ ``limit`` (in ``unit``)."""

    what: str
    value: float
    limit: float
    unit: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "what": self.what,
            "value": round(self.value, 4),
            "limit": self.limit,
            "unit": self.unit,
            "pass": self.value <= self.limit,
        }


def result(
    name: str,
    *,
    workload: str,
    reference: str,
    measured: float,
    reference_value: float,
    targets: list[Target],
    unit: str = "s",
    figure: str | None = None,
    extra: dict[str, Any] | None = None,
    scale: float = 1.0,
) -> dict[str, Any]:
    """The dict every ``run()`` returns.

    ``measured`` and ``reference_value`` are in ``unit`` (seconds, or bytes for memory);
    ``ratio`` is always ``measured / reference_value``.
    """
    ratio = measured / reference_value if reference_value > 0 else float("inf")
    checked = [t.as_dict() for t in targets]
    return {
        "name": name,
        "workload": workload,
        "reference": reference,
        "figure": figure or f"{name} / reference",
        "unit": unit,
        "measured": measured,
        "reference_value": reference_value,
        "ratio": ratio,
        "targets": checked,
        "pass": all(t["pass"] for t in checked),
        "extra": extra or {},
        "scale": scale,
    }


def format_amount(value: float, unit: str) -> str:
    """``value`` in a readable unit: ms or s for seconds, MB for bytes."""
    if unit == "bytes":
        return f"{value / (1024 * 1024):.1f} MB"
    if value < 1:
        return f"{value * 1000:.2f} ms"
    return f"{value:.3f} s"


def print_result(res: dict[str, Any]) -> None:
    """Human-readable output of one benchmark."""
    unit = res["unit"]
    print(f"{res['name']}: {res['workload']}")
    print(f"  reference: {res['reference']}")
    print(
        f"  {res['figure']}: {format_amount(res['measured'], unit)} vs "
        f"{format_amount(res['reference_value'], unit)} = ratio {res['ratio']:.4g}"
    )
    for key, value in res["extra"].items():
        print(f"  {key}: {value}")
    for target in res["targets"]:
        mark = "PASS" if target["pass"] else "FAIL"
        print(
            f"  [{mark}] {target['what']}: {target['value']:g} {target['unit']} "
            f"(target ≤ {target['limit']:g})"
        )


def main(run: Callable[..., dict[str, Any]]) -> None:
    """``__main__`` of a benchmark: ``--scale X`` (default 1), ``--json`` for machine output."""
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--json", action="store_true", help="print the result as one JSON line")
    args = parser.parse_args()
    res = run(scale=args.scale)
    if args.json:
        print("BENCH-RESULT " + json.dumps(res))
    else:
        print_result(res)


def run_worker(module: str, *args: str, timeout: float = 600.0) -> dict[str, Any]:
    """Run ``python -m <module> <args>`` in a fresh interpreter; it prints one result line
    ``BENCH-WORKER <json>``. A fresh process keeps start-up and memory figures clean."""
    import subprocess

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO), *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])]
    )
    setup_env()
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        env["TIKTOKEN_CACHE_DIR"] = os.environ["TIKTOKEN_CACHE_DIR"]
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    proc = subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )
    for line in proc.stdout.splitlines():
        if line.startswith("BENCH-WORKER "):
            data: dict[str, Any] = json.loads(line[len("BENCH-WORKER ") :])
            return data
    raise RuntimeError(
        f"worker {module} {' '.join(args)} failed (exit {proc.returncode}):\n"
        f"{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    )


def worker_reply(data: dict[str, Any]) -> None:
    """What a worker prints for :func:`run_worker`."""
    print("BENCH-WORKER " + json.dumps(data), flush=True)


# ------------------------------------------------------------------------------ text

_WORDS = ["the", "of", "and", "to", "a", "in", "is", "it", "that", "for", "you", "with", "on", "as", "this", "be", "are", "was", "have", "not", "or", "by", "from", "but", "what", "all", "can", "if", "when", "your", "there", "use", "which", "their", "will", "one", "each", "about", "how", "up", "out", "them", "then", "she", "many", "some", "so", "these", "would", "other", "into", "has", "more", "her", "two", "like", "him", "see", "time", "could", "no", "make", "than", "first", "been", "its", "who", "now", "people", "my", "made", "over", "did", "down", "only", "way", "find", "any", "new", "work", "part", "take", "get", "place", "made", "live", "where", "after", "back", "little", "only", "round", "year", "came", "show", "every", "good", "give", "under", "name", "very", "through", "just", "form", "sentence", "great", "think", "say", "help", "low", "line", "differ", "turn", "cause", "much", "mean", "before", "move", "right", "boy", "old", "too", "same", "tell", "does", "set", "three", "want", "air", "well", "also", "play", "small", "end", "put", "home", "read", "hand", "port", "large", "spell", "add", "even", "land", "here", "must", "big", "high", "such", "follow", "act", "why", "ask", "men", "change", "went", "light", "kind", "off", "need", "house", "picture", "try", "again", "animal", "point", "mother", "world", "near", "build", "self", "earth", "father", "head", "stand", "own", "page", "should", "country", "found", "answer", "school", "grow", "study", "still", "learn", "plant", "cover", "food", "sun", "four", "between", "state", "keep", "eye", "never", "last", "let", "thought", "city", "tree", "cross", "farm", "hard", "start", "might", "story", "saw", "compaction", "context", "window", "token", "history", "summary", "rollout", "session", "model", "request", "response", "stream", "delta", "buffer", "parser", "function", "argument", "return", "value", "config", "index", "transcript"]

_CODE = (
    "```python\n"
    "def {name}(items: list[dict], limit: int = {n}) -> int:\n"
    "    total = 0\n"
    "    for item in items[:limit]:\n"
    "        total += len(item.get(\"text\", \"\"))\n"
    "    return total\n"
    "```\n"
)


def _sentence(rng: random.Random, words: int) -> str:
    chosen = rng.choices(_WORDS, k=words)
    chosen[0] = chosen[0].capitalize()
    return " ".join(chosen) + "."


def _paragraph(rng: random.Random, words: int) -> str:
    out: list[str] = []
    while words > 0:
        n = min(words, rng.randint(8, 20))
        out.append(_sentence(rng, n))
        words -= n
    return " ".join(out)


class TextMaker:
    """Deterministic English-like text of a given token size, with some Markdown in answers.

    Text comes from a pool of pre-generated paragraphs (fast to make in bulk); ``tokens_per_word``
    is calibrated against the real tokenizer when one is given.
    """

    def __init__(self, seed: int = 5, counter: Any | None = None) -> None:
        self.rng = random.Random(seed)
        self._pool = [_paragraph(self.rng, self.rng.randint(20, 60)) for _ in range(400)]
        self._bullets = [
            "- " + _sentence(self.rng, self.rng.randint(5, 12)) for _ in range(200)
        ]
        sample = " ".join(self._pool)
        if counter is not None:
            self.tokens_per_word = counter.count(sample) / len(sample.split())
        else:
            self.tokens_per_word = 1.1

    def plain(self, tokens: int) -> str:
        """Plain prose of about ``tokens`` tokens."""
        target_words = max(1, int(tokens / self.tokens_per_word))
        parts: list[str] = []
        words = 0
        while words < target_words:
            para = self.rng.choice(self._pool)
            parts.append(para)
            words += para.count(" ") + 1
        text = "\n\n".join(parts)
        if words > target_words:  # cut to size on a word boundary
            text = " ".join(text.split(" ")[:target_words])
        return text

    def markdown(self, tokens: int) -> str:
        """An assistant-style answer: a heading, prose, a list and sometimes a code block."""
        rng = self.rng
        head = f"## {_sentence(rng, 4)[:-1]}\n\n"
        bullets = "\n".join(rng.choice(self._bullets) for _ in range(3)) + "\n\n"
        code = ""
        if rng.random() < 0.5:
            code = _CODE.format(name=f"count_{rng.randint(0, 999)}", n=rng.randint(2, 99)) + "\n"
        # Markup and code cost more tokens per word than prose.
        overhead = int(len((head + bullets + code).split()) * self.tokens_per_word * 1.5)
        first, _, rest = self.plain(max(10, tokens - overhead)).partition("\n\n")
        return head + first + "\n\n" + bullets + code + rest


# ------------------------------------------------------------------------------ spans


class Spans:
    """Time spent inside chosen functions while active: ``{label: seconds}``.

    Wraps ``owner.name`` (a class or a module attribute; sync functions, coroutine functions
    and async generator functions) and restores it on exit. Nested spans of the same label
    count once (the outermost call).
    """

    def __init__(self, targets: list[tuple[str, Any, str]]) -> None:
        self.targets = targets
        self.totals: dict[str, float] = {label: 0.0 for label, _, _ in targets}
        self.calls: dict[str, int] = {label: 0 for label, _, _ in targets}
        self._saved: list[tuple[Any, str, Any]] = []
        self._depth: dict[str, int] = {label: 0 for label, _, _ in targets}

    def _wrap(self, label: str, fn: Any) -> Any:
        import functools
        import inspect

        spans = self

        def enter() -> float:
            spans._depth[label] += 1
            return time.perf_counter()

        def leave(start: float) -> None:
            spans._depth[label] -= 1
            if spans._depth[label] == 0:
                spans.totals[label] += time.perf_counter() - start
                spans.calls[label] += 1

        if inspect.isasyncgenfunction(fn):

            @functools.wraps(fn)
            async def agen(*args: Any, **kwargs: Any) -> Any:
                start = enter()
                try:
                    async for value in fn(*args, **kwargs):
                        yield value
                finally:
                    leave(start)

            return agen
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def coro(*args: Any, **kwargs: Any) -> Any:
                start = enter()
                try:
                    return await fn(*args, **kwargs)
                finally:
                    leave(start)

            return coro

        @functools.wraps(fn)
        def sync(*args: Any, **kwargs: Any) -> Any:
            start = enter()
            try:
                return fn(*args, **kwargs)
            finally:
                leave(start)

        return sync

    def __enter__(self) -> Self:
        for label, owner, name in self.targets:
            original = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
            self._saved.append((owner, name, original))
            setattr(owner, name, self._wrap(label, original))
        return self

    def __exit__(self, *exc: object) -> None:
        for owner, name, original in reversed(self._saved):
            setattr(owner, name, original)
        self._saved.clear()

    def reset(self) -> None:
        for label in self.totals:
            self.totals[label] = 0.0
            self.calls[label] = 0

    def snapshot_ms(self) -> dict[str, float]:
        return {label: round(value * 1000, 2) for label, value in self.totals.items()}
