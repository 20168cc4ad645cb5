"""Token estimates calibrated to each provider's own tokenizer.

Coco counts tokens with tiktoken (or ``ceil(bytes / 4)`` before it has loaded); a local model
counts with its own tokenizer. Against Gemma's tokenizer the estimate ran a few percent under
the server's count on English text and far over it on repetitive CJK text. Once a server has
reported the prompt tokens of a request, the ratio of that count to Coco's estimate of the same
request (instructions + tool definitions + items) says how far off Coco is for that server and
model; later estimates are multiplied by it, so the gauge, the pre-send size check and automatic
compaction stay close to the server's figures between reports.

One :class:`Calibration` per (base URL, model, basis). ``basis`` names the estimate the ratio was
measured against, since ratios of different estimators do not mix: ``"counter"`` is the session's
:class:`~app.core.tokens.counter.TokenCounter` count, ``"bytes"`` the ``ceil(bytes / 4)`` estimate the
Chat Completions provider makes of the messages it sends (its silent-truncation check).

The ratio is smoothed and clamped to ``[MIN_RATIO, MAX_RATIO]``: a moving average weighted by
the size of each request (older requests fade by ``DECAY`` at each new one), so one odd request
cannot swing it and a large request counts more than a small one. That matters because part of
a prompt is a fixed cost the ratio cannot express (the chat template's own tokens; tool
definitions a template drops), which distorts small requests most. Requests whose estimate is
under ``MIN_OBSERVED_ESTIMATE`` are not used at all. :class:`CalibrationStore` keeps the ratios in ``<data_dir>/calibration.json`` so they
survive a restart. No Qt here; the file holds base URLs and model names, never a key.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

log = logging.getLogger(__name__)

Basis = Literal["counter", "bytes"]

MIN_RATIO = 0.3
MAX_RATIO = 3.0
# How much of the weight of earlier requests is kept at each new one (the first is taken as is).
DECAY = 0.5
MIN_OBSERVED_ESTIMATE = 64
FILE_NAME = "calibration.json"
_FORMAT_VERSION = 1


def _clamp(ratio: float) -> float:
    return min(MAX_RATIO, max(MIN_RATIO, ratio))


@dataclass(frozen=True)
class Calibration:
    """How one server's token counts compare with Coco's estimate (1.0 until it has reported)."""

    ratio: float = 1.0
    samples: int = 0
    weight: float = 0.0  # the decayed sum of the estimates learnt from

    def apply(self, estimate: int) -> int:
        """``estimate`` in the server's tokens, as far as the reports so far tell."""
        if self.samples == 0 or estimate <= 0:
            return max(0, estimate)
        return max(1, round(estimate * self.ratio))

    def observed(self, estimate: int, reported: int) -> Calibration:
        """This calibration updated with one request: Coco estimated ``estimate`` tokens, the
        server counted ``reported``. Requests too small to tell anything leave it unchanged."""
        if estimate < MIN_OBSERVED_ESTIMATE or reported <= 0:
            return self
        ratio = _clamp(reported / estimate)
        kept = self.weight * DECAY if self.samples else 0.0
        ratio = _clamp((self.ratio * kept + ratio * estimate) / (kept + estimate))
        return replace(self, ratio=ratio, samples=self.samples + 1, weight=kept + estimate)


def tools_text(tools: list[dict[str, Any]]) -> str:
    """The text that stands for tool definitions in an estimate: their compact JSON (servers
    render the definitions into the prompt; they cost tokens like any other text)."""
    if not tools:
        return ""
    return json.dumps(tools, ensure_ascii=False, separators=(",", ":"))


def request_estimate(
    count: Callable[[str], int],
    *,
    instructions_and_items: int,
    tools: list[dict[str, Any]],
) -> int:
    """Coco's estimate of a whole request: the history's estimate (instructions and items, as
    ``ContextHistory.estimate()`` gives it) plus the tool definitions counted with ``count``."""
    text = tools_text(tools)
    return instructions_and_items + (count(text) if text else 0)


def _key(base_url: str, model: str, basis: Basis) -> tuple[str, str, str]:
    return (base_url.strip().rstrip("/"), model.strip(), basis)


class CalibrationStore:
    """Calibrations for every (base URL, model, basis), kept in a small JSON file.

    Thread-safe; the file is read on first use and rewritten atomically after each change. A
    missing, unreadable or damaged file starts empty (logged), never an error: a calibration is
    an improvement to estimates, not data the user would lose.
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._entries: dict[tuple[str, str, str], Calibration] | None = None

    def get(self, base_url: str, model: str, basis: Basis = "counter") -> Calibration:
        with self._lock:
            return self._loaded().get(_key(base_url, model, basis), Calibration())

    def apply(self, base_url: str, model: str, estimate: int, basis: Basis = "counter") -> int:
        """``estimate`` calibrated for this server and model (unchanged before any report)."""
        return self.get(base_url, model, basis).apply(estimate)

    def observe(
        self, base_url: str, model: str, estimate: int, reported: int, basis: Basis = "counter"
    ) -> Calibration:
        """Record one request's estimate and the server's count of it; returns the new
        calibration, saved to the file when it changed."""
        key = _key(base_url, model, basis)
        with self._lock:
            entries = self._loaded()
            old = entries.get(key, Calibration())
            new = old.observed(estimate, reported)
            if new != old:
                entries[key] = new
                self._save(entries)
            return new

    def _loaded(self) -> dict[tuple[str, str, str], Calibration]:
        if self._entries is None:
            self._entries = self._read()
        return self._entries

    def _read(self) -> dict[tuple[str, str, str], Calibration]:
        if self.path is None:
            return {}
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("ignoring unreadable token calibration file %s: %s", self.path, exc)
            return {}
        entries: dict[tuple[str, str, str], Calibration] = {}
        rows = raw.get("entries") if isinstance(raw, dict) else None
        for row in rows if isinstance(rows, list) else []:
            if not isinstance(row, dict):
                continue
            base_url, model, basis = row.get("base_url"), row.get("model"), row.get("basis")
            ratio, samples = row.get("ratio"), row.get("samples")
            weight = row.get("weight", 0.0)
            if (
                isinstance(base_url, str)
                and isinstance(model, str)
                and basis in ("counter", "bytes")
                and isinstance(ratio, (int, float))
                and isinstance(samples, int)
                and samples > 0
                and isinstance(weight, (int, float))
            ):
                entries[_key(base_url, model, basis)] = Calibration(
                    _clamp(float(ratio)), samples, max(0.0, float(weight))
                )
        return entries

    def _save(self, entries: dict[tuple[str, str, str], Calibration]) -> None:
        if self.path is None:
            return
        rows = [
            {
                "base_url": base_url,
                "model": model,
                "basis": basis,
                "ratio": round(calibration.ratio, 6),
                "samples": calibration.samples,
                "weight": round(calibration.weight, 1),
            }
            for (base_url, model, basis), calibration in sorted(entries.items())
        ]
        text = json.dumps({"version": _FORMAT_VERSION, "entries": rows}, indent=1)
        tmp = self.path.with_name(f"{self.path.name}.{uuid.uuid4().hex}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(text + "\n", encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError as exc:  # the ratios still work for this run
            log.warning("could not save token calibration to %s: %s", self.path, exc)
            # Its folder may be what failed (a file in its place): removing the temporary file
            # then fails too, and must not turn a figure not saved into a failed turn.
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)


_stores: dict[Path, CalibrationStore] = {}
_stores_lock = threading.Lock()


def calibration_store(data_dir: Path) -> CalibrationStore:
    """The process-wide store kept in ``<data_dir>/calibration.json`` (one object per folder,
    so every session and provider of a profile shares the same figures)."""
    path = (data_dir / FILE_NAME).absolute()
    with _stores_lock:
        store = _stores.get(path)
        if store is None:
            store = _stores[path] = CalibrationStore(path)
        return store
