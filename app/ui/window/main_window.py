"""The main window: sessions on the left, the transcript and composer in the middle, the Model
view on the right, compaction controls in the toolbar and the context gauge in the status bar.

The window lays out the widgets and wires them to its ``SessionController`` (the open session,
what the controls allow, user actions turned into ops, settings applied). Every core event the
controller passes on goes through ``_render`` to the widgets that show it. It never edits the
history.

``MainWindow`` is one QMainWindow whose methods are grouped in layers, each a module:
``session_view`` (the open session as shown), ``window_commands`` (what the user asks),
``window_layout`` (how the window is built). This module holds its construction, the routing
of core events to the panels, and closing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QTimer, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QWidget

from ..controller.session_controller import SessionController
from ..runtime import memory
from ..runtime.gil_handover import HandoverWhile
from ..style.icons import app_icon
from ..style.theme import apply_theme
from .app_context import AppContext
from .window_layout import WindowLayout
from .window_state import WindowState

if TYPE_CHECKING:
    from app.core import protocol as p

    from ..settings.dialog import SettingsDialog
    from .notifications import Notifications


class MainWindow(WindowLayout):
    """Coco's window. Open a session with ``await window.open_session(id_or_None)``."""

    closed = Signal()

    def __init__(self, context: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        # Before the widgets take their colours, and before the settings load (after the first
        # paint): the theme the window last used; open_session applies the settings' own.
        self.window_state = WindowState(context.config_dir)
        self._theme = self.window_state.theme()
        apply_theme(self._theme)
        self.controller = SessionController(context, self)
        self._closing = False
        self._close_done = False
        # Worker threads reading or sending attachments hand the interpreter back quickly.
        self.handover = HandoverWhile()
        self._settings_dialog: SettingsDialog | None = None
        self.setWindowTitle("Coco")
        self.setWindowIcon(app_icon())
        self.setAccessibleName("Coco")
        self.resize(1200, 780)

        self._build_actions()
        self._build_toolbar()
        self._build_body()
        self._build_menus()
        self._build_status()
        self._notifications: Notifications | None = None  # built with the first session
        self._wire_controller()
        self._update_controls()
        self._restore_geometry()

    def _wire_controller(self) -> None:
        controller = self.controller
        controller.branch_op_sent.connect(lambda: self.handover.begin("turn"))
        controller.branch_redrawn.connect(self._branch_drawn)
        controller.event_received.connect(self._render)
        controller.session_changing.connect(self._on_session_changing)
        controller.session_resumed.connect(self.transcript.replay_in_steps)
        controller.render_ahead = self.transcript.markdown_ahead
        controller.session_opened.connect(self._on_session_opened)
        controller.config_applied.connect(self._show_config)
        controller.submitted.connect(self.transcript.scroll_to_bottom)
        controller.controls_changed.connect(self._update_controls)
        controller.problem.connect(self.show_problem)
        controller.notice.connect(self.transcript.add_notice)
        controller.hint.connect(self.composer.show_hint)

    # ================================================================ events

    @staticmethod
    def _workers_run(event: p.Event) -> bool:
        """Whether worker threads now do a turn's heavy work (a compaction; a tool's output
        parsed, saved and indexed, a 10 MB one for a third of a second), so the window's thread
        is to get the interpreter back at once (``quick_handover``) until the turn ends; also
        while files are sent and a branch is rebuilt. Not while a plain answer streams: the
        window's own drawing is the work then, and short hand-overs lengthened its longest
        block by 2-3 ms."""
        return (event.type == "turn_started" and event.kind == "compact") or (
            event.type == "item_started" and event.item.kind == "function_call_output"
        )

    def _branch_drawn(self, _drawing: object) -> None:
        if not self.controller.busy:  # a switch (an edit's turn still runs: it ends that)
            self.handover.end("turn")

    def _render(self, event: p.Event) -> None:
        """Show one core event (the controller's state has already taken it in)."""
        state = self.controller.state
        changes = state.changes
        self.transcript.handle_live_event(event)
        self.approval_card.handle_event(event)
        self.notifications.handle_event(event)
        if event.type == "token_count":
            self._show_usage(event)
        if "compaction_started" in changes:
            self.indicator.start_compaction(
                state.compaction_automatic, state.stage, lambda: state.compaction_elapsed
            )
        if "stage" in changes and state.compacting:
            self.indicator.set_stage(state.stage, state.trimmed, state.stage_message)
        if event.type == "context_compacted":
            self.indicator.finish_compaction(
                event.tokens_before, event.tokens_after, event.freed_little
            )
        elif "compaction_ended" in changes:
            self.indicator.end_compaction()
        elif event.type == "compaction_undone":
            self.indicator.compaction_undone()
        if event.type in ("turn_complete", "context_compacted", "compaction_undone",
                          "session_configured", "item_pinned", "summary_edited",
                          "branch_switched") or (
            # The message just sent is in the history while the reply streams.
            event.type == "item_completed"
            and event.item.kind in ("user_message", "function_call_output")
        ):
            self.refresh_model_view()
        if self._workers_run(event):
            self.handover.begin("turn")
        elif event.type == "session_forked":
            self.handover.end("turn")
        if event.type == "turn_complete":
            self.handover.end("turn")
            self.sessions.set_current(self.session.id if self.session else "", reload=True)
            self._update_title()
        if event.type == "message_not_sent":
            self._give_back(event.text)
            self.composer.attachments.add_paths(event.attachments)
        if event.type == "attachments_inspected":
            self.composer.attachments.show_inspected(event)  # (its change ends "reading")
        if event.type == "conversation_matches":
            self.find_bar.show_matches(event)
        self.branch_view.handle_event(event)
        if event.type == "mcp_servers" and self._settings_dialog is not None:
            self._settings_dialog.show_mcp_states(event.servers)
        if event.type == "tool_approval_resolved" and event.decision == "always":
            self.remember_always_allowed(event.server, event.tool)

    def _give_back(self, text: str) -> None:
        """A message the core did not send goes back to the composer, to shorten or resend;
        what the user has typed since is kept, after it."""
        typed = self.composer.text().strip()
        if text.strip() and typed != text.strip():
            self.composer.set_text(f"{text}\n\n{typed}" if typed else text)
        self.composer.focus()

    def _show_usage(self, event: p.TokenCount) -> None:
        config = self.session.config if self.session is not None else None
        self.indicator.set_usage(
            event.total, event.context_window, event.auto_compact_limit, event.approximate,
            auto_compact=config.auto_compact if config is not None else True,
        )

    # ================================================================ closing

    def closeEvent(self, event: QCloseEvent) -> None:
        if self._close_done:
            event.accept()
            return
        event.ignore()
        if not self._closing:
            self._closing = True
            self.window_state.save(self, self.splitter, draft=self.composer.text())
            import asyncio

            asyncio.ensure_future(self._shutdown())

    async def _shutdown(self) -> None:
        try:
            await self.controller.close()
            memory.window_closed()
            self.context.flush()  # the last session, for the next start
        finally:
            self._close_done = True
            self.close()
            self.closed.emit()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self.banner.restyle()
            QTimer.singleShot(0, self._update_controls)
