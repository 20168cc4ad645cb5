"""The user turn as a task: one message from the composer (or the re-run of a failed one)
checked, recorded, compacted before when due, sampled, and ended with ``turn_complete``."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from ... import protocol as p
from ...attachments.errors import AttachmentError
from ...attachments.parts import attachment_message, message_display
from ...compaction import policy
from ...items import (
    ENVIRONMENT_CONTEXT_OPEN,
    Item,
    assistant_message,
    function_call_output,
    is_message,
    item_type,
    message_text,
    new_id,
    user_message,
)
from ...sessions.record import STORAGE_ERRORS
from . import TurnFailed
from .cut_off import CutOffReplies
from .items import TurnItems
from .loop import SamplingLoop
from .tool_call import ToolCalls

# How long a turn waits for MCP servers still starting before it goes on without them.
MCP_START_GRACE_S = 5.0

if TYPE_CHECKING:
    from ...compaction.runner import Compactor
    from ...config import CoreConfig
    from ...conversation.count_refiner import CountRefiner
    from ...conversation.history import ContextHistory
    from ...conversation.transcript import Transcript
    from ...conversation.tree import TurnTree
    from ...providers.base import ModelProvider
    from ...providers.sampling import StreamAttempt
    from ...recall import SessionTools
    from ...sessions.record import SessionRecord
    from ...tokens.counter import TokenCounter
    from ..event_stream import EventStream
    from ..notices import Notices
    from ..usage_meter import UsageMeter
    from .branch_start import BranchStart
    from .request import TurnRequests
    from .retry import TurnRetry


class UserTurnTask:
    """Runs a session's user turns, one at a time (the session starts each as its task); owns
    the sampling loop, the tool calls and the items a turn adds."""

    def __init__(
        self,
        *,
        config: Callable[[], CoreConfig],
        tools: Callable[[], SessionTools],
        history: ContextHistory,
        counter: TokenCounter,
        refiner: CountRefiner,
        compactor: Compactor,
        meter: UsageMeter,
        notices: Notices,
        store: SessionRecord,
        retry: TurnRetry,
        requests: TurnRequests,
        provider: Callable[[], ModelProvider],
        transcript: Transcript,
        events: EventStream,
        tree: TurnTree,
        emit: Callable[[p.Event], None],
        emit_undo_state: Callable[[], None],
    ) -> None:
        self._config = config
        self._tree = tree
        self._tools = tools
        self._history = history
        self._counter = counter
        self._refiner = refiner
        self._compactor = compactor
        self._meter = meter
        self._notices = notices
        self._store = store
        self._retry = retry
        self._requests = requests
        self._items = items = TurnItems(
            record=store.record, record_in_worker=store.record_in_worker, history=history,
            transcript=transcript, compactor=compactor, meter=meter, emit=emit,
        )
        self._loop = SamplingLoop(
            config=config, provider=provider, history=history, counter=counter,
            compactor=compactor, meter=meter, notices=notices, items=items, requests=requests,
            tool_calls=ToolCalls(
                tools=tools, counter=counter, compactor=compactor, items=items, emit=emit,
                files=requests.attachments, config=config,
            ),
            events=events, emit=emit,
        )
        self._cut_off = CutOffReplies(record=store.record, transcript=transcript, emit=emit)
        self._emit = emit
        self._emit_undo_state = emit_undo_state
        self.last_model: str | None = None  # the model of the last turn (recorded)
        # How the last turn ended, until the compaction it may lead to has looked at it.
        self.ended: Literal["completed", "aborted", "failed"] | None = None

    async def run(self, op: p.UserTurn, branch: BranchStart | None = None) -> None:
        """Run one user turn. ``branch``: the turn starts a new branch (an edit or a
        regeneration): the view it follows is in place, its message checked, and its input
        comes from the turn it replaces (``BranchStart``)."""
        turn_id = new_id("turn")
        meter = self._meter
        self._emit(p.TurnStarted(turn_id=turn_id, kind="regular", context_window=meter.window()))
        # RetryTurn, or a new branch whose input is ready: the message is not recorded again.
        retrying = self._retry.is_retry(op)
        retry = retrying or branch is not None
        failed_turn = self._retry.point[0] if retrying and self._retry.point else None
        self._retry.forget("The message is being sent again." if retry else None)
        status: Literal["completed", "aborted", "failed"] = "completed"
        last_message: str | None = None
        attempt_box: list[StreamAttempt] = []
        self._items.start()
        user_saved = retry and branch is None
        files = self._requests.attachments
        try:
            message = user_message(op.text)
            if not retry:
                try:  # attachments read, stored by hash and checked against the model
                    message = attachment_message(
                        op.text, await files.for_turn(op.attachments, self._config())
                    )
                except AttachmentError as exc:
                    self._refuse(turn_id, op, exc.message, "attachment")
                    raise TurnFailed from exc
                await self._counter.precount_items([message])  # counted off-thread
            await self._refiner.settled()  # what the decisions below count must be exact
            if branch is None and not retry and not self.message_fits(turn_id, op, message):
                raise TurnFailed
            self._compactor.undo.turn_started()
            self._emit_undo_state()
            config = self._config()
            previous_model = self.last_model
            self.last_model = config.model
            self._store.record(
                "turn_context",
                {
                    "turn_id": turn_id,
                    "parent": self._tree.active if branch is None else branch.parent,
                    "model": config.model,
                    "context_window": meter.window(),
                    "auto_compact_limit": meter.limit(),
                    **({"retry": True} if retry and branch is None else {}),
                    **(branch.record() if branch is not None else {}),
                },
            )
            if branch is not None:
                user_saved = True
                branch.started(turn_id)  # its input recorded and in place, the branch active
            # The message is shown and recorded at once, before any pre-turn compaction: that
            # compaction leaves it out (the pre-turn shape) and puts it back last.
            before = (
                len(self._history),
                meter.usage(),
                self._compactor.unchanged_since_compaction,
            )
            if not retry:  # (a retry sends the history as it is; an overflow still compacts)
                self._record_user_message(turn_id, message)
                user_saved = True
            await self._notices.once_about_tools()
            if not retry:
                await self._compact_before_turn(turn_id, previous_model, *before)
            await files.preload(self._history.raw_items())  # images read off the window's thread
            await self._servers_started()
            last_message = await self._loop.run(turn_id, op.text, attempt_box)
        except asyncio.CancelledError:
            status = "aborted"
            try:
                self._record_interruption(turn_id, attempt_box[-1] if attempt_box else None)
            except STORAGE_ERRORS as exc:
                self._notices.storage_failed(turn_id, exc, None)
        except TurnFailed:
            status = "failed"
            self._cut_off.keep(turn_id, attempt_box)  # what was shown stays, marked cut off
        except STORAGE_ERRORS as exc:
            status = "failed"
            self._notices.storage_failed(turn_id, exc, None if user_saved else op.text)
        except Exception as exc:  # noqa: BLE001 - never leave a turn without turn_complete
            status = "failed"
            self._notices.error(f"Internal error: {exc}", "internal", turn_id)
        finally:
            await self._store.flush_in_worker()
        if status == "failed" and user_saved:
            self._retry.offer(turn_id, op.text)
        elif status == "completed" and failed_turn is not None:
            self._cut_off.replace(failed_turn)  # the retry's answer takes its place
        self.ended = status
        self._emit(
            p.TurnComplete(
                turn_id=turn_id, kind="regular", status=status, last_agent_message=last_message
            )
        )

    async def _servers_started(self) -> None:
        """A message sent while MCP servers are still starting (the first seconds of a session)
        waits for them a moment, so their tools are offered in this turn; a slow one is left
        behind after :data:`MCP_START_GRACE_S` (its tools come in a later turn)."""
        mcp = self._tools().mcp
        if mcp is None:
            return
        try:
            await asyncio.wait_for(mcp.wait_started(), MCP_START_GRACE_S)
        except TimeoutError:
            pass

    def message_fits(self, turn_id: str, op: p.UserTurn, message: Item) -> bool:
        """Refuse, before anything is sent or stored, a message that cannot fit the window even
        alone (with the instructions, tools and environment block, and room for an answer)."""
        in_server_tokens = self._meter.in_server_tokens()
        context = sum(
            self._counter.count_item(item) for item in self._requests.initial_context()
        )
        room = policy.message_room(
            self._meter.limit(), in_server_tokens(self._history.fixed_tokens + context)
        )
        tokens = in_server_tokens(self._counter.count_item(message))
        if room is None or tokens <= room:
            return True
        window = self._meter.window()
        where = f"the model's {window:,}-token context window" if window else "the model's limit"
        said = (
            f"Your message was not sent: it is about {tokens:,} tokens, and {where} leaves room "
            f"for at most {room:,} beside Coco's instructions and tools and an answer. Shorten it "
            "or send it in parts."
        )
        self._refuse(turn_id, op, said, "message_too_large")
        return False

    def _refuse(self, turn_id: str, op: p.UserTurn, message: str, kind: p.ErrorKind) -> None:
        """The message goes back to the composer, with its attachments, and why."""
        self._notices.error(message, kind, turn_id)
        self._emit(
            p.MessageNotSent(
                turn_id=turn_id, text=op.text, reason=message, attachments=op.attachments
            )
        )

    def _record_user_message(self, turn_id: str, message: Item) -> None:
        self._ensure_initial_context(turn_id)
        self._items.append(message, turn_id)
        data: dict[str, object] = {"text": message_text(message)}
        if shown := message_display(message, self._requests.attachments.folder):
            data["attachments"] = shown
        item = p.TurnItem(id=new_id("user"), kind="user_message", data=data)
        self._emit(p.ItemStarted(turn_id=turn_id, item=item))
        self._emit(p.ItemCompleted(turn_id=turn_id, item=item))

    def _ensure_initial_context(self, turn_id: str) -> None:
        """Inject the environment block when the history lacks it (new session, or after a
        compaction that dropped it: it is re-injected before the next user message)."""
        tools = self._tools()
        if not tools.enabled:
            return
        if any(
            is_message(item, "user") and message_text(item).startswith(ENVIRONMENT_CONTEXT_OPEN)
            for item in self._history.raw_items()
        ):
            return
        self._items.append(user_message(tools.environment_context()), turn_id)

    async def _compact_before_turn(
        self,
        turn_id: str,
        previous_model: str | None,
        history_len: int,
        usage: int,
        unchanged: bool,
    ) -> None:
        """Pre-turn auto compaction, the figures taken before the new message was recorded:
        the message stays out of the compaction and comes back last. A switch to a model with
        a smaller window compacts with the old model."""
        meter = self._meter
        incoming = max(0, meter.usage() - usage)
        if not policy.should_compact_before_turn(
            auto=self._requests.client_compacts(),
            history_len=history_len,
            usage=usage,
            incoming=incoming,
            limit=meter.limit(),
            unchanged_since_compaction=unchanged,
            post_compaction=self._compactor.post_compaction_usage,
        ):
            return
        model = policy.compaction_model_for_switch(
            previous_model,
            self._config().model,
            meter.window(previous_model) if previous_model else None,
            meter.window(),
        )
        held_out = len(self._history) - history_len
        await self._compactor.run(turn_id, "auto", model=model, held_out=held_out)

    def _record_interruption(self, turn_id: str, attempt: StreamAttempt | None) -> None:
        """Keep what the model had said, marked interrupted; leave no call without output."""
        items = self._items
        if attempt is not None:
            for item in attempt.items:
                items.append(item, turn_id)
            for item_id, text in attempt.partial_text.items():
                if text:
                    items.append(assistant_message(text, item_id), turn_id, interrupted=True)
        answered = {
            item.get("call_id")
            for item in self._history.raw_items()
            if item_type(item) == "function_call_output"
        }
        for item in list(self._history.raw_items()):
            if item_type(item) == "function_call" and item.get("call_id") not in answered:
                items.append(
                    function_call_output(
                        str(item.get("call_id", "")), "Interrupted by the user before it ran."
                    ),
                    turn_id,
                )
        self._notices.interrupted(turn_id)
