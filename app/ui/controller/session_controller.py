"""The open session as the window drives it, with no widget code: opening and closing sessions,
what the controls allow right now, user actions turned into ops, and settings applied.

``MainWindow`` lays out the widgets and wires them to this object: it renders every core event
the controller passes on (``event_received``), shows what the controller reports (``problem``,
``notice``, ``hint``) and asks it what the controls allow (:meth:`controls`). The controller
never edits the history; everything it knows about the session comes from core events.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from ..runtime import memory
from ..runtime.gil_handover import quick_handover
from .state import CONTROL_EVENTS, ActivityState, Controls

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Callable
    from pathlib import Path

    from app.core import OpenProgress, Session
    from app.core import protocol as p
    from app.core.settings import AppSettings

    from ..window.app_context import AppContext
    from .branch_redraw import BranchRedraw
    from .bridge import SessionBridge
    from .commands import Command
    from .replay_prep import RenderAhead

log = logging.getLogger(__name__)

UNDO_BUSY_HINT = "Undo is possible once the current turn has finished."
RETRY_BUSY_HINT = "Retry is possible once the current turn has finished."
DEMO_MODEL_HINT = "The offline demo model cannot switch models; choose a provider in Settings."


class SessionController(QObject):
    """One open session at a time, its bridge, and the state its events describe."""

    event_received = Signal(object)  # every core event, after the state has taken it in
    session_changing = Signal()  # the shown session is about to be replaced: clear the view
    session_resumed = Signal(object)  # a reopened session's events (``session.replay_events()``)
    branch_redrawn = Signal(object)  # a BranchDrawing, after ``branch_switched``
    session_opened = Signal(str)  # the new session is open and its events flow
    config_applied = Signal(object)  # the CoreConfig now in use (model label, demo banner)
    submitted = Signal()  # a message or a compaction was sent: follow the transcript's end
    branch_op_sent = Signal()  # an edit, regeneration, switch or fork: workers rebuild the view
    controls_changed = Signal()  # what the controls allow may have changed
    problem = Signal(str)  # something went wrong: say so where the user looks
    notice = Signal(str, str)  # (kind, message): a line for the transcript
    hint = Signal(str)  # why a request was refused, next to the composer

    def __init__(self, context: AppContext, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self.session: Session | None = None
        self.bridge: SessionBridge | None = None  # one per open session
        self.redraw: BranchRedraw | None = None  # draws another branch made active
        from .branch_actions import BranchActions

        self.branches = BranchActions(self)  # edit, regenerate, switch, fork
        self.state = ActivityState()
        # The compaction Undo would undo now, as the core last said (UndoAvailable).
        self.undo_item_id: str | None = None
        self._awaiting_turn = False  # a message was sent; its turn has not started yet
        self._opening: asyncio.Future[Any] | None = None
        # How far opening a saved session has got (the transcript shows it); None otherwise.
        self.open_progress: OpenProgress | None = None
        # Called on the window's thread when a session is reopened: what renders Markdown
        # ahead in a worker thread for the replay (the window's renderer, as it is then).
        self.render_ahead: Callable[[], RenderAhead] | None = None

    # ================================================================ lifecycle

    async def open_session(self, session_id: str | None = None) -> bool:
        """Open ``session_id`` (resumed from disk) or a new session; False when it could not
        be opened (the reason is a notice and a new session takes its place)."""
        had_session = self.bridge is not None
        memory.fix_mmap_threshold()  # before any session's file is read
        from app.core import OpenProgress

        with memory.closing_session():
            await self.close()
            self.open_progress = OpenProgress() if session_id is not None else None
            self.session_changing.emit()
        from .replay_prep import prepare_replay

        if had_session:
            memory.session_replaced()
        self.state = ActivityState()
        self._awaiting_turn = False
        self.undo_item_id = None
        try:
            config = self.context.core_config()
        except ValueError as exc:
            self.problem.emit(f"{exc} Using the offline demo model instead.")
            self.context.offline = True
            config = self.context.core_config()
        from app.core import Session

        with memory.opening_session(), quick_handover():
            opened = True
            try:
                session = await Session.open(config, session_id=session_id, progress=self.open_progress)
            except (FileNotFoundError, ValueError, OSError) as exc:
                if session_id is None:
                    raise
                opened = False
                session = await Session.open(config)
                self.notice.emit("error", f"Could not open that session: {exc}")
            self.session = session
            from .bridge import SessionBridge

            self.bridge = SessionBridge(session, self)
            from .branch_redraw import BranchRedraw

            self.redraw = BranchRedraw(
                session, draw=self.branch_redrawn.emit, pass_on=self._pass_on,
                deliver=self._on_event, render_ahead=self.render_ahead,
            )
            self.bridge.event_received.connect(self._on_event)
            self.bridge.failed.connect(self.problem)
            if session_id is not None and opened:
                events = session.replay_events()
                ahead = self.render_ahead() if self.render_ahead is not None else None
                # Long messages, off-thread.
                await prepare_replay(events, self.open_progress, ahead)
                self.session_resumed.emit(events)
                # The conversation is drawn (the window lays it out in the loop's next turn,
                # ``TranscriptView.replay_in_steps``) and may paint it before the rest of the
                # opening (the session list, the title, the settings saved), which made one
                # block of 20-25 ms with the replay when the session holds a huge message.
                import asyncio

                await asyncio.sleep(0)  # the layout
                await asyncio.sleep(0)  # its paint
        self.bridge.start()
        self.config_applied.emit(config)
        self.context.remember(last_session_id=session.id)
        self.session_opened.emit(session.id)
        if self.open_progress is not None:
            self.open_progress.finished = True
        return opened

    def start_new_session(self) -> asyncio.Future[Any]:
        """Open a new, empty session."""
        return self.schedule_open(None)

    def schedule_open(self, session_id: str | None) -> asyncio.Future[Any]:
        """Open ``session_id`` (None: a new one) in the background; failures become
        ``problem``."""
        import asyncio

        self._opening = asyncio.ensure_future(self.open_session(session_id))
        self._opening.add_done_callback(self._report_open_failure)
        return self._opening

    def _report_open_failure(self, future: asyncio.Future[Any]) -> None:
        if not future.cancelled() and future.exception() is not None:
            log.error("Opening a session failed", exc_info=future.exception())
            self.problem.emit(f"Could not open a session: {future.exception()}")

    def session_deleted(self, session_id: str) -> None:
        """A session was moved to the trash: if it is the open one, continue in a new one."""
        if self.session is not None and session_id == self.session.id:
            self.start_new_session()

    async def delete_session(self, session_id: str, following: str | None = None) -> Path:
        """Move a saved session to the trash through the core's session library; its new path.
        The open session is shut down first (its writer closed and its lock released: a file
        still open cannot be moved on Windows) and ``following`` (the next session of the
        list), else a new session, takes its place; when the move fails it is opened again.
        Raises ``SessionActionError`` (in words)."""
        from app.core.sessions.library import SessionLibrary

        was_open = self.session is not None and self.session.id == session_id
        if was_open:
            await self.close()
        try:
            moved = await SessionLibrary(self.context.sessions_dir).delete(session_id)
        except Exception:
            if was_open:
                await self.open_session(session_id)  # nothing moved: the conversation goes on
            raise
        if was_open:
            await self.open_session(following if following != session_id else None)
        return moved

    async def close(self) -> None:
        """Shut the open session down (its events stop)."""
        bridge, self.bridge = self.bridge, None
        self.session = None
        if self.redraw is not None:
            self.redraw.cancel()
            self.redraw = None
        if bridge is not None:
            bridge.event_received.disconnect(self._on_event)
            await bridge.close()
            bridge.deleteLater()

    # ================================================================ events

    def _on_event(self, event: p.Event) -> None:
        redraw = self.redraw
        if redraw is not None:
            if redraw.holding:  # another branch is being drawn: this event comes after it
                redraw.hold(event)
                return
            if event.type == "branch_switched":
                redraw.start(event)
                return
        self._pass_on(event)

    def _pass_on(self, event: p.Event) -> None:
        self.state.apply(event)
        if event.type == "turn_started":
            self._awaiting_turn = False
        elif event.type == "error" and event.kind == "invalid_op" and self._awaiting_turn:
            self._awaiting_turn = False  # the op was refused: no turn is coming
            self.controls_changed.emit()
        elif event.type == "undo_available":
            self.undo_item_id = event.item_id
        self.event_received.emit(event)
        if event.type in CONTROL_EVENTS or "compaction_started" in self.state.changes:
            self.controls_changed.emit()

    # ================================================================ gating

    @property
    def busy(self) -> bool:
        """A turn runs, or a message was sent and its turn has not started yet."""
        return self.state.busy or self._awaiting_turn

    def compact_block_reason(self) -> str:
        """Why Compact is refused right now ("" when it is allowed)."""
        if not (self.state.compacting or self.busy):
            return ""
        # The slash commands' module, which has the words, is not needed before the first paint.
        from .commands import COMPACT_RUNNING_REASON, COMPACT_STREAMING_REASON

        return COMPACT_RUNNING_REASON if self.state.compacting else COMPACT_STREAMING_REASON

    def controls(self) -> Controls:
        """What the controls allow. Undo follows the core's ``UndoAvailable`` alone."""
        reason = self.compact_block_reason()
        return Controls(
            busy=self.busy,
            compact_enabled=self.session is not None and not reason,
            compact_reason=reason,
            undo_enabled=not self.busy and self.undo_item_id is not None,
            send_queued=self.state.compacting_on_its_own and not self._awaiting_turn,
        )

    # ================================================================ user actions → ops

    def submit(self, op: p.Op) -> bool:
        """Hand ``op`` to the open session (False, and a ``problem``, when none is open)."""
        if self.bridge is None:
            self.problem.emit("No session is open yet.")
            return False
        from app.core import ops  # imported when first needed: the window shows sooner

        if isinstance(op, (ops.UserTurn, ops.Compact)):
            memory.turn_starting()
        if isinstance(op, (ops.EditTurn, ops.RegenerateTurn, ops.SwitchBranch, ops.ForkSession)):
            self.branch_op_sent.emit()
        self.bridge.submit(op)
        return True

    def answer_tool_call(self, call_id: str, decision: str) -> bool:
        """The user's answer to an MCP tool call waiting for approval."""
        from app.core import ops

        if decision not in ("once", "always", "deny"):
            return False
        return self.submit(ops.ApproveToolCall(call_id=call_id, decision=decision))  # type: ignore[arg-type]

    def send_message(self, text: str, attachments: list[str] | None = None) -> bool:
        """Send a user message (the composer already refused it while busy), with the paths
        of the files attached to it."""
        from app.core import ops

        if not self.submit(ops.UserTurn(text=text, attachments=list(attachments or []))):
            return False
        self.expect_turn()
        return True

    def expect_turn(self) -> None:
        """An op that starts a turn was submitted: the controls wait for it."""
        self._awaiting_turn = True
        self.submitted.emit()
        self.controls_changed.emit()

    def compact(self, focus: str | None = None) -> bool:
        """Submit ``ops.Compact`` unless a turn runs (then say why)."""
        reason = self.compact_block_reason()
        if reason:
            self.hint.emit(reason)
            return False
        from app.core import ops

        if not self.submit(ops.Compact(focus=focus or None)):
            return False
        self._awaiting_turn = True
        self.submitted.emit()
        self.controls_changed.emit()
        return True

    def undo_compaction(self) -> bool:
        if self.busy:
            self.hint.emit(UNDO_BUSY_HINT)
            return False
        from app.core import ops

        return self.submit(ops.UndoCompaction())

    def retry_turn(self) -> bool:
        """Run the failed turn again (its error's Retry): the core refuses it in words when
        it can no longer be retried."""
        if self.busy:
            self.hint.emit(RETRY_BUSY_HINT)
            return False
        from app.core import ops

        if not self.submit(ops.RetryTurn()):
            return False
        self._awaiting_turn = True
        self.submitted.emit()
        self.controls_changed.emit()
        return True

    def stop(self) -> None:
        """Interrupt the streaming reply or the running compaction."""
        if self.busy:
            from app.core import ops

            self.submit(ops.Interrupt())

    def run_command(self, command: Command) -> bool:
        """Run a slash command; False for the ones the window handles (``/export``)."""
        if command.name == "compact":
            self.compact(command.argument or None)
        elif command.name == "new":
            self.start_new_session()
        elif command.name == "undo-compact":
            self.undo_compaction()
        elif command.name == "model":
            self.switch_model(command.argument)
        elif command.name == "fork":
            self.branches.fork_last()
        else:
            return False
        return True

    def switch_model(self, name: str) -> None:
        """``/model <name>``: save the model and apply it to the open session."""
        if self.context.using_demo:
            self.hint.emit(DEMO_MODEL_HINT)
            return
        settings = self.context.settings.model_copy(update={"model": name.strip()})
        self.apply_settings(settings, None)

    # ================================================================ settings

    def apply_settings(self, settings: AppSettings, api_key: str | None) -> bool:
        """Persist ``settings`` (and the key), then apply them to the open session."""
        try:
            self.context.save_settings(settings, api_key)
        except (OSError, ValueError) as exc:
            self.problem.emit(f"Could not save the settings: {exc}")
            return False
        self.context.offline = self.context.offline and settings.provider == "demo"
        try:
            config = self.context.core_config()
        except ValueError as exc:
            self.problem.emit(str(exc))
            return False
        self.config_applied.emit(config)
        if self.session is None:
            return True
        from app.core import ops

        # A provider switch (the demo to a real one, too) keeps the conversation: the history
        # is plain Responses items any provider reads, and a smaller window compacts first.
        # The core says what the change means for the conversation, and keeps that line.
        self.submit(ops.UpdateConfig(config=config))
        return True
