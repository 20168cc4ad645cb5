"""A conversation as a coordinator: the op queue, the event stream and the one task (a turn or
a compaction) that runs at a time. What it routes ops to lives in modules named after their
concept (``turn/``, ``manual_compaction``, ``compaction_undo``, ``turn_retry``, ``resume``,
``usage_meter``, ``notices``, ``session_record``, ``session_config``, ``context_view``); this
class builds them and wires them together. The rollout on disk is the source of truth for resume.
"""

from __future__ import annotations

import asyncio
import functools
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from .. import protocol as p
from ..attachments.session_files import SessionAttachments
from ..attachments.store import files_folder
from ..config import CoreConfig
from ..conversation.tree import TurnTree
from ..items import Item
from ..recall import RecallTool
from ..rollout.store import OPEN_PROGRESS, OpenProgress, rollout_path
from ..sessions.open_sessions import forget_open, track_open
from ..sessions.record import SessionRecord
from ..tokens.counter import TokenCounter
from ..tools.mcp.servers import McpServers
from .active_task import ActiveTask
from .branches import Branches
from .config import SessionConfig
from .context_view import context_entries
from .event_stream import EventStream
from .parts import BranchParts, Shared, build_parts
from .replay import replay_events


class Session:
    """One conversation with a model. Create with ``await Session.open(config)``."""

    def __init__(self, config: CoreConfig, session_id: str) -> None:
        self.id = session_id
        self._path = path = rollout_path(config.sessions_dir, session_id)
        self._counter = counter = TokenCounter(
            config.model, config.tokenizer_cache_dir, allow_download=config.tokenizer_download
        )
        self._recall = RecallTool(
            path, history=lambda: self._parts.history.raw_items(),
            window=lambda: self._parts.meter.window(), count=counter.count,
        )
        self._tree = self._recall.tree = tree = TurnTree()
        self._mcp = McpServers(lambda event: self._emit(event))
        self._settings = SessionConfig(config, self._recall, self._mcp)
        self._events = EventStream()
        self._ops: asyncio.Queue[p.Op] = asyncio.Queue()
        self._loop_task: asyncio.Task[None] | None = None
        self._closed = False
        self._store = SessionRecord(
            session_id, path, config=lambda: self._settings.config,
            recall_index=self._recall.index, tree=tree,
            transcript=lambda: self._parts.transcript, usage=lambda: self._parts.meter.usage(),
            emit=self._emit,
        )
        self._shared = shared = Shared(
            session_id=session_id, counter=counter, settings=self._settings, store=self._store,
            events=self._events, tree=tree, emit=self._emit,
            attachments=SessionAttachments(files_folder(path), counter.count),
        )
        self._parts: BranchParts = build_parts(shared)
        self._settings.attach(self._parts.history)
        self._active = ActiveTask(
            lambda op: self._parts.turns.run(op), lambda: self._parts.after_turn.task()
        )
        self._branches = Branches(
            shared, parts=lambda: self._parts, install=self._install, busy=lambda: self.busy
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
                index = session._recall.index
                if await asyncio.to_thread(session._parts.resume.resume, index):
                    await session._replay_active_path()
                await session._parts.resume.precount()
            finally:
                OPEN_PROGRESS.reset(token)
        session._emit(session._parts.meter.token_event())
        session._parts.undo.emit_state()
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
        self._parts.refiner.schedule()
        while (event := await self._events.get()) is not None:
            yield event

    def history(self) -> list[Item]:
        """The model view: exactly what the next request's ``input`` starts with."""
        return self._parts.history.items()

    def transcript(self) -> list[dict[str, Any]]:
        """The full record, compaction markers included (see ``Transcript``). Compaction
        entries say whether ``UndoCompaction`` would undo them right now."""
        parts = self._parts
        return parts.transcript.entries_for(parts.history.raw_items(), parts.compactor.undo.item_id)

    def replay_events(self) -> list[p.Event]:
        """The events that draw this conversation as it was drawn live (resume is a replay):
        a front end feeds them to the handler it uses for live events."""
        return self.replay_builder()()

    def replay_builder(self) -> Callable[[], list[p.Event]]:
        """``replay_events`` as a function a worker thread can run (a long branch takes tens
        of milliseconds to tell): what it tells is taken now."""
        parts = self._parts
        return functools.partial(
            replay_events, parts.transcript.read_entries(), parts.compactor.undo.item_id,
            self._branches.turn_branches(), self._shared.attachments.folder, parts.undo.state(),
        )

    def tree(self) -> p.ConversationTree:
        """The conversation as a tree of turns, the active branch's marked (a panel draws it)."""
        return self._branches.tree_view()

    def turn_items(self) -> dict[str, list[dict[str, Any]]]:
        """Every turn's items as recorded, on every branch (reads the rollout once)."""
        return self._branches.turn_items()

    def context_view(self) -> list[p.ContextEntry]:
        """What the model will see next, item by item, with the gauge's own counts."""
        return context_entries(self._parts.history, self._parts.compactor.pins)

    def token_usage(self) -> p.TokenCount:
        return self._parts.meter.current()

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
        parts = self._parts
        if isinstance(op, p.UserTurn):
            if not op.text.strip() and not op.attachments:
                self._emit(p.Error(message="Type a message first.", kind="invalid_op"))
            elif self.busy:
                self._active.queue(op)
            else:
                self._active.start(parts.turns.run(op), "regular")
        elif isinstance(op, p.Compact):
            if self.busy and self._active.kind == "compact":
                self._emit(p.Error(message="A compaction is already running.", kind="invalid_op"))
                return
            if self.busy:
                await self._active.abort()
            self._active.start(parts.manual.run(op.focus), "compact")
        elif isinstance(op, p.Interrupt):
            self._active.clear_queue()
            if self.busy:
                await self._active.abort()
        elif isinstance(op, p.UndoCompaction):
            if self.busy:
                message = "Wait for the current turn to finish before undoing."
                self._emit(p.Error(message=message, kind="invalid_op"))
            else:
                parts.undo.undo()
        elif isinstance(op, p.UpdateConfig):
            self._apply_config(op.config)
        elif isinstance(op, p.RetryTurn):
            if (retry := parts.retry.request(self.busy)) is not None:
                self._active.start(parts.turns.run(retry), "regular")
        elif isinstance(op, p.InspectAttachments):
            self._shared.attachments.inspect(op.paths, self._emit)
        elif isinstance(op, p.FindInConversation):
            self._emit(await self._recall.matches(op.query, op.limit))
        elif isinstance(op, p.PinItem):
            parts.compactor.pins.handle(op)
        elif isinstance(op, p.EditSummary | p.UndoSummaryEdit):
            parts.compactor.summary_edits.handle(op, busy=self.busy)
        elif isinstance(
            op, p.EditTurn | p.RegenerateTurn | p.SwitchBranch | p.ForkSession
            | p.UndoBranchSummary,
        ) and (task := self._branches.task(op)) is not None:
            self._active.start(task, "branch")
        elif isinstance(op, p.ApproveToolCall) and not self._mcp.approvals.decide(
            op.call_id, op.decision
        ):
            self._emit(p.Error(message="No tool call waits for approval.", kind="invalid_op"))

    async def _shutdown(self) -> None:
        self._closed = True
        await self._active.close()
        await self._parts.refiner.close()
        await self._settings.close()
        self._store.close()
        self._recall.index.close()
        forget_open(self)
        self._emit(p.ShutdownComplete())
        self._events.end()

    # ================================================================ config, branches, events

    def _apply_config(self, config: CoreConfig) -> None:
        change = self._settings.apply(config)
        parts = self._parts
        self._emit(parts.meter.token_event())
        if change:
            # Kept with the conversation (shown again when it is reopened) once it has begun.
            if len(parts.transcript):
                parts.notices.note("background", change)
            self._emit(p.Background(message=change))

    async def _replay_active_path(self) -> None:
        """The conversation has branches: its view built again, into fresh parts, from the
        active path's records (the first read replayed only until the first branch)."""
        parts = build_parts(self._shared)
        self._settings.attach(parts.history)
        await asyncio.to_thread(parts.resume.replay_path)
        self._parts = parts

    async def _install(self, parts: BranchParts, tree: TurnTree) -> None:
        """Another branch's view takes over (built off the window's thread from the rollout,
        ``tree`` read with it): the gauge and Undo follow it."""
        old, self._parts = self._parts, parts
        self._settings.attach(parts.history)
        self._tree.adopt(tree)
        await old.refiner.close()
        self._emit(parts.meter.token_event())
        parts.undo.emit_state()
        parts.refiner.schedule()

    def _emit(self, event: p.Event) -> None:
        if isinstance(event, p.TokenCount):
            self._parts.meter.last_event = event
        self._events.put(event)
