"""A conversation: the submission loop, turns, compaction tasks, persistence and resume.

Ops arrive through ``submit``; one task (a turn or a compaction) runs at a time; events go out
through ``events()`` in order. The rollout on disk is append-only and is the source of truth
for resume.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import deque
from collections.abc import AsyncIterator, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from . import protocol as p
from .calibration import Calibration, calibration_store
from .capabilities import RemoteCapabilities
from .collector import collector_paused
from .compaction import policy
from .compaction.carryover import is_notes_message
from .compaction.fit import truncate_text
from .compaction.prompts import is_summary_message
from .compaction.rebuild import build_compacted_history, real_user_messages
from .compaction.runner import NOTHING_NEW, Compactor
from .config import CoreConfig
from .config_change import describe_config_change
from .count_refiner import CountRefiner
from .event_stream import EventStream
from .history import ContextHistory
from .history_repair import pair_tool_calls
from .items import (
    ENVIRONMENT_CONTEXT_OPEN,
    Item,
    assistant_message,
    function_call_output,
    is_compaction_item,
    is_injected_context,
    is_message,
    item_count_parts,
    item_type,
    last_assistant_text,
    message_text,
    new_id,
    user_message,
)
from .pins import PIN_RECORD
from .providers.base import ModelProvider, ModelRequest, ProviderError, Usage
from .providers.errors import scrub_secrets
from .providers.factory import make_provider
from .providers.probe import local_tools_warning
from .recall import RecallTool, SessionTools
from .replay import (
    function_call_display,
    reasoning_summary,
    replay_events,
)
from .rollout import (
    OPEN_PROGRESS,
    OpenProgress,
    RecordTally,
    RolloutWriteError,
    RolloutWriter,
    progress_reporter,
    resume_rollout,
    rollout_path,
)
from .sampling import StreamAttempt, sample
from .secrets import redact_url
from .session_index import SESSION_TITLE_RECORD, SessionIndex, SessionInfo
from .session_lock import SessionInUse
from .sessions import forget_open, track_open
from .summary_edit import SUMMARY_EDIT_RECORD
from .tokens import TokenCounter
from .transcript import ENDED_KIND, Transcript
from .turn_errors import error_details as _error_details
from .turn_errors import error_kind as _error_kind

MAX_TOOL_ROUNDS = 64
# A tool output is never cut below this many tokens, however small the window.
TOOL_OUTPUT_FLOOR = 256
TITLE_LENGTH = 80

INTERRUPTED = "Interrupted by the user."
OVERFLOW_RECOVERY_FAILED = (
    "The conversation still does not fit the model's context window after compacting "
    "(recovery failed after one compact-and-retry). Start a new conversation or shorten "
    "your last message."
)
OVERFLOW_AUTO_OFF = (
    "The conversation ran out of room in the model's context window and automatic compaction "
    "is off. Compact it (/compact), turn automatic compaction on, or start a new conversation."
)

class TurnFailed(Exception):
    """A turn ended with an error that was already reported as an event."""


class ReadOnlySession(Exception):
    """The conversation can only be viewed (another Coco writes it, or its file cannot be
    written); the message says why in words."""


# What cannot be saved ends the turn with an error in words; the session goes on.
STORAGE_ERRORS = (RolloutWriteError, ReadOnlySession)



OUTPUT_LIMIT_WARNING = "The reply stopped at the model's output limit, so it may be cut short."

class Session:
    """One conversation with a model. Create with ``await Session.open(config)``."""

    def __init__(self, config: CoreConfig, session_id: str) -> None:
        self.id = session_id
        self._config = config
        self._counter = TokenCounter(
            config.model, config.tokenizer_cache_dir, allow_download=config.tokenizer_download
        )
        self._history = ContextHistory(self._counter, config.instructions)
        self._refiner = CountRefiner(
            self._counter, self._history, lambda: self._emit(self._token_event())
        )
        self._transcript = Transcript()
        self._recall = RecallTool(
            rollout_path(config.sessions_dir, session_id), history=self._history.raw_items,
            window=lambda: self._window(), count=self._counter.count,
        )
        self._tools = SessionTools(config, self._recall)
        self._history.set_tools(self._tools.specs())
        self._provider: ModelProvider | None = None
        self._events = EventStream()
        self._ops: asyncio.Queue[p.Op] = asyncio.Queue()
        self._pending_turns: deque[p.UserTurn] = deque()
        self._active: asyncio.Task[None] | None = None
        self._active_kind: Literal["regular", "compact"] | None = None
        self._loop_task: asyncio.Task[None] | None = None
        self._writer: RolloutWriter | None = None
        self._read_only: str | None = None  # why nothing can be written, when it cannot
        self._path = rollout_path(config.sessions_dir, session_id)
        self._created_at = _now()
        self._title: str | None = None
        self._closed = False
        self._compactor = Compactor(
            session_id=session_id,
            history=self._history,
            transcript=self._transcript,
            counter=self._counter,
            config=lambda: self._config,
            provider=self._get_provider,
            tool_specs=lambda: self._tools.specs(),
            initial_context=self._initial_context,
            emit=self._emit,
            record=self._record,
            note=self._note,
            usage_reset=self._reset_usage,
            emit_usage=self._emit_usage,
            retry_notice=self._retry_notice,
            turn_request=self._build_request,
            capabilities=RemoteCapabilities(config.data_dir),
            usage=self._usage,
            token_ratio=self._token_ratio,
        )
        self._calibration = calibration_store(config.data_dir)
        self._last_turn_model: str | None = None
        self._turn_items: list[Item] = []  # what the running turn added to the history
        self._tools_checked = False  # whether the server was asked if it keeps tools
        self._said_output_limit = False  # the output-limit warning is given once a session
        self._last_usage = Usage()
        self._usage_estimated_by_provider = False
        self._last_token_event: p.TokenCount | None = None
        # The last turn, when it failed after its message was recorded: (turn id, message).
        self._retry_point: tuple[str, str] | None = None
        self._retry_op: p.UserTurn | None = None  # the turn that runs the failed one again

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
                await asyncio.to_thread(session._resume)
                await session._precount_resumed()
            finally:
                OPEN_PROGRESS.reset(token)
        session._emit(session._token_event())
        session._emit_undo_state()
        session._loop_task = asyncio.get_running_loop().create_task(session._submission_loop())
        track_open(session)  # renames and deletions of this session now go through it
        return session

    @property
    def config(self) -> CoreConfig:
        return self._config

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
        in_view = frozenset(
            message_text(item) for item in self._history.raw_items() if is_message(item, "user")
        )
        entries = self._transcript.entries(in_view)
        undo_id = self._compactor.undo.item_id
        for entry in entries:
            if entry["kind"] == "compaction":
                entry["undoable"] = entry.get("item_id") == undo_id
        return entries

    def replay_events(self) -> list[p.Event]:
        """The events that draw this conversation as it was drawn live (resume is a replay):
        a front end feeds them to the handler it uses for live events."""
        return replay_events(self.transcript(), self._compactor.undo.item_id)

    def context_view(self) -> list[p.ContextEntry]:
        """What the model will see next, item by item, with the gauge's own counts."""
        tokens = self._history.item_tokens()
        entries: list[p.ContextEntry] = []
        for item, count in zip(self._history.raw_items(), tokens, strict=True):
            kind = item_type(item)
            readable, _ = item_count_parts(item)
            entries.append(
                p.ContextEntry(
                    role=str(item.get("role", "")) if kind == "message" else "",
                    kind=kind,
                    tokens=count,
                    is_summary=is_summary_message(item),
                    injected=is_injected_context(item),
                    pinned=self._compactor.pins.holds(item),
                    carried_notes=is_notes_message(item),
                    text=readable,
                )
            )
        return entries

    def token_usage(self) -> p.TokenCount:
        return self._last_token_event or self._token_event()

    @property
    def busy(self) -> bool:
        return self._active is not None and not self._active.done()

    def rename(self, title: str) -> str:
        """Give this conversation a title, written through its own rollout writer (a second
        writer on the open file could interleave with it); the title as recorded. Raises
        ``ValueError`` for an empty title, ``ReadOnlySession`` or ``RolloutWriteError`` (in
        words) when it cannot be saved. ``SessionLibrary.rename`` calls this and updates the
        session list."""
        title = title.strip()
        if not title:
            raise ValueError("A session title cannot be empty")
        self._record(SESSION_TITLE_RECORD, {"title": title})
        self._title = title
        return title

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
                self._pending_turns.append(op)
            else:
                self._start(self._run_user_turn(op), "regular")
        elif isinstance(op, p.Compact):
            if self.busy and self._active_kind == "compact":
                self._emit(p.Error(message="A compaction is already running.", kind="invalid_op"))
                return
            if self.busy:
                await self._abort_active()
            self._start(self._run_manual_compaction(op.focus), "compact")
        elif isinstance(op, p.Interrupt):
            self._pending_turns.clear()
            if self.busy:
                await self._abort_active()
        elif isinstance(op, p.UndoCompaction):
            if self.busy:
                self._emit(
                    p.Error(
                        message="Wait for the current turn to finish before undoing.",
                        kind="invalid_op",
                    )
                )
            else:
                self._undo_compaction()
        elif isinstance(op, p.UpdateConfig):
            self._apply_config(op.config)
        elif isinstance(op, p.RetryTurn):
            self._retry_turn()
        elif isinstance(op, p.FindInConversation):
            self._emit(await self._recall.matches(op.query, op.limit))
        elif isinstance(op, p.PinItem):
            self._compactor.pins.handle(op)
        elif isinstance(op, p.EditSummary | p.UndoSummaryEdit):
            self._compactor.summary_edits.handle(op, busy=self.busy)

    def _start(self, coro: Any, kind: Literal["regular", "compact"]) -> None:
        self._active_kind = kind
        self._active = asyncio.get_running_loop().create_task(coro)
        self._active.add_done_callback(self._on_task_done)

    def _on_task_done(self, task: asyncio.Task[None]) -> None:
        if task is not self._active:
            return
        self._active = None
        self._active_kind = None
        if self._pending_turns and not self._closed:
            self._start(self._run_user_turn(self._pending_turns.popleft()), "regular")

    async def _abort_active(self) -> None:
        task = self._active
        if task is None:
            return
        self._active = None  # the done callback must not start queued turns
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        self._active_kind = None

    async def _shutdown(self) -> None:
        self._closed = True
        self._pending_turns.clear()
        await self._abort_active()
        await self._refiner.close()
        if self._provider is not None:
            await self._provider.close()
        if self._writer is not None:
            try:
                self._writer.sync()
            except RolloutWriteError as exc:
                self._emit(p.Error(message=str(exc), kind="storage"))
            self._writer.close()
        self._recall.index.close()
        forget_open(self)
        self._emit(p.ShutdownComplete())
        self._events.end()

    # ================================================================ config

    def _apply_config(self, config: CoreConfig) -> None:
        old = self._config
        self._config = config
        if (old.base_url, old.api_key, old.wire_api, old.request_timeout) != (
            config.base_url,
            config.api_key,
            config.wire_api,
            config.request_timeout,
        ) and self._provider is not None:
            stale = self._provider
            self._provider = None
            asyncio.get_running_loop().create_task(stale.close())
        if SessionTools.changed(old, config):
            self._tools = SessionTools(config, self._recall)
            self._history.set_tools(self._tools.specs())
        if old.instructions != config.instructions:
            self._history.set_instructions(config.instructions)
        self._emit(self._token_event())
        change = describe_config_change(old, config)
        if change:
            # Kept with the conversation (shown again when it is reopened) once it has begun.
            if len(self._transcript):
                self._note("background", change)
            self._emit(p.Background(message=change))

    def _get_provider(self) -> ModelProvider:
        if self._provider is None:
            self._provider = make_provider(self._config)
        return self._provider

    # ================================================================ events & persistence

    def _emit(self, event: p.Event) -> None:
        if isinstance(event, p.TokenCount):
            self._last_token_event = event
        self._events.put(event)

    def _record(self, kind: str, payload: dict[str, Any]) -> None:
        """Append one record; raises ``RolloutWriteError`` (in words) or ``ReadOnlySession``."""
        if self._read_only is not None:
            raise ReadOnlySession(self._read_only)
        if self._writer is None:
            try:
                self._path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise RolloutWriteError(self._path, exc) from exc
            fresh = not self._path.exists()
            try:
                self._writer = RolloutWriter.exclusive(self._path)
            except SessionInUse as exc:
                raise ReadOnlySession(str(exc)) from exc
            self._recall.index.follow(self._writer, records=0 if fresh else None)
            if fresh:
                self._writer.append("session_meta", self._meta())
        self._writer.append(kind, payload)

    def _meta(self) -> dict[str, Any]:
        from .. import __version__

        return {
            "id": self.id,
            "created_at": self._created_at,
            "model": self._config.model,
            # never the key, also where a key is part of the URL itself
            "base_url": redact_url(
                self._config.base_url, [self._config.api_key.get_secret_value()]
            ),
            "wire_api": self._config.wire_api,
            "workspace": str(self._config.workspace) if self._config.workspace else None,
            "coco_version": __version__,
        }

    def _append_item(self, item: Item, turn_id: str, *, interrupted: bool = False) -> None:
        """Add an item to rollout, history and transcript; saved first, so an item that could
        not be saved is in none of them."""
        payload: dict[str, Any] = {"item": item, "turn_id": turn_id}
        if interrupted:
            payload["interrupted"] = True
        self._record("response_item", payload)
        self._history.append(item)
        self._compactor.undo.note_appended(item)
        self._turn_items.append(item)
        self._transcript.add_item(item, turn_id, interrupted=interrupted)

    def _note(self, kind: Literal["error", "warning", "background"], message: str) -> None:
        """An error/warning/background line worth showing again after resume (when it can be
        saved: a note about a failed write must not fail in turn)."""
        self._transcript.add_note(kind, message)
        try:
            self._record("event", {"kind": kind, "message": message})
        except STORAGE_ERRORS:
            pass

    def _error(self, message: str, kind: p.ErrorKind, turn_id: str | None = None) -> None:
        self._note("error", message)
        self._emit(p.Error(message=message, kind=kind, turn_id=turn_id))

    def _error_with_details(
        self, message: str, kind: p.ErrorKind, turn_id: str | None, details: str
    ) -> None:
        """An error with its technical detail (shown one click away, kept for resume); the
        detail is scrubbed of the key once more, whatever produced it."""
        details = scrub_secrets(details, [self._config.api_key.get_secret_value()])
        if not details:
            self._error(message, kind, turn_id)
            return
        self._transcript.add_error(message, details)
        try:
            self._record("event", {"kind": "error", "message": message, "details": details})
        except STORAGE_ERRORS:
            pass
        self._emit(p.Error(message=message, kind=kind, turn_id=turn_id, details=details))

    def _window(self, model: str | None = None) -> int | None:
        return self._compactor.window(model)

    def _limit(self, model: str | None = None) -> int | None:
        return self._compactor.limit(model)

    # ---------------------------------------------------------------- token calibration
    # A local model counts with its own tokenizer: once its server has reported the prompt
    # tokens of a request, Coco's estimates are scaled by how far off they were (issue 14), for
    # the gauge, the pre-send check and automatic compaction. The Responses API is OpenAI's
    # (or compatible with its tokenizer): tiktoken's counts are taken as they are there.

    def _calibration_now(self) -> Calibration | None:
        config = self._config
        if config.wire_api != "chat":
            return None
        return self._calibration.get(config.base_url, config.model)

    def _usage(self) -> int:
        calibration = self._calibration_now()
        return self._history.usage(calibration.apply if calibration else None)

    def _token_ratio(self) -> float:
        calibration = self._calibration_now()
        return calibration.ratio if calibration and calibration.samples else 1.0

    def _learn_calibration(self, estimate: int, attempt: StreamAttempt) -> None:
        usage = attempt.usage
        config = self._config
        if (
            config.wire_api == "chat"
            and usage is not None
            and not usage.estimated
            and usage.input_tokens > 0
            and self._counter.exact
        ):
            self._calibration.observe(config.base_url, config.model, estimate, usage.input_tokens)

    def _emit_undo_state(self) -> None:
        undo = self._compactor.undo
        reason = "" if undo.item_id else undo.refusal
        self._emit(p.UndoAvailable(item_id=undo.item_id, reason=reason))

    def _reset_usage(self) -> None:
        """After a history rewrite the provider's last figures no longer describe it."""
        self._usage_estimated_by_provider = False
        self._last_usage = Usage()

    def _token_event(self) -> p.TokenCount:
        estimate = self._history.usage_is_estimate
        approximate = (
            (estimate and not self._counter.exact)
            or self._usage_estimated_by_provider
            or self._counter.estimating  # a huge text's estimate: its exact count follows
        )
        return p.TokenCount(
            total=self._usage(),
            input=self._last_usage.input_tokens,
            output=self._last_usage.output_tokens,
            cached=self._last_usage.cached_tokens,
            reasoning=self._last_usage.reasoning_tokens,
            context_window=self._window(),
            auto_compact_limit=self._limit() if self._config.auto_compact else None,
            approximate=approximate,
            source="estimate" if estimate else "api",
        )

    def _emit_usage(self) -> None:
        event = self._token_event()
        self._emit(event)
        try:
            self._record(
                "event",
                {
                    "kind": "token_count",
                    "api_total": self._history.api_total,
                    "mark": self._history.mark,
                    "usage_estimated": self._usage_estimated_by_provider,
                    **event.model_dump(exclude={"type"}),
                },
            )
        except STORAGE_ERRORS:
            pass  # resume then estimates the usage instead of restoring the reported figure

    def _update_index(self) -> None:
        if self._writer is None:
            return
        title = self._title or _title_from(self._transcript.first_user_text)
        messages = self._transcript.message_count
        try:
            index = SessionIndex(self._config.sessions_dir)
            existing = index.get(self.id)
            index.upsert(
                SessionInfo(
                    id=self.id,
                    title=existing.title
                    if existing and existing.title != "New conversation"
                    else title,
                    created_at=existing.created_at if existing else self._created_at,
                    updated_at=_now(),
                    tokens=self._usage(),
                    message_count=messages,
                )
            )
        except OSError as exc:
            self._emit(p.Warning(message=f"Could not update the session list: {exc}"))

    # ================================================================ resume

    async def _precount_resumed(self) -> None:
        """Count the long texts the gauge needs at once (those after the last reported
        usage, or all when none was) in a worker thread, telling the open's progress: a 50 MB
        message took seconds to count on the window's thread."""
        history = self._history
        start = history.mark if history.api_total is not None else 0
        await self._counter.precount_items(
            history.raw_items()[start:], progress_reporter("counting"), estimate_huge=True
        )

    def _resume(self) -> None:
        if not self._path.exists():
            raise FileNotFoundError(f"No saved conversation with id {self.id}")
        read = RecordTally()
        with collector_paused():  # only live containers are made: collections are waste
            resumed = resume_rollout(self._path, consume=lambda r: self._replay(read.each(r)))
        warnings = list(resumed.warnings)
        self._writer, self._read_only = resumed.writer, resumed.read_only
        self._recall.index.follow(resumed.writer, records=read.count)
        if resumed.read_only:
            warnings.append(resumed.read_only)
        # A crash between a tool call and its output would make every later request fail.
        repair = pair_tool_calls(self._history.raw_items())
        if repair.changed:
            self._history.replace(repair.items)
            warnings.append(f"Repaired this conversation: {repair.describe()}.")
        self._emit(
            p.SessionConfigured(
                session_id=self.id,
                model=self._config.model,
                resumed=True,
                rollout_path=str(self._path),
            )
        )
        for warning in warnings:
            self._emit(p.Warning(message=warning))

    def _replay(self, records: Iterable[Any]) -> None:
        """Rebuild history and transcript from the rollout, in order (spec section 6).

        Items are counted lazily and the usage is restored once, from the last token count
        written after the last history rewrite: most items of a long rollout are replaced by
        a later compaction and never need counting.
        """
        usage: tuple[int | None, int] | None = None
        for record in records:
            payload = record.payload
            kind = record.type
            if kind == "session_meta":
                self._created_at = payload.get("created_at", self._created_at)
            elif kind == "session_title":
                self._title = payload.get("title") or None
            elif kind == "response_item" and isinstance(payload.get("item"), dict):
                self._history.append(payload["item"], defer_count=True)
                self._compactor.undo.note_appended(payload["item"])
                self._transcript.add_item(
                    payload["item"],
                    str(payload.get("turn_id", "")),
                    interrupted=bool(payload.get("interrupted")),
                )
            elif kind == "turn_context":
                self._compactor.undo.turn_started()
                self._last_turn_model = payload.get("model")
            elif kind == "compacted":
                usage = None  # the rewrite resets usage; a later token count restores it
                snapshot = self._history.snapshot()
                replacement = payload.get("replacement_history")
                if isinstance(replacement, list):
                    self._history.replace(replacement, defer_count=True)
                else:  # an older record: rebuild from the summary text (spec section 6)
                    summary = str(payload.get("message", ""))
                    rebuilt = build_compacted_history(self._history.raw_items(), summary)
                    self._history.replace(rebuilt.items, defer_count=True)
                compactor = self._compactor
                compactor.compacted_version = self._history.version
                tokens_after = payload.get("tokens_after")
                compactor.post_compaction_usage = (
                    tokens_after if isinstance(tokens_after, int) else None
                )
                if payload.get("strategy") not in ("remote", "prune"):
                    compactor.warned = True
                if payload.get("undoable", True):
                    compactor.undo.offer(str(payload.get("item_id", "")), snapshot)
                else:  # written by an older version: automatic compactions were final
                    compactor.undo.turn_started()
                self._transcript.add_compaction(
                    p.CompactionMarker.from_record(payload),
                    real_user_messages(self._history.raw_items()),
                )
            elif kind == "compaction_undone":
                usage = None
                self._restore_before_compaction()
            elif kind == PIN_RECORD:
                self._compactor.pins.replay(payload)
            elif kind == SUMMARY_EDIT_RECORD:
                self._compactor.summary_edits.replay(payload)
            elif kind == "history_replaced":
                usage = None
                replacement = payload.get("replacement_history")
                if isinstance(replacement, list):
                    self._history.replace(replacement, defer_count=True)
                self._transcript.mark_not_sent(str(payload.get("turn_id", "")))
            elif kind == "event":
                event_kind = payload.get("kind")
                if event_kind == "token_count":
                    api_total = payload.get("api_total")
                    usage = (
                        api_total if isinstance(api_total, int) else None,
                        int(payload.get("mark", len(self._history))),
                    )
                    self._usage_estimated_by_provider = bool(payload.get("usage_estimated"))
                    self._last_usage = Usage(
                        input_tokens=int(payload.get("input", 0)),
                        output_tokens=int(payload.get("output", 0)),
                        cached_tokens=int(payload.get("cached", 0)),
                        reasoning_tokens=int(payload.get("reasoning", 0)),
                    )
                elif event_kind == "error" and payload.get("details"):
                    self._transcript.add_error(
                        str(payload.get("message", "")), str(payload.get("details"))
                    )
                elif event_kind in ("error", "warning", "background", ENDED_KIND):
                    message = self._transcript.add_recorded(payload)
                    if message.startswith(OUTPUT_LIMIT_WARNING):
                        self._said_output_limit = True
        if usage is not None:
            self._history.set_usage(*usage)

    # ================================================================ turns

    async def _run_user_turn(self, op: p.UserTurn) -> None:
        turn_id = new_id("turn")
        self._emit(p.TurnStarted(turn_id=turn_id, kind="regular", context_window=self._window()))
        retry = op is self._retry_op  # RetryTurn: the message is in the history already
        self._forget_retry("The message is being sent again." if retry else None)
        status: Literal["completed", "aborted", "failed"] = "completed"
        last_message: str | None = None
        attempt_box: list[StreamAttempt] = []
        self._turn_items = []
        user_saved = retry
        try:
            if not retry:
                await self._counter.precount([op.text])  # a long message: counted off-thread
            await self._refiner.settled()  # what the decisions below count must be exact
            if not retry and not self._message_fits(turn_id, op.text):
                raise TurnFailed
            self._compactor.undo.turn_started()
            self._emit_undo_state()
            previous_model = self._last_turn_model
            self._last_turn_model = self._config.model
            self._record(
                "turn_context",
                {
                    "turn_id": turn_id,
                    "model": self._config.model,
                    "context_window": self._window(),
                    "auto_compact_limit": self._limit(),
                    **({"retry": True} if retry else {}),
                },
            )
            # The message is shown and recorded at once, before any pre-turn compaction: that
            # compaction leaves it out (the pre-turn shape) and puts it back last.
            before = (
                len(self._history),
                self._usage(),
                self._compactor.unchanged_since_compaction,
            )
            if not retry:  # (a retry sends the history as it is; an overflow still compacts)
                self._record_user_message(turn_id, op.text)
                user_saved = True
            await self._warn_once_about_tools()
            if not retry:
                await self._maybe_compact_before_turn(turn_id, previous_model, *before)
            last_message = await self._sampling_loop(turn_id, op.text, attempt_box)
        except asyncio.CancelledError:
            status = "aborted"
            try:
                self._record_interruption(turn_id, attempt_box[-1] if attempt_box else None)
            except STORAGE_ERRORS as exc:
                self._storage_failed(turn_id, exc, None)
        except TurnFailed:
            status = "failed"
        except STORAGE_ERRORS as exc:
            status = "failed"
            self._storage_failed(turn_id, exc, None if user_saved else op.text)
        except Exception as exc:  # noqa: BLE001 - never leave a turn without turn_complete
            status = "failed"
            self._error(f"Internal error: {exc}", "internal", turn_id)
        finally:
            self._finish_turn()
        if status == "failed" and user_saved:
            self._offer_retry(turn_id, op.text)
        self._emit(
            p.TurnComplete(
                turn_id=turn_id, kind="regular", status=status, last_agent_message=last_message
            )
        )

    # ---------------------------------------------------------------- retry

    def _retry_refusal(self) -> str:
        """Why ``RetryTurn`` would do nothing now ("" when it would run the failed turn)."""
        if self._retry_point is None:
            return "There is no failed message to send again."
        users = real_user_messages(self._history.raw_items())
        if not users or users[-1] != self._retry_point[1]:
            return "The failed message is no longer the last one in the conversation."
        return ""

    def _offer_retry(self, turn_id: str, text: str) -> None:
        """The turn failed with its message recorded: offer to run it again, when the message
        is still the last one the model would see."""
        self._retry_point = (turn_id, text)
        refusal = self._retry_refusal()
        if refusal:
            self._forget_retry(refusal)
        else:
            self._emit(p.RetryAvailable(turn_id=turn_id))

    def _forget_retry(self, reason: str | None = None) -> None:
        """A turn starts: the failed turn can no longer be retried."""
        if self._retry_point is not None:
            self._retry_point = None
            self._emit(p.RetryAvailable(turn_id=None, reason=reason or "A newer turn started."))

    def _retry_turn(self) -> None:
        if self.busy:
            self._emit(
                p.Error(message="Wait for the current turn to finish before retrying.",
                        kind="invalid_op")
            )
            return
        refusal = self._retry_refusal()
        if refusal or self._retry_point is None:
            self._emit(p.Error(message=refusal, kind="invalid_op"))
            self._forget_retry(refusal)
            return
        # The same turn runner, told by this very op that the message is already recorded.
        self._retry_op = p.UserTurn(text=self._retry_point[1])
        self._start(self._run_user_turn(self._retry_op), "regular")

    def _storage_failed(self, turn_id: str, exc: Exception, unsaved_text: str | None) -> None:
        """Saving failed: say so in words; the user's message, when it was not saved, goes back
        to the composer. What was shown stays on screen; the next turn tries to save again."""
        message = str(exc)
        if isinstance(exc, RolloutWriteError):
            message += " What is on screen was not saved; free some space (or fix the folder's "
            message += "permissions) and send again."
        self._emit(p.Error(message=message, kind="storage", turn_id=turn_id))
        if unsaved_text is not None:
            self._emit(p.MessageNotSent(turn_id=turn_id, text=unsaved_text, reason=message))

    async def _warn_once_about_tools(self) -> None:
        """A local server whose chat template drops tool definitions leaves the model blind to
        the workspace: said once a session, where the server tells (llama.cpp's /props)."""
        if self._tools_checked:
            return
        self._tools_checked = True
        warning = await local_tools_warning(self._config)
        if warning:
            self._note("warning", warning)
            self._emit(p.Warning(message=warning))

    def _message_fits(self, turn_id: str, text: str) -> bool:
        """Refuse, before anything is sent or stored, a message that cannot fit the window even
        alone (with the instructions, tools and environment block, and room for an answer)."""
        calibration = self._calibration_now()
        in_server_tokens = calibration.apply if calibration else (lambda n: n)
        context = sum(self._counter.count_item(item) for item in self._initial_context())
        room = policy.message_room(
            self._limit(), in_server_tokens(self._history.fixed_tokens + context)
        )
        tokens = in_server_tokens(self._counter.count_item(user_message(text)))
        if room is None or tokens <= room:
            return True
        window = self._window()
        where = f"the model's {window:,}-token context window" if window else "the model's limit"
        message = (
            f"Your message was not sent: it is about {tokens:,} tokens, and {where} leaves room "
            f"for at most {room:,} beside Coco's instructions and tools and an answer. Shorten it "
            "or send it in parts."
        )
        self._error(message, "message_too_large", turn_id)
        self._emit(p.MessageNotSent(turn_id=turn_id, text=text, reason=message))
        return False

    def _withdraw_turn(self, turn_id: str, text: str, reason: str) -> None:
        """Take this turn's items out of the model's view (overflow recovery failed), so the
        next message works; the transcript keeps them, the user message marked not sent."""
        ours = {id(item) for item in self._turn_items}
        remaining = [item for item in self._history.raw_items() if id(item) not in ours]
        if len(remaining) == len(self._history):
            return
        self._history.replace(remaining)
        self._compactor.compacted_version = None
        self._reset_usage()
        self._transcript.mark_not_sent(turn_id)
        self._record(
            "history_replaced",
            {"turn_id": turn_id, "reason": "withdrawn", "replacement_history": remaining},
        )
        self._emit_usage()
        self._emit(p.MessageNotSent(turn_id=turn_id, text=text, reason=reason))

    def _record_user_message(self, turn_id: str, text: str) -> None:
        self._ensure_initial_context(turn_id)
        self._append_item(user_message(text), turn_id)
        item = p.TurnItem(id=new_id("user"), kind="user_message", data={"text": text})
        self._emit(p.ItemStarted(turn_id=turn_id, item=item))
        self._emit(p.ItemCompleted(turn_id=turn_id, item=item))

    def _finish_turn(self) -> None:
        if self._writer is not None:
            try:
                self._writer.sync()
            except RolloutWriteError as exc:
                self._emit(p.Error(message=str(exc), kind="storage"))
        self._update_index()

    def _ensure_initial_context(self, turn_id: str) -> None:
        """Inject the environment block when the history lacks it (new session, or after a
        compaction that dropped it: it is re-injected before the next user message)."""
        if not self._tools.enabled:
            return
        if any(
            is_message(item, "user") and message_text(item).startswith(ENVIRONMENT_CONTEXT_OPEN)
            for item in self._history.raw_items()
        ):
            return
        self._append_item(user_message(self._tools.environment_context()), turn_id)

    def _initial_context(self) -> list[Item]:
        if not self._tools.enabled:
            return []
        return [user_message(self._tools.environment_context())]

    def _build_request(
        self, input_items: list[Item] | None = None, *, turn: bool = False
    ) -> ModelRequest:
        """A request with a turn's fields for ``input_items`` (default: the history). ``turn``:
        a turn's own request, which may ask the server to compact inside its response."""
        config = self._config
        items = self._history.raw_items() if input_items is None else input_items
        return ModelRequest(
            model=config.model,
            instructions=config.instructions,
            # Every call paired with an output (items are never mutated in place).
            input=pair_tool_calls(items).items,
            tools=self._tools.specs(),
            prompt_cache_key=self.id,
            reasoning_effort=config.reasoning_effort,
            include_encrypted_reasoning=config.is_reasoning_model,
            context_management=self._server_compaction() if turn else None,
        )

    def _client_compacts(self) -> bool:
        """Whether Coco compacts automatically before and inside turns: not when the server
        does it inside the response (it would always come first at the same limit). An
        overflow is still Coco's to recover from."""
        return self._config.auto_compact and self._server_compaction() is None

    def _server_compaction(self) -> list[dict[str, Any]] | None:
        """``context_management`` for a turn request (spec section 4, form c), when the user
        turned server-side compaction on and the server speaks the Responses API."""
        config = self._config
        limit = self._limit()
        if not (
            config.server_side_compaction
            and config.remote_compaction
            and config.auto_compact
            and config.wire_api == "responses"
            and limit is not None
        ):
            return None
        return [{"type": "compaction", "compact_threshold": limit}]

    async def _sampling_loop(
        self, turn_id: str, text: str, attempt_box: list[StreamAttempt]
    ) -> str | None:
        """Sample until the model answers without tool calls (spec: the tool loop)."""
        overflow_retried = False
        last_message: str | None = None
        started: set[str] = set()

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
            estimate = self._history.estimate()  # Coco's count of this request, to calibrate
            try:
                attempt = await sample(
                    self._get_provider(),
                    self._build_request(turn=True),
                    max_retries=self._config.max_retries,
                    base_delay=self._config.retry_base_delay,
                    on_retry=self._retry_notice(turn_id),
                    on_stall=self._stall_notice(turn_id),
                    on_delta=on_delta,
                    attempt_sink=attempt_box.append,
                    on_item=on_item,
                )
            except ProviderError as error:
                if error.category != "context_overflow":
                    self._error_with_details(
                        _describe(error), _error_kind(error), turn_id, _error_details(error)
                    )
                    raise TurnFailed from error
                window = self._window()
                if window is not None:
                    self._history.mark_full(window)
                    self._emit_usage()
                action = policy.on_overflow(
                    auto=self._config.auto_compact, already_retried=overflow_retried
                )
                if action == "auto_off":
                    self._error_with_details(
                        OVERFLOW_AUTO_OFF, "context_overflow", turn_id, _error_details(error)
                    )
                    raise TurnFailed from error
                if action == "give_up":
                    self._error_with_details(
                        OVERFLOW_RECOVERY_FAILED, "context_overflow", turn_id,
                        _error_details(error),
                    )
                    self._withdraw_turn(turn_id, text, OVERFLOW_RECOVERY_FAILED)
                    raise TurnFailed from error
                overflow_retried = True
                # On the turn's first request the new message stays out of the compaction and
                # comes back last (pre-turn shape); on a follow-up the summary is last.
                held_out = 1 if round_index == 0 else 0
                if not await self._compactor.run(
                    turn_id, "overflow", force=True, held_out=held_out
                ):
                    self._withdraw_turn(turn_id, text, OVERFLOW_RECOVERY_FAILED)
                    raise TurnFailed from error
                continue
            # A long reply is tokenised off the window's thread before it is recorded.
            await self._counter.precount_items(attempt.items)
            attempt_box.clear()
            self._learn_calibration(estimate, attempt)
            calls = self._record_outputs(turn_id, attempt, started)
            reply = last_assistant_text(attempt.items)
            if reply is not None:
                last_message = reply
            if not calls:
                self._warn_about_reply(turn_id, reply, attempt)
                return last_message
            for call in calls:
                await self._run_tool(turn_id, call)
            compactor = self._compactor
            if policy.should_compact_mid_turn(
                auto=self._client_compacts(),
                usage=self._usage(),
                limit=self._limit(),
                unchanged_since_compaction=compactor.unchanged_since_compaction,
                post_compaction=compactor.post_compaction_usage,
            ):
                await compactor.run(turn_id, "auto")
        self._error(
            f"Stopped after {MAX_TOOL_ROUNDS} tool rounds without a final answer.", "tool", turn_id
        )
        raise TurnFailed

    def _warn_about_reply(self, turn_id: str, reply: str | None, attempt: StreamAttempt) -> None:
        """A final answer that is empty, or cut at the output limit, says so."""
        if not (reply or "").strip():
            message = (
                "The model sent an empty reply (no text and no tool call). Try again, or "
                "rephrase the message."
            )
        elif attempt.stop_reason == "length" and self._said_output_limit:
            # Said once; a server whose every reply runs to its limit (llama.cpp's default
            # n_predict) would otherwise warn on every turn.
            message = "This reply also stopped at the output limit."
            self._note("background", message)
            self._emit(p.Background(turn_id=turn_id, message=message))
            return
        elif attempt.stop_reason == "length":
            self._said_output_limit = True
            message = (
                f"{OUTPUT_LIMIT_WARNING} Ask it to go on, or raise the server's output limit "
                "(llama.cpp: --n-predict)."
            )
        else:
            return
        self._note("warning", message)
        self._emit(p.Warning(message=message))

    def _record_outputs(
        self, turn_id: str, attempt: StreamAttempt, started: set[str]
    ) -> list[Item]:
        calls: list[Item] = []
        compacted_by_server = False
        for item in attempt.items:
            if is_compaction_item(item):
                # The server compacted inside this response (context_management): what came
                # before the item is no longer sent; the item carries it.
                self._compactor.apply_server_compaction(turn_id, item)
                compacted_by_server = True
                continue
            self._append_item(item, turn_id)
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
            self._last_usage = usage
            self._usage_estimated_by_provider = usage.estimated
            self._history.record_api_usage(usage.total_tokens)
        self._emit_usage()
        return calls

    async def _run_tool(self, turn_id: str, call: Item) -> None:
        call_id = str(call.get("call_id", ""))
        display = p.TurnItem(
            id=f"out_{call_id}",
            kind="function_call_output",
            data={"call_id": call_id, "name": call.get("name", "")},
        )
        self._emit(p.ItemStarted(turn_id=turn_id, item=display))
        result = await self._tools.call(str(call.get("name", "")), str(call.get("arguments", "")))
        await self._counter.precount([result.output])  # a long output: counted off-thread
        output = self._fit_tool_output(result.output)
        self._append_item(function_call_output(call_id, output), turn_id)
        self._emit(
            p.ItemCompleted(
                turn_id=turn_id,
                item=display.model_copy(
                    update={"data": {**display.data, "output": result.output, "ok": result.ok}}
                ),
            )
        )

    def _fit_tool_output(self, output: str) -> str:
        """A tool output is cut to what a compacted history can hold beside it (half the
        target), so one large file never leaves a conversation that cannot fit."""
        budget = self._compactor.budget()
        room = budget.history_room
        if room is None:
            return output
        cap = max(TOOL_OUTPUT_FLOOR, room // 2)
        if self._counter.count(output) <= cap:
            return output
        return truncate_text(output, cap, self._counter.count)

    def _retry_notice(self, turn_id: str) -> Any:
        def notice(attempt: int, max_attempts: int, error: ProviderError) -> None:
            wait = error.retry_wait
            self._emit(
                p.StreamError(
                    turn_id=turn_id,
                    message=f"Reconnecting... {attempt}/{max_attempts}",
                    attempt=attempt,
                    max_attempts=max_attempts,
                    details=_describe(error),
                    reason=wait.reason if wait is not None else "",
                    wait_seconds=wait.seconds if wait is not None else None,
                    requested_seconds=wait.requested if wait is not None else None,
                )
            )

        return notice

    def _stall_notice(self, turn_id: str) -> Any:
        """Says when the server has sent nothing for a while (``seconds``), and when data
        flows again (``None``); the window counts on from the figures."""

        def notice(seconds: float | None) -> None:
            self._emit(
                p.StreamWaiting(
                    turn_id=turn_id,
                    since_seconds=seconds or 0.0,
                    timeout_seconds=self._config.request_timeout,
                    stalled=seconds is not None,
                )
            )

        return notice

    def _record_interruption(self, turn_id: str, attempt: StreamAttempt | None) -> None:
        """Keep what the model had said, marked interrupted; leave no call without output."""
        if attempt is not None:
            for item in attempt.items:
                self._append_item(item, turn_id)
            for item_id, text in attempt.partial_text.items():
                if text:
                    self._append_item(assistant_message(text, item_id), turn_id, interrupted=True)
        answered = {
            item.get("call_id")
            for item in self._history.raw_items()
            if item_type(item) == "function_call_output"
        }
        for item in list(self._history.raw_items()):
            if item_type(item) == "function_call" and item.get("call_id") not in answered:
                self._append_item(
                    function_call_output(
                        str(item.get("call_id", "")), "Interrupted by the user before it ran."
                    ),
                    turn_id,
                )
        self._note("warning", INTERRUPTED)
        self._emit(p.Warning(message=INTERRUPTED))
        self._record("event", {"kind": "interrupted", "turn_id": turn_id})

    # ================================================================ compaction

    async def _maybe_compact_before_turn(
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
        incoming = max(0, self._usage() - usage)
        if not policy.should_compact_before_turn(
            auto=self._client_compacts(),
            history_len=history_len,
            usage=usage,
            incoming=incoming,
            limit=self._limit(),
            unchanged_since_compaction=unchanged,
            post_compaction=self._compactor.post_compaction_usage,
        ):
            return
        model = policy.compaction_model_for_switch(
            previous_model,
            self._config.model,
            self._window(previous_model) if previous_model else None,
            self._window(),
        )
        held_out = len(self._history) - history_len
        await self._compactor.run(turn_id, "auto", model=model, held_out=held_out)

    async def _run_manual_compaction(self, focus: str | None) -> None:
        turn_id = new_id("turn")
        self._emit(p.TurnStarted(turn_id=turn_id, kind="compact", context_window=self._window()))
        status: Literal["completed", "aborted", "failed"] = "completed"
        try:
            await self._refiner.settled()  # the compaction's figures count huge texts exactly
            # Nothing to do is information, not a failure: said as a background line.
            unchanged = self._compactor.unchanged_since_compaction
            if len(self._history) == 0 or (unchanged and not focus):
                said = "Nothing to compact yet." if not unchanged else NOTHING_NEW
                self._emit(p.Background(turn_id=turn_id, message=said))
            else:  # a focus right after a compaction: summarise the same history again
                if unchanged and self._compactor.undo.item_id:
                    self._undo_compaction()  # from the full history, not from the summary
                if not await self._compactor.run(turn_id, "manual", focus=focus, force=True):
                    status = "failed"
        except asyncio.CancelledError:
            status = "aborted"
        except STORAGE_ERRORS as exc:
            status = "failed"
            self._storage_failed(turn_id, exc, None)
        finally:
            self._finish_turn()
        self._emit(p.TurnComplete(turn_id=turn_id, kind="compact", status=status))
        if self._retry_point is not None:  # a failed message survives a compaction that kept it
            self._offer_retry(*self._retry_point)

    def _restore_before_compaction(self) -> str | None:
        """Undo the last compaction in memory: the history before it, then what came after it.
        Returns the compaction's item id, or None when there is nothing to undo."""
        entry = self._compactor.undo.take()
        if entry is None:
            return None
        self._history.restore(entry.snapshot)
        self._refiner.recount_refined()
        for item in entry.appended:
            self._history.append(item, defer_count=True)
        self._transcript.mark_undone(entry.item_id)
        self._compactor.compacted_version = None
        self._compactor.post_compaction_usage = None
        return entry.item_id

    def _undo_compaction(self) -> None:
        item_id = self._compactor.undo.item_id
        if item_id is None:
            self._emit(p.Error(message=self._compactor.undo.refusal, kind="invalid_op"))
            self._emit_undo_state()
            return
        try:  # saved first: an undo that could not be saved is not done
            self._record("compaction_undone", {"item_id": item_id})
            if self._writer is not None:
                self._writer.sync()
        except STORAGE_ERRORS as exc:
            self._emit(p.Error(message=str(exc), kind="storage"))
            return
        self._restore_before_compaction()
        self._emit(p.CompactionUndone(item_id=item_id, tokens=self._usage()))
        self._emit_usage()
        self._emit_undo_state()


# ==================================================================== helpers

def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _title_from(first_user_text: str | None) -> str:
    text = " ".join((first_user_text or "").split())
    if not text:
        return "New conversation"
    return text if len(text) <= TITLE_LENGTH else text[: TITLE_LENGTH - 1] + "…"


def _describe(error: ProviderError) -> str:
    return error.message
