"""The open session as the window shows it: opening and switching sessions, the window's title
and theme, the Model view pane, what the controls allow, and the desktop notifications.

The lowest layer of ``MainWindow`` (``main_window``): a group of the window's methods, kept
apart from how the window is built (``window_layout``) and what the user asks of it
(``window_commands``). The parts it uses are built by ``WindowLayout``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject, QTimer, Signal
from PySide6.QtWidgets import QMainWindow

from ..controller.format import model_text
from ..controller.state import ActivityState
from ..runtime import memory, preload
from ..runtime.single_instance import bring_to_front
from ..style.theme import apply_theme, pygments_style_name
from ..style.widgets import RichTextView

if TYPE_CHECKING:
    import asyncio

    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QVBoxLayout, QWidget

    from app.core import CoreConfig, Session

    from ..composer.widget import Composer
    from ..controller.bridge import SessionBridge
    from ..controller.session_controller import SessionController
    from ..sessions.session_list import SessionListPanel
    from ..style.widgets import ElidedLabel
    from ..transcript.view import TranscriptView
    from .app_context import AppContext
    from .approval_card import ApprovalCard
    from .demo_banner import DemoBanner
    from .model_view import ModelViewPanel
    from .notifications import Notifications
    from .window_state import WindowState

COMPACT_TIP = "Summarise the conversation now to free context (Ctrl+K)"


def _prepare_code_lexers() -> None:
    """The preload's window part in its worker thread: the common code languages' lexers
    compiled, which the first code block in each paid in the block that drew it."""
    from ..richtext.markdown import prepare_lexers

    prepare_lexers()


class SessionView(QMainWindow):
    """The window's view of its open session (see the module docstring)."""

    session_opened = Signal(str)
    # How long after a session is shown the first message's needs are prepared (once).
    PREPARE_AFTER_MS = 1000
    LOADED_POLL_MS = 50

    # The window's parts this layer uses (set by MainWindow and WindowLayout).
    context: AppContext
    controller: SessionController
    window_state: WindowState
    _theme: str
    _closing: bool
    _notifications: Notifications | None
    sessions: SessionListPanel
    banner: DemoBanner
    transcript: TranscriptView
    approval_card: ApprovalCard
    composer: Composer
    model_label: ElidedLabel
    model_view_pane: QWidget
    _model_view_layout: QVBoxLayout
    _model_view: ModelViewPanel | None
    compact_action: QAction
    undo_action: QAction
    stop_action: QAction
    compact_button: QWidget | None

    # ================================================================ the open session

    @property
    def session(self) -> Session | None:
        return self.controller.session

    @property
    def bridge(self) -> SessionBridge | None:
        return self.controller.bridge

    @property
    def state(self) -> ActivityState:
        return self.controller.state

    @property
    def busy(self) -> bool:
        return self.controller.busy

    async def open_session(self, session_id: str | None = None) -> bool:
        """Show ``session_id`` (resumed from disk) or a new session; False when it could not
        be opened (the reason is shown and a new session takes its place)."""
        self._use_theme(self.context.settings.theme)
        return await self.controller.open_session(session_id)

    def _use_theme(self, theme: str) -> None:
        """Apply the settings' theme if the window is not already in it, and remember it for
        the next start's first paint."""
        if theme != self._theme:
            self._theme = theme
            apply_theme(theme)
            self.window_state.save_theme(theme)

    def start_new_session(self) -> asyncio.Future[Any]:
        """Open a new, empty session (Ctrl+N, /new)."""
        return self.controller.start_new_session()

    def _schedule_open(self, session_id: str | None) -> asyncio.Future[Any]:
        return self.controller.schedule_open(session_id)

    def _on_session_changing(self) -> None:
        self.transcript.clear()
        self.approval_card.clear()
        self.transcript.watch_opening(self.controller.open_progress)
        self.notifications.reset()

    def _on_session_opened(self, session_id: str) -> None:
        self.sessions.set_current(session_id)
        self._update_title()
        self.refresh_model_view()
        self._update_controls()
        self._after_next_paint(memory.session_shown)
        # Then, once the window has idled a moment, what the first message will need.
        self._after_next_paint(
            lambda: QTimer.singleShot(self.PREPARE_AFTER_MS, self, self._prepare_first_message)
        )
        self.session_opened.emit(session_id)

    def _prepare_first_message(self) -> None:
        """Once per process, a moment after a session is shown: what the first message needs
        is loaded in a worker thread, and the first message view is built now, while the
        window idles, rather than in the block that sends the message (0.16-0.19 s there).
        Not at once: a session opened right after the first (the start-up's empty one, then a
        click) would share the interpreter with 0.2 s of imports."""
        if self._closing:
            return
        preload.start(pygments_style_name(), _prepare_code_lexers)
        RichTextView.warm_up(self.transcript.viewport())
        self._warm_rows_when_loaded()

    def _warm_rows_when_loaded(self) -> None:
        """Once the preload is done, the first message widgets are built (a poll every
        ``LOADED_POLL_MS``: building them needs the Markdown modules it imports)."""
        thread = preload.started()
        if self._closing or thread is None:
            return
        if thread.is_alive():
            QTimer.singleShot(self.LOADED_POLL_MS, self, self._warm_rows_when_loaded)
            return
        self.transcript.warm_up_rows()
        preload.settle()

    def _show_config(self, config: CoreConfig) -> None:
        self.banner.setVisible(self.context.using_demo)
        self.model_label.setText(
            model_text(
                str(config.model), str(config.base_url), demo=config.demo_hints,
                provider=config.provider_name,
            )
        )

    def _after_next_paint(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once, just after the transcript has next painted (or after half a
        second if it does not paint, e.g. while the window is hidden)."""
        done = False

        def run() -> None:
            nonlocal done
            if not done:
                done = True
                viewport.removeEventFilter(watch)
                watch.deleteLater()
                if not self._closing:
                    callback()

        class _Watch(QObject):
            def eventFilter(self, obj: QObject, event: QEvent) -> bool:
                if event.type() == QEvent.Type.Paint:
                    QTimer.singleShot(0, self, run)
                return False

        viewport = self.transcript.viewport()
        watch = _Watch(self)
        viewport.installEventFilter(watch)
        # An empty new session changes nothing in the viewport, which then never painted: the
        # callback (a full collection) ran half a second later, in the middle of whatever the
        # user had started meanwhile. Ask for the paint that shows the session.
        viewport.update()
        QTimer.singleShot(500, self, run)

    def _on_session_renamed(self, session_id: str) -> None:
        if self.session is not None and self.session.id == session_id:
            self._update_title()  # the window's title follows the new name at once

    def _update_title(self) -> None:
        title = "New conversation"
        if self.session is not None:
            info = self.sessions.info(self.session.id)
            if info is not None:
                title = info.title
        self.setWindowTitle(f"{title} — Coco")

    # ================================================================ the Model view

    @property
    def model_view(self) -> ModelViewPanel:
        """The Model view panel (built on first use)."""
        return self._model_view if self._model_view is not None else self._build_model_view()

    def _build_model_view(self) -> ModelViewPanel:
        from .model_view import ModelViewPanel

        self._model_view = ModelViewPanel(self.model_view_pane)
        self._model_view_layout.addWidget(self._model_view)
        return self._model_view

    def refresh_model_view(self) -> None:
        """Reload the Model view from the core's view of the history (only when shown)."""
        if self.session is None or not self.model_view_pane.isVisible():
            return
        usage = self.session.token_usage()
        self.model_view.set_entries(self.session.context_view(), usage.total, usage.approximate)

    def _toggle_model_view(self, on: bool) -> None:
        if on and self._model_view is None:
            self._build_model_view()
        self.model_view_pane.setVisible(on)
        self.refresh_model_view()

    # ================================================================ state of the controls

    def compact_block_reason(self) -> str:
        """Why Compact is refused right now ("" when it is allowed)."""
        return self.controller.compact_block_reason()

    def _update_controls(self) -> None:
        controls = self.controller.controls()
        tip = controls.compact_reason or COMPACT_TIP
        self.compact_action.setEnabled(controls.compact_enabled)
        self.compact_action.setToolTip(tip)
        if self.compact_button is not None:
            self.compact_button.setToolTip(tip)
        self.stop_action.setEnabled(controls.busy)
        self.undo_action.setEnabled(controls.undo_enabled)
        self.composer.set_busy(controls.busy, controls.compact_reason, controls.send_queued)

    # ================================================================ notifications

    @property
    def notifications(self) -> Notifications:
        """Tells the desktop when a long turn finished unseen. Built when first wanted (the
        first session opens after the window's first paint), as its module is not needed
        before."""
        if self._notifications is None:
            from .notifications import Notifications

            self._notifications = Notifications(
                self, enabled=lambda: bool(self.context.settings.notifications)
            )
            self._notifications.activated.connect(self._bring_to_front)
        return self._notifications

    @notifications.setter
    def notifications(self, notifications: Notifications) -> None:
        self._notifications = notifications

    def _bring_to_front(self) -> None:
        bring_to_front(self)  # un-minimise only: a maximised window stays maximised
