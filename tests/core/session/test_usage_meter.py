"""The meter behind ``token_usage`` (``app.core.session.usage_meter``): reported figures, their reset and
restore, calibration from a local server's counts, and the recorded token-count event."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.core import CoreConfig
from app.core import protocol as p
from app.core.conversation.history import ContextHistory
from app.core.items import user_message
from app.core.providers.base import Usage
from app.core.providers.sampling import StreamAttempt
from app.core.rollout.store import RolloutWriteError
from app.core.session.usage_meter import UsageMeter
from app.core.tokens.calibration import calibration_store
from app.core.tokens.counter import TokenCounter
from tests.conftest import TIKTOKEN_CACHE, needs_tiktoken


class Meter:
    def __init__(self, tmp_path: Path, wire_api: str = "chat", fail_record: bool = False) -> None:
        self.config = CoreConfig(
            base_url="http://localhost:1/v1", api_key="k", model="m", wire_api=wire_api,
            data_dir=tmp_path,
        )
        self.counter = TokenCounter("gpt-4o", TIKTOKEN_CACHE, allow_download=False)
        self.history = ContextHistory(self.counter)
        self.events: list[p.Event] = []
        self.records: list[tuple[str, dict[str, Any]]] = []

        def record(kind: str, payload: dict[str, Any]) -> None:
            if fail_record:
                raise RolloutWriteError(tmp_path / "r.jsonl", OSError(28, "No space left"))
            self.records.append((kind, payload))

        self.meter = UsageMeter(
            config=lambda: self.config, counter=self.counter, history=self.history,
            calibration=calibration_store(tmp_path), window=lambda _m: 8000,
            limit=lambda _m: 7000, emit=self.events.append, record=record,
        )


def test_reported_figures_make_an_api_count_until_a_reset(tmp_path: Path) -> None:
    m = Meter(tmp_path)
    m.history.append(user_message("hello there"))
    assert m.meter.token_event().source == "estimate"
    m.meter.reported(Usage(input_tokens=90, output_tokens=10, total_tokens=100))
    event = m.meter.token_event()
    assert (event.source, event.total, event.input, event.output) == ("api", 100, 90, 10)
    assert (event.context_window, event.auto_compact_limit) == (8000, 7000)
    m.meter.reset()
    assert (m.meter.token_event().input, m.meter.estimated_by_provider) == (0, False)


def test_a_recorded_token_count_restores_the_providers_figures(tmp_path: Path) -> None:
    m = Meter(tmp_path)
    m.meter.reported(Usage(input_tokens=5, output_tokens=7, total_tokens=12, estimated=True))
    m.meter.emit_usage()
    kind, payload = m.records[-1]
    assert kind == "event" and payload["kind"] == "token_count"
    assert payload["usage_estimated"] is True and payload["api_total"] == 12
    fresh = Meter(tmp_path)
    fresh.meter.restore(payload)
    event = fresh.meter.token_event()
    assert (event.input, event.output, event.approximate) == (5, 7, True)


def test_token_usage_answers_the_last_figures_emitted(tmp_path: Path) -> None:
    m = Meter(tmp_path)
    assert m.meter.current().total == m.meter.token_event().total  # none emitted yet
    shown = m.meter.token_event().model_copy(update={"total": 4242})
    m.meter.last_event = shown
    assert m.meter.current() is shown


@needs_tiktoken
def test_a_local_servers_count_calibrates_the_usage(tmp_path: Path) -> None:
    m = Meter(tmp_path)
    assert m.counter.wait_ready(60)  # only exact counts are calibrated
    m.history.append(user_message("word " * 400))
    before = m.meter.usage()
    assert m.meter.token_ratio() == 1.0
    attempt = StreamAttempt(usage=Usage(input_tokens=2 * before, total_tokens=2 * before))
    m.meter.learn(before, attempt)
    assert m.meter.token_ratio() > 1.5
    assert m.meter.usage() > 1.5 * before
    assert m.meter.in_server_tokens()(100) > 150


def test_the_responses_api_is_never_calibrated(tmp_path: Path) -> None:
    m = Meter(tmp_path, wire_api="responses")
    m.history.append(user_message("word " * 400))
    before = m.meter.usage()
    m.meter.learn(before, StreamAttempt(usage=Usage(input_tokens=3 * before)))
    assert m.meter.calibration_now() is None
    assert (m.meter.usage(), m.meter.in_server_tokens()(100)) == (before, 100)


def test_a_token_count_that_cannot_be_saved_is_still_shown(tmp_path: Path) -> None:
    m = Meter(tmp_path, fail_record=True)
    m.meter.emit_usage()
    assert [event.type for event in m.events] == ["token_count"]
