"""A compaction that ends without compacting: which failures end it at once, the sentence it
says, and the record that draws its marker again on resume (``compaction/failure.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from app.core import protocol as p
from app.core.compaction.failure import (
    ended_events,
    ended_record,
    fail_fast,
    failure_text,
    server_unreachable,
)
from app.core.conversation.transcript import ENDED_KIND
from app.core.providers.base import ProviderError


def _refused() -> ProviderError:
    return ProviderError("connection", "Nothing answers at 127.0.0.1:9.", code="refused")


def _timeout() -> ProviderError:
    return ProviderError("connection", "The server did not answer in time.", code="timeout")


@pytest.mark.parametrize(
    ("error", "unreachable"),
    [
        (_refused(), True),
        (ProviderError("connection", "No such host.", code=None), True),
        (_timeout(), False),  # a slow server may answer the next attempt
        (ProviderError("server", "Internal error.", status=500, code="refused"), False),
        (ProviderError("rate_limit", "Slow down.", status=429), False),
    ],
)
def test_only_a_connection_that_is_not_a_timeout_is_unreachable(
    error: ProviderError, unreachable: bool
) -> None:
    assert server_unreachable(error) is unreachable


def test_fail_fast_raises_an_unreachable_server_before_any_notice() -> None:
    said: list[tuple[int, int, ProviderError]] = []
    on_retry = fail_fast(lambda attempt, most, error: said.append((attempt, most, error)))
    error = _refused()
    with pytest.raises(ProviderError) as raised:
        on_retry(1, 5, error)
    assert raised.value is error
    assert said == []


def test_fail_fast_passes_any_other_failure_on_to_the_notice_as_it_came() -> None:
    said: list[tuple[int, int, ProviderError]] = []
    on_retry = fail_fast(lambda attempt, most, error: said.append((attempt, most, error)))
    slow, busy = _timeout(), ProviderError("server", "Busy.", status=503)
    on_retry(2, 5, slow)
    on_retry(3, 4, busy)
    assert said == [(2, 5, slow), (3, 4, busy)]


def test_the_sentence_names_the_reason_for_an_unreachable_server_and_the_path_otherwise() -> None:
    assert failure_text(_refused(), "remote") == "Could not compact: Nothing answers at 127.0.0.1:9."
    assert failure_text(_timeout(), "remote") == (
        "Error running remote compact task: The server did not answer in time."
    )
    busy = ProviderError("server", "Busy.", status=503)
    assert failure_text(busy, "local") == "Error running local compact task: Busy."


def test_the_ended_record_keeps_its_focus_only_when_there_is_one() -> None:
    assert ended_record("cmp_1", "manual", "stopped", "the API keys") == {
        "kind": ENDED_KIND, "item_id": "cmp_1", "trigger": "manual", "status": "stopped",
        "focus": "the API keys",
    }
    for none in ("", None):
        assert ended_record("cmp_2", "auto", "failed", none) == {
            "kind": ENDED_KIND, "item_id": "cmp_2", "trigger": "auto", "status": "failed",
        }


def test_a_recorded_ending_draws_the_marker_then_how_it_ended() -> None:
    entry = ended_record("cmp_9", "overflow", "stopped", "tests")
    started, ended = ended_events(entry, "turn_4")
    assert started == p.ItemStarted(
        turn_id="turn_4",
        item=p.TurnItem(id="cmp_9", kind="context_compaction", data={"trigger": "overflow"}),
    )
    assert ended == p.CompactionEnded(
        turn_id="turn_4", item_id="cmp_9", status="stopped", focus="tests"
    )


@pytest.mark.parametrize("trigger", ["manual", "auto", "overflow", "server"])
def test_each_known_trigger_is_replayed_as_recorded(trigger: str) -> None:
    started, _ended = ended_events(ended_record("c", trigger, "failed", None), None)
    assert isinstance(started, p.ItemStarted)
    assert started.item.data == {"trigger": trigger}


@pytest.mark.parametrize("trigger", [None, "", "Manual", "remote", 3])
def test_an_unknown_or_missing_trigger_is_replayed_as_automatic(trigger: Any) -> None:
    entry: dict[str, Any] = {"kind": ENDED_KIND, "item_id": "c", "status": "failed"}
    if trigger is not None:
        entry["trigger"] = trigger
    started, _ended = ended_events(entry, None)
    assert isinstance(started, p.ItemStarted)
    assert started.item.data == {"trigger": "auto"}


@pytest.mark.parametrize(
    ("status", "replayed"),
    [("stopped", "stopped"), ("failed", "failed"), ("Stopped", "failed"), (None, "failed")],
)
def test_only_a_recorded_stop_is_replayed_as_stopped(status: Any, replayed: str) -> None:
    _started, ended = ended_events({"item_id": "c", "status": status}, "t")
    assert isinstance(ended, p.CompactionEnded)
    assert ended.status == replayed


def test_a_damaged_entry_still_draws_a_marker_with_what_it_can() -> None:
    """No item id, a focus that is not text, no turn: the marker is drawn, nothing invented."""
    started, ended = ended_events({"item_id": None, "focus": 42}, None)
    assert isinstance(started, p.ItemStarted) and isinstance(ended, p.CompactionEnded)
    assert started.turn_id == "" and started.item.id == ""
    assert ended.turn_id is None and ended.item_id == "" and ended.focus is None
    assert ended.status == "failed"
