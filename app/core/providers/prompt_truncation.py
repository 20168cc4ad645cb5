"""Catching a prompt a server cut silently (Ollama answers 200 to an over-long prompt): a
reported prompt count under half the calibrated estimate is a context overflow; plausible
counts teach the calibration the server's tokenizer."""

from __future__ import annotations

import math

from ..tokens.calibration import Calibration, CalibrationStore
from .base import ProviderError

# Below this estimate a low reported count is as likely a tokenizer difference as truncation.
TRUNCATION_MIN_ESTIMATE = 2000


def estimate_tokens(text: str) -> int:
    """The spec's estimate: ceil(utf-8 bytes / 4)."""
    return math.ceil(len(text.encode("utf-8")) / 4)


class TruncationCheck:
    """One provider's check: the estimate calibrated per model (basis ``"bytes"``) to the
    server's own counts, and the last report per model.

    The estimate is calibrated once the server has reported a plausible count: Gemma's
    tokenizer counts some text at under half of Coco's estimate, which the raw comparison
    would take for truncation. Without a ``CalibrationStore`` the raw estimate is used.
    """

    def __init__(self, base_url: str, store: CalibrationStore | None) -> None:
        self._base_url = base_url
        self._store = store
        # Per model, the last (estimate, reported) pair: see _learn.
        self._last_report: dict[str, tuple[int, int]] = {}

    def calibration(self, model: str) -> Calibration:
        """What has been learnt of ``model``'s tokenizer so far."""
        if self._store is None:
            return Calibration()
        return self._store.get(self._base_url, model, "bytes")

    def expected(self, model: str, estimate: int) -> int:
        """The prompt count the server should report for ``estimate``, as calibrated."""
        if self._store is None:
            return estimate
        return self._store.get(self._base_url, model, "bytes").apply(estimate)

    def check(self, model: str, estimate: int, reported: int | None) -> None:
        """Raise ``context_overflow`` when ``reported`` is under half of the expected count
        (above :data:`TRUNCATION_MIN_ESTIMATE`); else learn from it. ``None``: the server
        reported no count, nothing to check or learn."""
        expected = self.expected(model, estimate)
        if reported is None:
            return
        if expected > TRUNCATION_MIN_ESTIMATE and reported < expected / 2:
            raise ProviderError(
                "context_overflow",
                f"the server truncated the prompt (reported {reported} tokens for about "
                f"{expected}); the input exceeds its context length",
            )
        self._learn(model, estimate, reported)

    def _learn(self, model: str, estimate: int, reported: int) -> None:
        """Learn from a plausible report, except one that looks silently truncated without
        falling under half: the estimate grew by a quarter since the last report and the count
        stayed put (a prompt cut at the server's window). Learning from those would slowly
        teach the check to accept truncation."""
        previous = self._last_report.get(model)
        self._last_report[model] = (estimate, reported)
        if self._store is None:
            return
        if (
            previous is not None
            and estimate >= previous[0] * 1.25
            and reported <= previous[1] * 1.02
        ):
            return
        self._store.observe(self._base_url, model, estimate, reported, "bytes")
