"""Running one compaction: choose the path, run it, check the result, apply it.

The paths (``prune``, ``remote``, ``local``) are pure steps on a copy of the history; this module
starts the compaction, lets ``choose`` pick and run the path on that copy (``local_path``,
``remote_path``), and hands the result to ``apply`` (which checks what it freed with
``room_check``) in one synchronous step at the very end, so a cancel or a failure leaves
everything exactly as it was.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Literal

from .. import protocol as p
from ..config import CoreConfig
from ..conversation.history import ContextHistory
from ..conversation.transcript import Transcript
from ..items import Item, new_id
from ..providers.base import ModelProvider, ModelRequest, ProviderError
from ..providers.capabilities import RemoteCapabilities
from ..providers.sampling import RetryNotice
from ..tokens.counter import TokenCounter
from .apply import Applier, Start
from .budget import CompactionBudget, compaction_budget
from .choose import run_path
from .counting import CountMemo
from .failure import Ended, ended_record, failure_text
from .notes.material import NotesReader
from .paths.local import ContextTooLarge, ItemCounts
from .paths.path import PathResult, PathRun, notes_items
from .paths.remote_path import remote_forms
from .pins import Pins, carry
from .policy import auto_compact_limit, context_window
from .summary_edit import SummaryEdits
from .undo import UndoState

# A /compact with nothing added since the last compaction (and no focus to summarise for).
NOTHING_NEW = "Nothing new to compact since the last compaction."


class Compactor:
    """The compaction side of a session: runs compactions, holds the undo state and the loop
    guard's memory (where the last compaction left the history)."""

    def __init__(
        self,
        *,
        session_id: str,
        history: ContextHistory,
        transcript: Transcript,
        counter: TokenCounter,
        config: Callable[[], CoreConfig],
        provider: Callable[[], ModelProvider],
        tool_specs: Callable[[], list[dict[str, Any]]],
        initial_context: Callable[[], list[Item]],
        emit: Callable[[p.Event], None],
        record: Callable[[str, dict[str, Any]], None],
        note: Callable[[Literal["error", "warning", "background"], str], None],
        usage_reset: Callable[[], None],
        emit_usage: Callable[[], None],
        retry_notice: Callable[[str], RetryNotice],
        turn_request: Callable[[list[Item]], ModelRequest],
        capabilities: RemoteCapabilities,
        usage: Callable[[], int],
        token_ratio: Callable[[], float],
    ) -> None:
        self._session_id = session_id
        self._history = history
        self._transcript = transcript
        self._counter = counter
        self._counts = CountMemo(counter)  # this compaction's counts and the last one's
        self._read_notes = NotesReader()  # the last history read for notes, remembered
        self._config = config
        self._provider = provider
        self._tool_specs = tool_specs
        self._initial_context = initial_context
        self._emit = emit
        self._record = record
        self._note = note
        self._usage_reset = usage_reset
        self._emit_usage = emit_usage
        self._retry_notice = retry_notice
        self._turn_request = turn_request
        self._usage = usage  # the history's usage in the server's tokens (calibrated)
        # How many of the server's tokens one of Coco's counts for (1.0 until calibrated).
        self._token_ratio = token_ratio
        self.capabilities = capabilities
        self.undo = UndoState()
        # "Never compact twice on the same history": the history version right after one.
        self.compacted_version: int | None = None
        # Where the last compaction left the usage: the loop guard measures growth from it.
        self.post_compaction_usage: int | None = None
        self.warned = False  # the "long conversations" warning is said once a session
        # Background lines said while a compaction runs: shown at once, recorded after its
        # marker (or its failure), where the window drew them live (below the running marker).
        self._held_notes: list[str] | None = None
        # The compaction running now: (turn id, item id, trigger, focus), until it ends.
        self._running: tuple[str, str, p.Trigger, str | None] | None = None
        self.pins = Pins(
            transcript=transcript, history=history, count_item=counter.count_item,
            budget=self.budget, record=record, emit=emit,
        )
        self.summary_edits = SummaryEdits(
            history=history, transcript=transcript, record=record, emit=emit,
            unchanged=lambda: self.unchanged_since_compaction,
            rewritten=self._summary_rewritten, usage=usage, count=counter.count,
            budget=self.budget,
        )
        self._applier = Applier(
            history=history, transcript=transcript, config=config, record=record, emit=emit,
            note=note, usage_reset=usage_reset, emit_usage=emit_usage, usage=usage,
            say=self._say, record_held_notes=self._record_held_notes, pins=self.pins,
            undo=self.undo, guard=self,
        )

    # ------------------------------------------------------------------ figures

    def window(self, model: str | None = None) -> int | None:
        return context_window(self._config(), model)

    def limit(self, model: str | None = None) -> int | None:
        return auto_compact_limit(self._config(), model)

    def budget(self, incoming: int = 0) -> CompactionBudget:
        """The budget in Coco's own counts: where the server counts more tokens than Coco for
        the same text, the window and limit shrink by that ratio, so what Coco builds to fit
        fits by the server's count too."""
        window, limit = self.window(), self.limit()
        ratio = max(1.0, self._token_ratio())
        if ratio > 1.0:
            window = int(window / ratio) if window is not None else None
            limit = int(limit / ratio) if limit is not None else None
        return compaction_budget(window, limit, self._history.fixed_tokens, incoming=incoming)

    @property
    def unchanged_since_compaction(self) -> bool:
        return self._history.version == self.compacted_version

    def remote_available(self) -> bool:
        config = self._config()
        return (
            config.remote_compaction
            and config.wire_api == "responses"
            and self._provider().supports_remote_compaction
            and bool(self.remote_forms())
        )

    def remote_forms(self) -> list[str]:
        """The remote forms to try, in order, less those this server said it does not offer."""
        return remote_forms(self._config(), self.capabilities)

    # ------------------------------------------------------------------ running

    async def run(
        self,
        turn_id: str,
        trigger: p.Trigger,
        *,
        focus: str | None = None,
        model: str | None = None,
        force: bool = False,
        held_out: int = 0,
    ) -> bool:
        """Run one compaction inside ``turn_id``; True when the history was replaced.

        ``held_out``: how many items at the end of the history (the turn's new user message) stay
        out of the compaction and come back after it, last (the pre-turn shape for an overflow
        on a turn's first request). Otherwise the summary is last (the mid-turn shape, which
        Codex 0.169.0 uses for every compaction), the initial context just before the last
        kept user message.
        """
        if not force and self.unchanged_since_compaction:
            return False
        item_id = new_id("cmp")
        self._emit(
            p.ItemStarted(
                turn_id=turn_id,
                item=p.TurnItem(id=item_id, kind="context_compaction", data={"trigger": trigger}),
            )
        )
        started = time.monotonic()
        tokens_before = self._usage()
        before = self._history.snapshot()
        everything = list(self._history.raw_items())  # shallow: items are immutable
        cut = len(everything) - held_out
        history, tail = everything[:cut], everything[cut:]
        incoming = self._history.tokens_from(cut)
        # Per-item counts only when a step needs them: a resumed history counts its items
        # lazily, and tokenising all of a long one took longer than the whole compaction.
        known = self._history.known_item_tokens()[:cut]
        total = sum(t for t in known if t > 0)
        if any(t < 0 for t in known):
            # Not all counted: what the server last reported covers the rest.
            total = max(total, tokens_before - incoming - self._history.fixed_tokens)
        counts = ItemCounts(
            total=total, known=known, every=lambda: self._history.item_tokens()[:cut]
        )
        budget = self.budget(incoming)
        self._held_notes = []
        self._running = (turn_id, item_id, trigger, focus)
        self._counts.begin()  # the last compaction's counts stay at hand (see counting.py)
        start = Start(
            turn_id=turn_id, item_id=item_id, trigger=trigger, focus=focus, before=before,
            tokens_before=tokens_before, started=started, budget=budget, incoming=incoming,
        )
        try:
            applied = await self._run_and_apply(start, history, counts, tail, model)
            if not applied:
                self._end_without_change("failed")
            return applied
        except asyncio.CancelledError:
            self._end_without_change("stopped")
            raise
        finally:
            self._running = None
            self._record_held_notes()

    async def _run_and_apply(
        self,
        start: Start,
        history: list[Item],
        counts: ItemCounts,
        tail: list[Item],
        model: str | None,
    ) -> bool:
        turn_id, budget = start.turn_id, start.budget
        carried = self.pins.carried(budget)
        # The pins' room is reserved before the path runs: it builds the rest to fit beside them.
        path_budget = self.budget(start.incoming + carried.tokens) if carried.pins else budget
        try:
            result = await run_path(
                self._path_run(turn_id), start.trigger, history, counts, path_budget,
                focus=start.focus, model=model, remote=self.remote_available,
                pinned_calls=self.pins.call_ids,
            )
        except ContextTooLarge:
            # Spec section 3 step 4: nothing left to trim means the context is full.
            window = self.window()
            if window is not None:
                self._history.mark_full(window)
                self._emit_usage()
            self._fail(
                turn_id,
                "Could not compact: not even the compaction prompt fits the model's context "
                "window. Check the context window in Settings, or start a new conversation.",
                "context_overflow",
            )
            return False
        except ProviderError as error:
            prefix = "remote" if error.code == "remote_only" else "local"
            self._fail(turn_id, failure_text(error, prefix), "compaction")
            return False
        self._applier.carry_pins(turn_id, result, carried)
        new_items = [*result.items, *tail]
        # ---- apply: one synchronous step from here on (no await), so a cancel cannot split it
        self._applier.apply(start, result, new_items, self._counts.count_item)
        return True

    def apply_server_compaction(self, turn_id: str, item: Item) -> None:
        """A ``compaction`` item arrived in a turn's response (spec section 4, form c): the
        history becomes that item, recorded and shown like any compaction (trigger "server")."""
        item_id = new_id("cmp")
        self._emit(
            p.ItemStarted(
                turn_id=turn_id,
                item=p.TurnItem(id=item_id, kind="context_compaction", data={"trigger": "server"}),
            )
        )
        budget = self.budget()
        # Everything before the item left the view: its notes go beside the item.
        history = self._history.raw_items()
        carried = self._path_run(turn_id).carry(history, budget)
        items = [*notes_items(carried), item]
        result = PathResult(strategy="remote", items=items, remote_form="server", carried=carried)
        new_items = carry(items, self.pins.carried(budget).items)
        start = Start(
            turn_id=turn_id, item_id=item_id, trigger="server", focus=None,
            before=self._history.snapshot(), tokens_before=self._usage(),
            started=time.monotonic(), budget=budget, incoming=0,
        )
        self._applier.apply(start, result, new_items, self._counts.count_item)

    def _path_run(self, turn_id: str) -> PathRun:
        """What a path works with, for a compaction inside ``turn_id``."""
        return PathRun(
            turn_id=turn_id, session_id=self._session_id, config=self._config,
            provider=self._provider, counter=self._counter, counts=self._counts,
            emit=self._emit, say=self._say, retry_notice=self._retry_notice,
            initial_context=self._initial_context, tool_specs=self._tool_specs,
            turn_request=self._turn_request, capabilities=self.capabilities,
            read_notes=self._read_notes,
        )

    def _summary_rewritten(self, unchanged: bool, live: bool) -> None:
        """The summary was edited: not growth, so the loop guard still sees the history as
        the compaction left it; the usage is estimated anew."""
        if unchanged:
            self.compacted_version = self._history.version
        self._usage_reset()
        if live:
            self._emit_usage()

    def _say(self, turn_id: str, message: str) -> None:
        """A background line about this compaction, kept in the transcript (it is shown again
        when the session is reopened)."""
        if self._held_notes is not None:
            self._held_notes.append(message)
        else:
            self._note("background", message)
        self._emit(p.Background(turn_id=turn_id, message=message))

    def _record_held_notes(self) -> None:
        held, self._held_notes = self._held_notes or [], None
        for message in held:
            self._note("background", message)

    def _fail(self, turn_id: str, message: str, kind: p.ErrorKind) -> None:
        self._end_without_change("failed")
        self._record_held_notes()
        self._note("error", message)
        self._emit(p.Error(message=message, kind=kind, turn_id=turn_id))

    def _end_without_change(self, status: Ended) -> None:
        """The running compaction ended without compacting: recorded (the marker is shown
        again on resume) and said, once."""
        running, self._running = self._running, None
        if running is None:
            return
        turn_id, item_id, trigger, focus = running
        record = ended_record(item_id, trigger, status, focus)
        self._transcript.add_recorded(record)
        try:
            self._record("event", record)
        except OSError:  # the rollout could not be written: said by the failure itself
            pass
        self._emit(p.CompactionEnded(turn_id=turn_id, item_id=item_id, status=status, focus=focus))
