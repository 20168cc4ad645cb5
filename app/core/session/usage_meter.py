"""The meter behind ``token_usage``: the history's usage in the server's tokens (calibrated),
the provider's last reported figures, the window and limit, and the token-count events."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import protocol as p
from ..providers.base import Usage
from ..sessions.record import STORAGE_ERRORS

if TYPE_CHECKING:
    from ..config import CoreConfig
    from ..conversation.history import ContextHistory
    from ..providers.sampling import StreamAttempt
    from ..tokens.calibration import Calibration, CalibrationStore
    from ..tokens.counter import TokenCounter

# A local model counts with its own tokenizer: once its server has reported the prompt tokens of
# a request, Coco's estimates are scaled by how far off they were, for the gauge, the
# pre-send check and automatic compaction. The Responses API is OpenAI's (or compatible with its
# tokenizer): tiktoken's counts are taken as they are there.


class UsageMeter:
    """Usage figures of one session; ``window``/``limit`` come from the compactor."""

    def __init__(
        self,
        *,
        config: Callable[[], CoreConfig],
        counter: TokenCounter,
        history: ContextHistory,
        calibration: CalibrationStore,
        window: Callable[[str | None], int | None],
        limit: Callable[[str | None], int | None],
        emit: Callable[[p.Event], None],
        record: Callable[[str, dict[str, Any]], None],
    ) -> None:
        self._config = config
        self._counter = counter
        self._history = history
        self._calibration = calibration
        self._window = window
        self._limit = limit
        self._emit = emit
        self._record = record
        self.last_usage = Usage()
        self.estimated_by_provider = False
        self.last_event: p.TokenCount | None = None  # the last token count emitted

    def window(self, model: str | None = None) -> int | None:
        return self._window(model)

    def limit(self, model: str | None = None) -> int | None:
        return self._limit(model)

    def calibration_now(self) -> Calibration | None:
        config = self._config()
        if config.wire_api != "chat":
            return None
        return self._calibration.get(config.base_url, config.model)

    def in_server_tokens(self) -> Callable[[int], int]:
        """Coco's count to the server's, as calibrated now (the identity until then)."""
        calibration = self.calibration_now()
        return calibration.apply if calibration else (lambda n: n)

    def usage(self) -> int:
        calibration = self.calibration_now()
        return self._history.usage(calibration.apply if calibration else None)

    def token_ratio(self) -> float:
        calibration = self.calibration_now()
        return calibration.ratio if calibration and calibration.samples else 1.0

    def learn(self, estimate: int, attempt: StreamAttempt) -> None:
        """Calibrate from a request Coco counted as ``estimate`` and the server reported."""
        usage = attempt.usage
        config = self._config()
        if (
            config.wire_api == "chat"
            and usage is not None
            and not usage.estimated
            and usage.input_tokens > 0
            and self._counter.exact
        ):
            self._calibration.observe(config.base_url, config.model, estimate, usage.input_tokens)

    def reported(self, usage: Usage) -> None:
        """The provider's figures for the request just answered."""
        self.last_usage = usage
        self.estimated_by_provider = usage.estimated
        self._history.record_api_usage(usage.total_tokens)

    def reset(self) -> None:
        """After a history rewrite the provider's last figures no longer describe it."""
        self.estimated_by_provider = False
        self.last_usage = Usage()

    def restore(self, payload: dict[str, Any]) -> None:
        """The provider's figures as a recorded token count left them (resume)."""
        self.estimated_by_provider = bool(payload.get("usage_estimated"))
        self.last_usage = Usage(
            input_tokens=int(payload.get("input", 0)),
            output_tokens=int(payload.get("output", 0)),
            cached_tokens=int(payload.get("cached", 0)),
            reasoning_tokens=int(payload.get("reasoning", 0)),
        )

    def token_event(self) -> p.TokenCount:
        estimate = self._history.usage_is_estimate
        approximate = (
            (estimate and not self._counter.exact)
            or self.estimated_by_provider
            or self._counter.estimating  # a huge text's estimate: its exact count follows
        )
        last = self.last_usage
        return p.TokenCount(
            total=self.usage(),
            input=last.input_tokens,
            output=last.output_tokens,
            cached=last.cached_tokens,
            reasoning=last.reasoning_tokens,
            context_window=self._window(None),
            auto_compact_limit=self._limit(None) if self._config().auto_compact else None,
            approximate=approximate,
            source="estimate" if estimate else "api",
        )

    def current(self) -> p.TokenCount:
        """What ``token_usage`` answers: the last figures emitted, else the figures now."""
        return self.last_event or self.token_event()

    def emit_usage(self) -> None:
        """Emit the figures and record them, so resume restores what the server reported."""
        event = self.token_event()
        self._emit(event)
        try:
            self._record(
                "event",
                {
                    "kind": "token_count",
                    "api_total": self._history.api_total,
                    "mark": self._history.mark,
                    "usage_estimated": self.estimated_by_provider,
                    **event.model_dump(exclude={"type"}),
                },
            )
        except STORAGE_ERRORS:
            pass  # resume then estimates the usage instead of restoring the reported figure
