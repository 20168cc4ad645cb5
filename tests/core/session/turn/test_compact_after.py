"""The compaction a turn leads to when it ends over the limit (``CompactAfterTurn``): when it is
due, which turns lead to it, and the compaction turn's events and status."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from app.core import protocol as p
from app.core.rollout.writer import RolloutWriteError
from app.core.session.turn.compact_after import CompactAfterTurn


@dataclass
class _Meter:
    used: int = 1000
    auto_limit: int | None = 900

    def usage(self) -> int:
        return self.used

    def limit(self) -> int | None:
        return self.auto_limit

    def window(self) -> int:
        return 4096


@dataclass
class _Compactor:
    unchanged_since_compaction: bool = False
    post_compaction_usage: int | None = None
    result: bool | BaseException = True
    runs: list[tuple[str, str]] = field(default_factory=list)

    async def run(self, turn_id: str, trigger: str) -> bool:
        self.runs.append((turn_id, trigger))
        if isinstance(self.result, BaseException):
            raise self.result
        return self.result


@dataclass
class _Refiner:
    meter: _Meter
    exact: int | None = None  # the exact count, once the huge texts are counted
    settled_calls: int = 0

    async def settled(self) -> None:
        self.settled_calls += 1
        if self.exact is not None:
            self.meter.used = self.exact


@dataclass
class _Requests:
    compacts: bool = True

    def client_compacts(self) -> bool:
        return self.compacts


@dataclass
class _Turns:
    ended: str | None = "completed"


@dataclass
class _Store:
    flushes: int = 0

    async def flush_in_worker(self) -> None:
        self.flushes += 1


@dataclass
class _Notices:
    failed: list[tuple[str, Exception, str | None]] = field(default_factory=list)

    def storage_failed(self, turn_id: str, exc: Exception, unsaved: str | None) -> None:
        self.failed.append((turn_id, exc, unsaved))


class _Rig:
    def __init__(self, **meter: Any) -> None:
        self.meter = _Meter(**meter)
        self.compactor = _Compactor()
        self.refiner = _Refiner(self.meter)
        self.requests = _Requests()
        self.turns = _Turns()
        self.store = _Store()
        self.notices = _Notices()
        self.events: list[p.Event] = []
        self.after = CompactAfterTurn(
            turns=self.turns, compactor=self.compactor, refiner=self.refiner,  # type: ignore[arg-type]
            meter=self.meter, requests=self.requests, notices=self.notices,  # type: ignore[arg-type]
            store=self.store, emit=self.events.append,  # type: ignore[arg-type]
        )


def test_due_once_the_history_reaches_the_limit() -> None:
    rig = _Rig(used=899, auto_limit=900)
    assert not rig.after.due()
    rig.meter.used = 900
    assert rig.after.due()  # at the limit: due
    rig.meter.auto_limit = None  # no limit known
    assert not rig.after.due()


def test_not_due_with_automatic_compaction_off_or_nothing_new_since_the_last() -> None:
    rig = _Rig()
    assert rig.after.due()
    rig.requests.compacts = False  # off, or the server compacts itself
    assert not rig.after.due()
    rig.requests.compacts = True
    rig.compactor.unchanged_since_compaction = True
    assert not rig.after.due()


def test_after_a_compaction_that_stayed_over_the_limit_half_a_limit_of_growth_is_needed() -> None:
    rig = _Rig(used=1449, auto_limit=900)
    rig.compactor.post_compaction_usage = 1000  # it could not get under 900
    assert not rig.after.due()
    rig.meter.used = 1450  # 1000 + 900 // 2
    assert rig.after.due()


@pytest.mark.parametrize("ended", ["failed", "aborted", None])
def test_only_a_completed_turn_leads_to_it(ended: str | None) -> None:
    rig = _Rig()
    rig.turns.ended = ended
    assert rig.after.task() is None
    assert rig.turns.ended is None  # taken: the next task is judged on its own


def test_a_completed_turn_under_the_limit_leads_to_none() -> None:
    rig = _Rig(used=10)
    assert rig.after.task() is None
    assert rig.turns.ended is None


async def test_a_completed_turn_over_the_limit_runs_an_automatic_compaction_turn() -> None:
    rig = _Rig()
    task = rig.after.task()
    assert task is not None and rig.turns.ended is None
    await task
    started, complete = rig.events
    assert isinstance(started, p.TurnStarted) and isinstance(complete, p.TurnComplete)
    assert (started.kind, started.context_window) == ("compact", 4096)
    assert started.turn_id.startswith("turn")
    assert rig.compactor.runs == [(started.turn_id, "auto")]
    assert (complete.turn_id, complete.kind, complete.status) == (
        started.turn_id, "compact", "completed"
    )
    assert rig.refiner.settled_calls == 1 and rig.store.flushes == 1


async def test_the_exact_count_under_the_limit_means_no_compaction_and_no_word() -> None:
    rig = _Rig()
    rig.refiner.exact = 899  # the estimate said over; the exact count says under
    task = rig.after.task()
    assert task is not None
    await task
    assert rig.events == [] and rig.compactor.runs == [] and rig.store.flushes == 0


@pytest.mark.parametrize(
    ("result", "status"),
    [(False, "failed"), (asyncio.CancelledError(), "aborted")],
)
async def test_a_failed_or_stopped_compaction_ends_its_turn_so(
    result: bool | BaseException, status: str
) -> None:
    rig = _Rig()
    rig.compactor.result = result
    await rig.after.run()
    assert [e.type for e in rig.events] == ["turn_started", "turn_complete"]
    assert rig.events[-1].status == status  # type: ignore[union-attr]
    assert rig.store.flushes == 1 and rig.notices.failed == []


async def test_a_compaction_that_could_not_be_saved_says_so_and_ends_failed() -> None:
    rig = _Rig()
    error = RolloutWriteError(Path("/x/s.jsonl"), OSError(28, "No space left on device"))
    rig.compactor.result = error
    await rig.after.run()
    turn_id = rig.events[0].turn_id  # type: ignore[union-attr]
    assert rig.notices.failed == [(turn_id, error, None)]
    assert rig.events[-1].status == "failed"  # type: ignore[union-attr]
    assert rig.store.flushes == 1
