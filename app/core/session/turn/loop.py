"""A turn's sampling loop: sample, record what the model said, run its tool calls, and sample
again until it answers without one; a context overflow compacts once and retries."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ... import protocol as p
from ...compaction import policy
from ...items import (
    Item,
    is_compaction_item,
    item_type,
    last_assistant_text,
    message_text,
    new_id,
)
from ...providers.base import ModelProvider, ProviderError
from ...providers.sampling import StreamAttempt, sample
from ..replay import function_call_display, reasoning_summary
from . import TurnFailed
from .errors import error_details, error_kind

if TYPE_CHECKING:
    from ...compaction.runner import Compactor
    from ...config import CoreConfig
    from ...conversation.history import ContextHistory
    from ...tokens.counter import TokenCounter
    from ..event_stream import EventStream
    from ..notices import Notices
    from ..usage_meter import UsageMeter
    from .items import TurnItems
    from .request import TurnRequests
    from .tool_call import ToolCalls

MAX_TOOL_ROUNDS = 64

OVERFLOW_RECOVERY_FAILED = (
    "The conversation still does not fit the model's context window after compacting "
    "(recovery failed after one compact-and-retry). Start a new conversation or shorten "
    "your last message."
)
OVERFLOW_AUTO_OFF = (
    "The conversation ran out of room in the model's context window and automatic compaction "
    "is off. Compact it (/compact), turn automatic compaction on, or start a new conversation."
)


class SamplingLoop:
    """The tool loop of one session's turns."""

    def __init__(
        self,
        *,
        config: Callable[[], CoreConfig],
        provider: Callable[[], ModelProvider],
        history: ContextHistory,
        counter: TokenCounter,
        compactor: Compactor,
        meter: UsageMeter,
        notices: Notices,
        items: TurnItems,
        requests: TurnRequests,
        tool_calls: ToolCalls,
        events: EventStream,
        emit: Callable[[p.Event], None],
    ) -> None:
        self._config = config
        self._provider = provider
        self._history = history
        self._counter = counter
        self._compactor = compactor
        self._meter = meter
        self._notices = notices
        self._items = items
        self._requests = requests
        self._tool_calls = tool_calls
        self._events = events
        self._emit = emit

    async def run(self, turn_id: str, text: str, attempt_box: list[StreamAttempt]) -> str | None:
        """Sample until the model answers without tool calls (spec: the tool loop); the reply.
        ``attempt_box`` holds the attempt under way, for an interruption to keep."""
        overflow_retried = False
        last_message: str | None = None
        started: set[str] = set()
        notices = self._notices

        def on_delta(item_id: str, delta: str) -> None:
            if item_id not in started:
                started.add(item_id)
                self._emit(
                    p.ItemStarted(
                        turn_id=turn_id, item=p.TurnItem(id=item_id, kind="agent_message")
                    )
                )
            self._events.put_delta(turn_id, item_id, delta)

        def on_item(item: Item) -> None:
            # A tool call is shown as soon as the model has made it, before the reply ends.
            if item_type(item) == "function_call":
                item_id = str(item.get("id") or item.get("call_id") or new_id("fc"))
                self._emit(
                    p.ItemStarted(turn_id=turn_id, item=function_call_display(item_id, item))
                )

        for round_index in range(MAX_TOOL_ROUNDS):
            config = self._config()
            await self._history.count_deferred()  # a view just read: counted off the window
            estimate = self._history.estimate()  # Coco's count of this request, to calibrate
            try:
                attempt = await sample(
                    self._provider(),
                    self._requests.build(turn=True),
                    max_retries=config.max_retries,
                    base_delay=config.retry_base_delay,
                    on_retry=notices.retry_notice(turn_id),
                    on_stall=notices.stall_notice(turn_id),
                    on_delta=on_delta,
                    attempt_sink=attempt_box.append,
                    on_item=on_item,
                )
            except ProviderError as error:
                if error.category != "context_overflow":
                    notices.error_with_details(
                        error.message, error_kind(error), turn_id, error_details(error)
                    )
                    raise TurnFailed from error
                await self._recover_from_overflow(
                    turn_id, text, error, retried=overflow_retried, first=round_index == 0
                )
                overflow_retried = True
                continue
            # A long reply is tokenised off the window's thread before it is recorded.
            await self._counter.precount_items(attempt.items)
            attempt_box.clear()
            self._meter.learn(estimate, attempt)
            calls = self._record_outputs(turn_id, attempt, started)
            reply = last_assistant_text(attempt.items)
            if reply is not None:
                last_message = reply
            if not calls:
                notices.about_reply(turn_id, reply, attempt)
                return last_message
            for call in calls:
                await self._tool_calls.run(turn_id, call)
            compactor = self._compactor
            if policy.should_compact_mid_turn(
                auto=self._requests.client_compacts(),
                usage=self._meter.usage(),
                limit=self._meter.limit(),
                unchanged_since_compaction=compactor.unchanged_since_compaction,
                post_compaction=compactor.post_compaction_usage,
            ):
                await compactor.run(turn_id, "auto")
        notices.error(
            f"Stopped after {MAX_TOOL_ROUNDS} tool rounds without a final answer.", "tool", turn_id
        )
        raise TurnFailed

    async def _recover_from_overflow(
        self, turn_id: str, text: str, error: ProviderError, *, retried: bool, first: bool
    ) -> None:
        """The request did not fit: compact and let the loop send it again, once; otherwise
        the turn fails (withdrawn from the model's view when recovery failed)."""
        window = self._meter.window()
        if window is not None:
            self._history.mark_full(window)
            self._meter.emit_usage()
        action = policy.on_overflow(auto=self._config().auto_compact, already_retried=retried)
        if action == "auto_off":
            self._notices.error_with_details(
                OVERFLOW_AUTO_OFF, "context_overflow", turn_id, error_details(error)
            )
            raise TurnFailed from error
        if action == "give_up":
            self._notices.error_with_details(
                OVERFLOW_RECOVERY_FAILED, "context_overflow", turn_id, error_details(error)
            )
            self._items.withdraw(turn_id, text, OVERFLOW_RECOVERY_FAILED)
            raise TurnFailed from error
        # On the turn's first request the new message stays out of the compaction and comes
        # back last (pre-turn shape); on a follow-up the summary is last.
        held_out = 1 if first else 0
        if not await self._compactor.run(turn_id, "overflow", force=True, held_out=held_out):
            self._items.withdraw(turn_id, text, OVERFLOW_RECOVERY_FAILED)
            raise TurnFailed from error

    def _record_outputs(
        self, turn_id: str, attempt: StreamAttempt, started: set[str]
    ) -> list[Item]:
        """Add the reply's items to the conversation and show them; its tool calls."""
        calls: list[Item] = []
        compacted_by_server = False
        for item in attempt.items:
            if is_compaction_item(item):
                # The server compacted inside this response (context_management): what came
                # before the item is no longer sent; the item carries it.
                self._compactor.apply_server_compaction(turn_id, item)
                compacted_by_server = True
                continue
            self._items.append(item, turn_id)
            kind = item_type(item)
            item_id = str(item.get("id") or new_id("item"))
            if kind == "message" and item.get("role") == "assistant":
                text = message_text(item)
                if item_id not in started:
                    self._emit(
                        p.ItemStarted(
                            turn_id=turn_id, item=p.TurnItem(id=item_id, kind="agent_message")
                        )
                    )
                self._emit(
                    p.ItemCompleted(
                        turn_id=turn_id,
                        item=p.TurnItem(id=item_id, kind="agent_message", data={"text": text}),
                    )
                )
                self._emit(p.AgentMessage(turn_id=turn_id, item_id=item_id, text=text))
            elif kind == "function_call":
                calls.append(item)
                self._emit(
                    p.ItemCompleted(turn_id=turn_id, item=function_call_display(item_id, item))
                )
            elif kind == "reasoning":
                summary = reasoning_summary(item)
                self._emit(
                    p.ItemCompleted(
                        turn_id=turn_id,
                        item=p.TurnItem(id=item_id, kind="reasoning", data={"summary": summary}),
                    )
                )
        usage = attempt.usage
        # After a compaction inside the response its usage describes the input before it.
        if usage is not None and not compacted_by_server:
            self._meter.reported(usage)
        self._meter.emit_usage()
        return calls
