"""A conversation as a coordinator: the op queue, the event stream and the one task (a turn or
a compaction) that runs at a time. What it routes ops to lives in modules named after their
concept (``turn/``, ``manual_compaction``, ``compaction_undo``, ``turn_retry``, ``resume``,
``usage_meter``, ``notices``, ``session_record``, ``session_config``, ``context_view``); this
class builds them and wires them together. The rollout on disk is the source of truth for resume.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from .. import protocol as p
from ..compaction.runner import Compactor
from ..config import CoreConfig
from ..conversation.count_refiner import CountRefiner
from ..conversation.history import ContextHistory
from ..conversation.transcript import Transcript
from ..items import Item
from ..providers.capabilities import RemoteCapabilities
from ..recall import RecallTool
from ..rollout.store import OPEN_PROGRESS, OpenProgress, rollout_path
from ..sessions.open_sessions import forget_open, track_open
from ..sessions.record import SessionRecord
from ..tokens.calibration import calibration_store
from ..tokens.counter import TokenCounter
from ..tools.mcp.servers import McpServers
from .active_task import ActiveTask
from .compaction_undo import CompactionUndo
from .config import SessionConfig
from .context_view import context_entries
from .event_stream import EventStream
from .manual_compaction import ManualCompaction
from .notices import Notices
from .replay import replay_events
from .resume import SessionResume
from .turn.request import TurnRequests
from .turn.retry import TurnRetry
from .turn.task import UserTurnTask
from .usage_meter import UsageMeter


class Session:
    """One conversation with a model. Create with ``await Session.open(config)``."""

    def __init__(self, config: CoreConfig, session_id: str) -> None:
        self.id = session_id
        self._path = path = rollout_path(config.sessions_dir, session_id)
        self._counter = counter = TokenCounter(
            config.model, config.tokenizer_cache_dir, allow_download=config.tokenizer_download
        )
        self._history = history = ContextHistory(counter, config.instructions)
        self._refiner = CountRefiner(counter, history, lambda: self._emit(meter.token_event()))
        self._transcript = transcript = Transcript()
        self._recall = RecallTool(
            path, history=history.raw_items, window=lambda: meter.window(), count=counter.count
        )
        self._mcp = McpServers(lambda event: self._emit(event))
        self._settings = settings = SessionConfig(config, self._recall, history, self._mcp)
        self._events = EventStream()
        self._ops: asyncio.Queue[p.Op] = asyncio.Queue()
        self._loop_task: asyncio.Task[None] | None = None
        self._closed = False
        emit, get_config, get_tools = self._emit, lambda: settings.config, lambda: settings.tools
        self._store = store = SessionRecord(
            session_id, path, config=get_config, recall_index=self._recall.index,
            transcript=transcript, usage=lambda: meter.usage(), emit=emit,
        )
        record = store.record
        self._meter = meter = UsageMeter(
            config=get_config, counter=counter, history=history,
            calibration=calibration_store(config.data_dir),
            window=lambda model: compactor.window(model), limit=lambda model: compactor.limit(model),
            emit=emit, record=record,
        )
        self._notices = notices = Notices(
            config=get_config, transcript=transcript, emit=emit, record=record
        )
        self._requests = requests = TurnRequests(
            session_id, config=get_config, history=history, tools=get_tools, limit=meter.limit
        )
        self._compactor = compactor = Compactor(
            session_id=session_id, history=history, transcript=transcript, counter=counter,
            config=get_config, provider=settings.provider, tool_specs=lambda: settings.tools.specs(),
            initial_context=requests.initial_context, emit=emit, record=record,
            note=notices.note, usage_reset=meter.reset, emit_usage=meter.emit_usage,
            retry_notice=notices.retry_notice, turn_request=requests.build,
            capabilities=RemoteCapabilities(config.data_dir), usage=meter.usage,
            token_ratio=meter.token_ratio,
        )
        self._undo = undo = CompactionUndo(
            compactor=compactor, history=history, refiner=self._refiner, transcript=transcript,
            store=store, meter=meter, emit=emit,
        )
        self._retry = retry = TurnRetry(history, emit)
        self._turns = turns = UserTurnTask(
            config=get_config, tools=get_tools, provider=settings.provider, history=history,
            counter=counter, refiner=self._refiner, compactor=compactor, meter=meter,
            notices=notices, store=store, retry=retry, requests=requests, transcript=transcript,
            events=self._events, emit=emit, emit_undo_state=undo.emit_state,
        )
        self._active = ActiveTask(turns.run)
        self._manual = ManualCompaction(
            compactor=compactor, history=history, refiner=self._refiner, undo=undo, meter=meter,
            notices=notices, store=store, retry=retry, emit=emit,
        )
        self._resume = SessionResume(
            config=get_config, store=store, history=history, transcript=transcript,
            counter=counter, compactor=compactor, undo=undo, meter=meter, notices=notices,
            turns=turns, recall_index=self._recall.index, emit=emit,
        )

    # ================================================================ public API

    @classmethod
    async def open(
        cls,
        config: CoreConfig,
        session_id: str | None = None,
        *,
        progress: OpenProgress | None = None,
    ) -> Session:
        """A new session, or the one with ``session_id`` resumed from its rollout; a front end
        that shows how far a long open has got passes ``progress`` and polls it."""
        if session_id is None:
            session = cls(config, str(uuid.uuid4()))
            session._emit(p.SessionConfigured(session_id=session.id, model=config.model))
        else:
            session = cls(config, session_id)
            token = OPEN_PROGRESS.set(progress)  # the worker thread reads it (context copied)
            try:
                await asyncio.to_thread(session._resume.resume)
                await session._resume.precount()
            finally:
                OPEN_PROGRESS.reset(token)
        session._emit(session._meter.token_event())
        session._undo.emit_state()
        session._loop_task = asyncio.get_running_loop().create_task(session._submission_loop())
        track_open(session)  # renames and deletions of this session now go through it
        return session

    @property
    def config(self) -> CoreConfig:
        return self._settings.config

    @property
    def rollout_path(self) -> Path:
        return self._path

    async def submit(self, op: p.Op) -> str:
        """Queue an op; returns its submission id. Answers come as events."""
        if self._closed:
            raise RuntimeError("the session is closed")
        await self._ops.put(op)
        return uuid.uuid4().hex

    async def events(self) -> AsyncIterator[p.Event]:
        """Every event, in order, until shutdown. Meant for one consumer."""
        # Huge texts estimated while opening are counted exactly once the front end takes
        # events (it has drawn the conversation), not while it is still drawing it.
        self._refiner.schedule()
        while (event := await self._events.get()) is not None:
            yield event

    def history(self) -> list[Item]:
        """The model view: exactly what the next request's ``input`` starts with."""
        return self._history.items()

    def transcript(self) -> list[dict[str, Any]]:
        """The full record, compaction markers included (see ``Transcript``). Compaction
        entries say whether ``UndoCompaction`` would undo them right now."""
        return self._transcript.entries_for(self._history.raw_items(), self._compactor.undo.item_id)

    def replay_events(self) -> list[p.Event]:
        """The events that draw this conversation as it was drawn live (resume is a replay):
        a front end feeds them to the handler it uses for live events."""
        return replay_events(self._transcript.read_entries(), self._compactor.undo.item_id)

    def context_view(self) -> list[p.ContextEntry]:
        """What the model will see next, item by item, with the gauge's own counts."""
        return context_entries(self._history, self._compactor.pins)

    def token_usage(self) -> p.TokenCount:
        return self._meter.current()

    @property
    def busy(self) -> bool:
        return self._active.busy

    def rename(self, title: str) -> str:
        """Give this conversation a title, written through its own rollout writer (a second
        writer on the open file could interleave with it); the title as recorded. Raises
        ``ValueError`` for an empty title, ``ReadOnlySession`` or ``RolloutWriteError`` (in
        words) when it cannot be saved. ``SessionLibrary.rename`` calls this and updates the
        session list."""
        return self._store.rename(title)

    async def close(self) -> None:
        """Stop whatever runs, flush the rollout and end the event stream."""
        if self._closed:
            return
        await self.submit(p.Shutdown())
        if self._loop_task is not None:
            await asyncio.shield(self._loop_task)

    # ================================================================ submission loop

    async def _submission_loop(self) -> None:
        while True:
            op = await self._ops.get()
            try:
                if isinstance(op, p.Shutdown):
                    await self._shutdown()
                    return
                await self._handle(op)
            except Exception as exc:  # noqa: BLE001 - a bug must not kill the loop
                self._emit(p.Error(message=f"Internal error: {exc}", kind="internal"))

    async def _handle(self, op: p.Op) -> None:
        if isinstance(op, p.UserTurn):
            if not op.text.strip():
                self._emit(p.Error(message="Type a message first.", kind="invalid_op"))
            elif self.busy:
                self._active.queue(op)
            else:
                self._active.start(self._turns.run(op), "regular")
        elif isinstance(op, p.Compact):
            if self.busy and self._active.kind == "compact":
                self._emit(p.Error(message="A compaction is already running.", kind="invalid_op"))
                return
            if self.busy:
                await self._active.abort()
            self._active.start(self._manual.run(op.focus), "compact")
        elif isinstance(op, p.Interrupt):
            self._active.clear_queue()
            if self.busy:
                await self._active.abort()
        elif isinstance(op, p.UndoCompaction):
            if self.busy:
                message = "Wait for the current turn to finish before undoing."
                self._emit(p.Error(message=message, kind="invalid_op"))
            else:
                self._undo.undo()
        elif isinstance(op, p.UpdateConfig):
            self._apply_config(op.config)
        elif isinstance(op, p.RetryTurn):
            if (retry := self._retry.request(self.busy)) is not None:
                self._active.start(self._turns.run(retry), "regular")
        elif isinstance(op, p.FindInConversation):
            self._emit(await self._recall.matches(op.query, op.limit))
        elif isinstance(op, p.PinItem):
            self._compactor.pins.handle(op)
        elif isinstance(op, p.EditSummary | p.UndoSummaryEdit):
            self._compactor.summary_edits.handle(op, busy=self.busy)
        elif isinstance(op, p.ApproveToolCall) and not self._mcp.approvals.decide(
            op.call_id, op.decision
        ):
            self._emit(p.Error(message="No tool call waits for approval.", kind="invalid_op"))

    async def _shutdown(self) -> None:
        self._closed = True
        await self._active.close()
        await self._refiner.close()
        await self._settings.close()
        self._store.close()
        self._recall.index.close()
        forget_open(self)
        self._emit(p.ShutdownComplete())
        self._events.end()

    # ================================================================ config, events

    def _apply_config(self, config: CoreConfig) -> None:
        change = self._settings.apply(config)
        self._emit(self._meter.token_event())
        if change:
            # Kept with the conversation (shown again when it is reopened) once it has begun.
            if len(self._transcript):
                self._notices.note("background", change)
            self._emit(p.Background(message=change))

    def _emit(self, event: p.Event) -> None:
        if isinstance(event, p.TokenCount):
            self._meter.last_event = event
        self._events.put(event)
