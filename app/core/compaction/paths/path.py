"""One run of a compaction path (spec sections 3 and 4): what a path works with for the
compaction running now (``PathRun``) and what it produced, before it is checked and applied
(``PathResult``)."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, Literal

from ... import protocol as p
from ...config import CoreConfig
from ...items import Item
from ...providers.base import ModelProvider, ModelRequest, Usage
from ...providers.capabilities import RemoteCapabilities
from ...providers.sampling import RetryNotice
from ...tokens.counter import TokenCounter, approx_tokens
from ..budget import CompactionBudget
from ..counting import CountMemo
from ..junk_summary import Junk
from ..notes.carryover import CarriedOver, carry_over
from ..notes.material import NotesMaterial, read_notes_material
from .local import COMPACTION_HEADERS

# The stages a running compaction reports (``CompactionProgress.stage``).
Stage = Literal["remote", "local", "retrying", "trimming", "prune"]


@dataclass
class PathResult:
    """What a path produced, before it is checked and applied."""

    strategy: p.Strategy
    items: list[Item]
    summary: str = ""
    usage: Usage | None = None
    kept: int = 0
    kept_truncated: bool = False
    trimmed: int = 0
    cut_short: bool = False
    kept_previous_summary: bool = False
    # The model's summary was junk even after a retry (``junk_summary``): why; not installed.
    summary_unusable: Junk | None = None
    pruned_outputs: int = 0
    shrunk: dict[str, Any] | None = None
    remote_form: str | None = None
    carried_pins: list[str] | None = None
    carried: CarriedOver | None = None  # the carried-notes block the new history holds


@dataclass
class PathRun:
    """What a path works with, for one compaction inside turn ``turn_id``: the session's
    settings, provider and counts (``counts`` remembers this compaction's), and how to report."""

    turn_id: str
    session_id: str
    config: Callable[[], CoreConfig]
    provider: Callable[[], ModelProvider]
    counter: TokenCounter
    counts: CountMemo
    emit: Callable[[p.Event], None]
    say: Callable[[str, str], None]  # (turn id, background line about this compaction)
    retry_notice: Callable[[str], RetryNotice]
    initial_context: Callable[[], list[Item]]
    tool_specs: Callable[[], list[dict[str, Any]]]
    turn_request: Callable[[list[Item]], ModelRequest]
    capabilities: RemoteCapabilities
    # How the history's messages, notes block and tool traffic are read (the session's
    # reader remembers the last history it read).
    read_notes: Callable[[list[Item]], NotesMaterial] = read_notes_material
    # The remote form tried last (said in the marker when the local path took over).
    remote_form: str | None = None

    def progress(self, stage: Stage, message: str) -> None:
        self.emit(p.CompactionProgress(turn_id=self.turn_id, stage=stage, message=message))

    def headers(self) -> dict[str, str] | None:
        return COMPACTION_HEADERS if self.config().demo_hints else None

    def notes_budget(self, budget: CompactionBudget) -> int | None:
        """The carried notes' budget; None when the setting turns them off."""
        return budget.notes_budget() if self.config().carry_notes else None

    def kept_counting(
        self, budget: CompactionBudget, context: list[Item]
    ) -> tuple[Callable[[str], int], int]:
        """How kept user messages are counted, and what the context blocks take: Coco's counter
        when the window sizes the budget; with no window to size from, Codex's rule (its
        20 000 tokens of bytes / 4)."""
        count = self.counts.count if budget.target is not None else approx_tokens
        return count, sum(self.counts.count_item(item) for item in context)

    def carry(
        self, history: list[Item], budget: CompactionBudget, still: Collection[str] = ()
    ) -> CarriedOver | None:
        """The carried notes for a history the server compacted: every user message of
        ``history`` not ``still`` in the view it returned has left it."""
        notes_budget = self.notes_budget(budget)
        if notes_budget is None:
            return None
        material = self.read_notes(history)
        messages = material.messages
        leaving = [m for m in messages if m not in still] if still else list(messages)
        return carry_over(
            leaving, material.tools, material.previous, notes_budget, self.counts.count,
            traffic=material.traffic,
        )


def notes_items(carried: CarriedOver | None) -> list[Item]:
    """The carried-notes block as items of the new history (none when there is nothing)."""
    return [] if carried is None or carried.empty else [carried.item()]
