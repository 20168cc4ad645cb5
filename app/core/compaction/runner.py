"""Running one compaction: choose the path, run it, check the result, apply it.

The paths (``prune``, ``remote``, ``local``) are pure steps on a copy of the history; this module
decides which one runs, measures what it produced against the target (``budget``), and applies it
to history, transcript and rollout in one synchronous step at the very end, so a cancel or a
failure leaves everything exactly as it was.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, Literal

from .. import protocol as p
from ..capabilities import RemoteCapabilities
from ..config import CoreConfig
from ..history import ContextHistory, HistorySnapshot
from ..items import (
    Item,
    is_compaction_item,
    is_message,
    message_text,
    new_id,
)
from ..pins import Carried, Pins, carry
from ..providers.base import ModelProvider, ModelRequest, ProviderError, Usage
from ..sampling import RetryNotice
from ..summary_edit import SummaryEdits
from ..tokens import TokenCounter, approx_tokens
from ..transcript import Transcript
from .budget import CompactionBudget, compaction_budget
from .carryover import CarriedOver, carry_over, is_notes_message
from .counting import CountMemo
from .failure import Ended, ended_record, fail_fast, failure_text, server_unreachable
from .fit import fit_items
from .local import COMPACTION_HEADERS, ContextTooLarge, ItemCounts, LocalCompaction
from .policy import auto_compact_limit, context_window
from .prompts import build_prompt, is_summary_message, summary_prefix, summary_text
from .prune import prune_tool_outputs
from .rebuild import (
    assemble,
    build_compacted_history,
    filter_remote_output,
    notes_material,
    real_user_messages,
    select_with_notes,
)
from .remote import compact_remotely, compact_with_trigger, is_unsupported
from .undo import UndoState

LOCAL_COMPACTION_WARNING = (
    "Heads up: long conversations and repeated compactions make the model less accurate. "
    "Start a new conversation when you can."
)
# A compaction that frees less than this share of the context is reported as a warning.
LITTLE_FREED_SHARE = 0.2
# Remote forms, in the order they are tried (spec section 4, forms b and a).
REMOTE_FORMS = ("trigger", "standalone")
REMOTE_FORM_NAMES = {"trigger": "the compaction trigger", "standalone": "/responses/compact"}
REMOTE_STAGE_TEXT = {
    "trigger": "Compacting remotely (compaction trigger)…",
    "standalone": "Compacting remotely (/responses/compact)…",
}

# A /compact with nothing added since the last compaction (and no focus to summarise for).
NOTHING_NEW = "Nothing new to compact since the last compaction."


@dataclass
class _Result:
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
    pruned_outputs: int = 0
    shrunk: dict[str, Any] | None = None
    remote_form: str | None = None
    carried_pins: list[str] | None = None
    carried: CarriedOver | None = None  # the carried-notes block the new history holds


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
        self._counts = CountMemo(counter)  # one compaction's counts (see counting.py)
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
        self._last_remote_form: str | None = None
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
        self._counts = CountMemo(self._counter)
        try:
            applied = await self._run_and_apply(
                turn_id, item_id, trigger, history, counts, tail, budget,
                focus=focus, model=model, before=before, tokens_before=tokens_before,
                started=started, incoming=incoming,
            )
            if not applied:
                self._end_without_change("failed")
            return applied
        except asyncio.CancelledError:
            self._end_without_change("stopped")
            raise
        finally:
            self._running = None
            self._record_held_notes()
            self._counts = CountMemo(self._counter)

    async def _run_and_apply(
        self,
        turn_id: str,
        item_id: str,
        trigger: p.Trigger,
        history: list[Item],
        counts: ItemCounts,
        tail: list[Item],
        budget: CompactionBudget,
        *,
        focus: str | None,
        model: str | None,
        before: HistorySnapshot,
        tokens_before: int,
        started: float,
        incoming: int,
    ) -> bool:
        carried = self.pins.carried(budget)
        # The pins' room is reserved before the path runs: it builds the rest to fit beside them.
        path_budget = self.budget(incoming + carried.tokens) if carried.pins else budget
        try:
            result = await self._run_path(
                turn_id, trigger, history, counts, path_budget, focus=focus, model=model
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
        if result is None:
            return False
        self._carry_pins(turn_id, result, carried)
        new_items = [*result.items, *tail]
        # ---- apply: one synchronous step from here on (no await), so a cancel cannot split it
        self._apply(
            turn_id,
            item_id,
            trigger,
            result,
            new_items,
            before=before,
            tokens_before=tokens_before,
            started=started,
            focus=focus,
            budget=budget,
            incoming=incoming,
        )
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
        carried = self._carry(history, budget)
        items = [*self._notes_items(carried), item]
        self._apply(
            turn_id,
            item_id,
            "server",
            _Result(strategy="remote", items=items, remote_form="server", carried=carried),
            carry(items, self.pins.carried(budget).items),
            before=self._history.snapshot(),
            tokens_before=self._usage(),
            started=time.monotonic(),
            focus=None,
            budget=budget,
            incoming=0,
        )

    def _notes_budget(self, budget: CompactionBudget) -> int | None:
        """The carried notes' budget; None when the setting turns them off."""
        return budget.notes_budget() if self._config().carry_notes else None

    def _carry(
        self, history: list[Item], budget: CompactionBudget, still: Collection[str] = ()
    ) -> CarriedOver | None:
        """The carried notes for a history the server compacted: every user message of
        ``history`` not ``still`` in the view it returned has left it."""
        notes_budget = self._notes_budget(budget)
        if notes_budget is None:
            return None
        messages, previous, tools = notes_material(history)
        leaving = [m for m in messages if m not in still] if still else messages
        return carry_over(leaving, tools, previous, notes_budget, self._counts.count)

    @staticmethod
    def _notes_items(carried: CarriedOver | None) -> list[Item]:
        return [] if carried is None or carried.empty else [carried.item()]

    async def _run_path(
        self,
        turn_id: str,
        trigger: p.Trigger,
        history: list[Item],
        counts: ItemCounts,
        budget: CompactionBudget,
        *,
        focus: str | None,
        model: str | None,
    ) -> _Result | None:
        config = self._config()
        context = self._initial_context()
        if trigger != "manual" and config.prune_tool_outputs:
            pruned = self._prune(history, counts, budget)
            if pruned is not None:
                self._emit(
                    p.CompactionProgress(
                        turn_id=turn_id, stage="prune", message="Removing old tool outputs…"
                    )
                )
                return pruned
        remote_failure: ProviderError | None = None
        if self.remote_available():
            if focus and focus.strip():
                self._say(
                    turn_id,
                    (
                        "A focus cannot be given to remote compaction: compacting locally "
                        "so the summary follows it."
                    ),
                )
            else:
                try:
                    return await self._remote(turn_id, history, budget, context)
                except ProviderError as error:
                    # The local summary would ask the same server: no fallback when it is down.
                    if not config.remote_fallback_to_local or server_unreachable(error):
                        raise ProviderError(
                            error.category, error.message, code="remote_only"
                        ) from error
                    remote_failure = error
                    self._say(
                        turn_id,
                        (
                            f"Remote compaction failed ({error.message}); "
                            "compacting locally instead."
                        ),
                    )
        result = await self._local(turn_id, history, counts, budget, context, focus, model)
        if remote_failure is not None:
            result.strategy = "remote_then_local"
            result.remote_form = self._last_remote_form
        return result

    def _prune(
        self, history: list[Item], counts: ItemCounts, budget: CompactionBudget
    ) -> _Result | None:
        if budget.history_room is None:
            return None
        found = prune_tool_outputs(
            history, counts.every(), count_item=self._counter.count_item,
            keep=self.pins.call_ids(),
        )
        if found is None:
            return None
        pruned, new_counts = found
        if sum(new_counts) > budget.history_room:
            return None  # not enough on its own: the model summarises instead
        return _Result(strategy="prune", items=pruned.items, pruned_outputs=pruned.outputs)

    def remote_forms(self) -> list[str]:
        """The remote forms to try, in order, less those this server said it does not offer."""
        config = self._config()
        unsupported = self.capabilities.unsupported(config.base_url, config.model)
        return [form for form in REMOTE_FORMS if form not in unsupported]

    async def _remote(
        self,
        turn_id: str,
        history: list[Item],
        budget: CompactionBudget,
        context: list[Item],
    ) -> _Result:
        """The trigger form, then the standalone endpoint; a form the server answers as
        unsupported is remembered (on disk) and skipped from then on."""
        config = self._config()
        forms = self.remote_forms()
        failure: ProviderError | None = None
        for index, form in enumerate(forms):
            self._last_remote_form = form
            self._emit(
                p.CompactionProgress(
                    turn_id=turn_id, stage="remote", message=REMOTE_STAGE_TEXT[form]
                )
            )
            try:
                if form == "trigger":
                    return await self._remote_trigger(turn_id, history, budget, context)
                return await self._remote_standalone(turn_id, history, budget, context)
            except ProviderError as error:
                failure = error
                if is_unsupported(error, form):
                    self.capabilities.mark_unsupported(config.base_url, config.model, form)
                if server_unreachable(error):
                    raise  # the other form is on the same server
                if index + 1 < len(forms):
                    self._say(
                        turn_id,
                        (
                            f"Remote compaction with {REMOTE_FORM_NAMES[form]} failed "
                            f"({error.message}); trying "
                            f"{REMOTE_FORM_NAMES[forms[index + 1]]}."
                        ),
                    )
        raise failure or ProviderError("not_found", "the server offers no remote compaction")

    async def _remote_trigger(
        self,
        turn_id: str,
        history: list[Item],
        budget: CompactionBudget,
        context: list[Item],
    ) -> _Result:
        config = self._config()
        compaction, usage = await compact_with_trigger(
            self._provider(),
            self._turn_request(history),
            max_retries=config.max_retries,
            base_delay=config.retry_base_delay,
            on_retry=self._remote_retry_notice(turn_id),
            extra_headers=self._headers(),
        )
        # The new history as Codex builds it: kept user messages from Coco's own history, the
        # context before the last of them, the compaction item last.
        count, context_tokens = self._kept_counting(budget, context)
        item_tokens = self._counts.count_item(compaction)
        kept, truncated, carried, _ = select_with_notes(
            history,
            budget.kept_budget(item_tokens, context_tokens),
            self._notes_budget(budget),
            count,
        )
        items = assemble(kept, compaction, context, self._notes_items(carried))
        return _Result(
            strategy="remote",
            items=items,
            usage=usage,
            kept=len(kept),
            kept_truncated=truncated,
            remote_form="trigger",
            carried=carried if self._config().carry_notes else None,
        )

    async def _remote_standalone(
        self,
        turn_id: str,
        history: list[Item],
        budget: CompactionBudget,
        context: list[Item],
    ) -> _Result:
        config = self._config()
        output, usage = await compact_remotely(
            self._provider(),
            model=config.model,
            instructions=config.instructions,
            history=history,
            tools=self._tool_specs(),
            prompt_cache_key=self._session_id,
            reasoning_effort=config.reasoning_effort,
            context_window=budget.window,
            max_retries=config.max_retries,
            base_delay=config.retry_base_delay,
            on_retry=self._remote_retry_notice(turn_id),
            extra_headers=self._headers(),
        )
        items = _insert_before_last_user(filter_remote_output(output), context)
        # The user messages the server's history no longer holds left the view: their notes
        # go just before the compaction item.
        carried = self._carry(history, budget, still=set(real_user_messages(items)))
        items = _insert_before_compaction(items, self._notes_items(carried))
        shrunk = None
        room = budget.history_room
        if room is not None:
            item_counts = [self._counts.count_item(item) for item in items]
            fitted = fit_items(
                items,
                item_counts,
                room,
                protect=lambda item: (
                    is_compaction_item(item) or is_notes_message(item) or item in context
                ),
                count=self._counts.count,
                count_item=self._counts.count_item,
            )
            if fitted.dropped or fitted.truncated:
                shrunk = {
                    "dropped_messages": fitted.dropped,
                    "truncated_messages": fitted.truncated,
                }
            items = fitted.items
        return _Result(
            strategy="remote",
            items=items,
            usage=usage,
            kept=sum(1 for item in items if is_message(item, "user") and item not in context),
            shrunk=shrunk,
            remote_form="standalone",
            carried=carried,
        )

    def _kept_counting(
        self, budget: CompactionBudget, context: list[Item]
    ) -> tuple[Callable[[str], int], int]:
        """How kept user messages are counted, and what the context blocks take: Coco's counter
        when the window sizes the budget; with no window to size from, Codex's rule (its
        20 000 tokens of bytes / 4)."""
        count = self._counts.count if budget.target is not None else approx_tokens
        return count, sum(self._counts.count_item(item) for item in context)

    def _headers(self) -> dict[str, str] | None:
        return COMPACTION_HEADERS if self._config().demo_hints else None

    async def _local(
        self,
        turn_id: str,
        history: list[Item],
        counts: ItemCounts,
        budget: CompactionBudget,
        context: list[Item],
        focus: str | None,
        model: str | None,
    ) -> _Result:
        config = self._config()
        self._emit(
            p.CompactionProgress(turn_id=turn_id, stage="local", message="Summarising locally…")
        )
        local = await LocalCompaction(
            provider=self._provider(),
            model=model or config.compaction_model or config.model,
            instructions=config.instructions,
            history=history,
            item_tokens=counts,
            prompt=build_prompt(
                config.compact_prompt, config.summary_style, focus, words=_words(budget.summary)
            ),
            prompt_cache_key=self._session_id,
            budget=budget,
            counter=self._counter,
            reasoning=config.is_reasoning_model,
            max_retries=config.max_retries,
            base_delay=config.retry_base_delay,
            on_retry=fail_fast(self._retry_notice(turn_id)),
            extra_headers=self._headers(),
            on_trim=lambda n: self._emit(
                p.CompactionProgress(
                    turn_id=turn_id,
                    stage="trimming",
                    message=f"Making room for the summary (left out {n} older item"
                    f"{'s' if n != 1 else ''})…",
                    trimmed=n,
                )
            ),
        ).summarise()
        summary = local.summary
        kept_previous = False
        if local.cut_short:
            previous = _previous_summary(history)
            if previous is not None:
                # Never replace a usable summary with a fragment: keep the earlier one.
                kept_previous = True
                summary = previous if not summary else f"{previous}\n\n{summary}"
        count, context_tokens = self._kept_counting(budget, context)
        summary_tokens = count(summary_text(summary))
        rebuilt = build_compacted_history(
            history,
            summary,
            initial_context=context,
            budget=budget.kept_budget(summary_tokens, context_tokens),
            room=budget.history_room,
            count=count,
            notes_budget=self._notes_budget(budget),
        )
        shrunk = rebuilt.shrunk
        return _Result(
            strategy="local",
            items=rebuilt.items,
            summary=summary,
            usage=local.usage,
            kept=rebuilt.kept_user_messages,
            kept_truncated=rebuilt.kept_truncated,
            trimmed=local.trimmed + local.truncated,
            cut_short=local.cut_short,
            kept_previous_summary=kept_previous,
            carried=rebuilt.carried if self._config().carry_notes else None,
            shrunk=(
                {
                    "dropped_messages": shrunk.dropped_messages,
                    "truncated_messages": shrunk.truncated_messages,
                    "summary_truncated": shrunk.summary_truncated,
                }
                if shrunk.any
                else None
            ),
        )

    # ------------------------------------------------------------------ applying

    def _apply(
        self,
        turn_id: str,
        item_id: str,
        trigger: p.Trigger,
        result: _Result,
        new_items: list[Item],
        *,
        before: HistorySnapshot,
        tokens_before: int,
        started: float,
        focus: str | None,
        budget: CompactionBudget,
        incoming: int,
    ) -> None:
        config = self._config()
        if result.usage is not None:
            self._emit(
                p.TokenCount(
                    total=result.usage.total_tokens,
                    input=result.usage.input_tokens,
                    output=result.usage.output_tokens,
                    cached=result.usage.cached_tokens,
                    context_window=budget.window,
                    auto_compact_limit=budget.limit if config.auto_compact else None,
                    approximate=result.usage.estimated,
                    source="api",
                )
            )
        if result.trimmed:
            message = (
                f"Trimmed {result.trimmed} older item(s) before compacting so the prompt fits the "
                "model context window."
            )
            self._say(turn_id, message)
        previous = (self.compacted_version, self.post_compaction_usage)
        self._history.replace(new_items, [self._counts.count_item(item) for item in new_items])
        self.compacted_version = self._history.version
        self._usage_reset()
        tokens_after = self._usage()
        self.post_compaction_usage = tokens_after
        freed = tokens_before - tokens_after
        freed_share = freed / tokens_before if tokens_before > 0 else 0.0
        shown_summary = result.summary if result.strategy not in ("remote", "prune") else ""
        marker = p.CompactionMarker(
            item_id=item_id,
            turn_id=turn_id,
            trigger=trigger,
            strategy=result.strategy,
            tokens_before=tokens_before,
            tokens_after=tokens_after,
            duration_ms=int((time.monotonic() - started) * 1000),
            summary=shown_summary,
            kept_user_messages=result.kept,
            kept_truncated=result.kept_truncated,
            trimmed_items=result.trimmed,
            focus=focus,
            style=config.summary_style,
            target=budget.target,
            incoming_tokens=incoming,
            freed_share=round(freed_share, 4),
            freed_little=tokens_before > 0 and freed_share < LITTLE_FREED_SHARE,
            summary_cut_short=result.cut_short,
            kept_previous_summary=result.kept_previous_summary,
            pruned_outputs=result.pruned_outputs,
            remote_form=result.remote_form,
            shrunk=result.shrunk,
            carried_pins=result.carried_pins or self.pins.present(new_items),
            **_carried_fields(result.carried),
        )
        try:
            self._record(
                "compacted",
                {
                    "message": summary_text(result.summary) if shown_summary else "",
                    "replacement_history": new_items,
                    "undoable": True,
                    **marker.record(),
                },
            )
        except Exception:
            # Not saved, not done: the history goes back to what the rollout says it is.
            self._history.restore(before)
            self.compacted_version, self.post_compaction_usage = previous
            raise
        in_view = real_user_messages(new_items)
        self._transcript.add_compaction(marker, in_view)
        self._record_held_notes()
        self.undo.offer(item_id, before)
        self._emit_usage()  # after the record: resume restores usage from the token count
        self._emit(
            p.ItemCompleted(
                turn_id=turn_id,
                item=p.TurnItem(
                    id=item_id,
                    kind="context_compaction",
                    data={"trigger": trigger, "strategy": result.strategy},
                ),
            )
        )
        self._emit(p.ContextCompacted.of(marker, undoable=True, in_view=in_view))
        self._emit(p.UndoAvailable(item_id=item_id))
        for kind, text in self._after_notes(result, tokens_before, tokens_after, freed_share):
            self._note(kind, text)
            self._emit(p.Warning(message=text))

    def _carry_pins(self, turn_id: str, result: _Result, carried: Carried) -> None:
        """Pinned messages go verbatim just before the summary (pruning left them in place);
        a pin the room could not hold this time is said, by its size."""
        if result.strategy != "prune":
            result.items = carry(result.items, carried.items)
            result.carried_pins = carried.keys
        for pin in carried.left_out:
            self._say(
                turn_id,
                f"A pinned message (about {pin.tokens:,} tokens) did not fit the room this "
                "compaction had for pins and was left out of the model's view this time; it "
                "stays pinned.",
            )

    def _summary_rewritten(self, unchanged: bool, live: bool) -> None:
        """The summary was edited: not growth, so the loop guard still sees the history as
        the compaction left it; the usage is estimated anew."""
        if unchanged:
            self.compacted_version = self._history.version
        self._usage_reset()
        if live:
            self._emit_usage()

    def _after_notes(
        self, result: _Result, before: int, after: int, freed_share: float
    ) -> list[tuple[Literal["warning"], str]]:
        texts: list[str] = []
        if result.cut_short and result.kept_previous_summary:
            texts.append(
                "The model's summary came back cut short, so the earlier summary was kept "
                "beside it. Nothing it held was lost."
            )
        elif result.cut_short:
            texts.append(
                "The model's summary came back cut short; your recent messages were kept "
                "verbatim. Try /compact again, or a compaction model with a larger window."
            )
        if before > 0 and after > before:
            texts.append(
                f"This compaction made the context larger ({before:,} → {after:,} tokens): "
                "the conversation is still short, so the summary outweighs what it replaced. "
                "Undo puts it back; compacting pays off once the conversation is longer."
            )
        elif before > 0 and freed_share < LITTLE_FREED_SHARE:
            texts.append(
                f"This compaction freed little room ({before:,} → {after:,} tokens, "
                f"{max(0, round(freed_share * 100))} %). Most of what is left is recent; "
                "start a new conversation if the model struggles."
            )
        if result.strategy not in ("remote", "prune") and not self.warned:
            self.warned = True
            texts.append(LOCAL_COMPACTION_WARNING)
        return [("warning", text) for text in texts]

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

    def _remote_retry_notice(self, turn_id: str) -> RetryNotice:
        def notice(attempt: int, max_attempts: int, error: ProviderError) -> None:
            self._emit(
                p.CompactionProgress(
                    turn_id=turn_id,
                    stage="retrying",
                    message=f"Retrying remote compaction ({attempt}/{max_attempts})…",
                )
            )

        return fail_fast(notice)

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


def _words(tokens: int | None) -> int | None:
    """A token budget in words, for the prompt (about 0.75 words a token in English)."""
    return None if tokens is None else max(40, int(tokens * 0.7))


def _previous_summary(history: list[Item]) -> str | None:
    """The body of the newest summary message in ``history``."""
    prefix = summary_prefix() + "\n"
    for item in reversed(history):
        if is_summary_message(item):
            return message_text(item)[len(prefix) :]
    return None


def _carried_fields(carried: CarriedOver | None) -> dict[str, Any]:
    """What the marker says was carried over (nothing when the notes are off)."""
    if carried is None:
        return {}
    return {
        "carried_notes": list(carried.notes),
        "carried_files": carried.files,
        "carried_commands": list(carried.commands),
        "carried_dropped": carried.dropped,
    }


def _insert_before_compaction(items: list[Item], carried: list[Item]) -> list[Item]:
    """``carried`` just before the (last) compaction item, or last when there is none."""
    if not carried:
        return items
    result = list(items)
    for index in range(len(result) - 1, -1, -1):
        if is_compaction_item(result[index]):
            result[index:index] = carried
            return result
    return result + carried


def _insert_before_last_user(items: list[Item], context: list[Item]) -> list[Item]:
    if not context:
        return items
    result = list(items)
    for index in range(len(result) - 1, -1, -1):
        if is_message(result[index], "user"):
            result[index:index] = context
            return result
    return context + result
