"""The main window: sessions on the left, the transcript and composer in the middle, the Model
view on the right, compaction controls in the toolbar and the context gauge in the status bar.

The window lays out the widgets and wires them to its ``SessionController`` (the open session,
what the controls allow, user actions turned into ops, settings applied). Every core event the
controller passes on goes through ``_render`` to the widgets that show it. It never edits the
history.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject, QSize, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence, QShowEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMenu,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QToolBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..composer.widget import Composer
from ..controller.format import model_text
from ..controller.session_controller import SessionController
from ..controller.state import ActivityState
from ..runtime import memory, preload
from ..runtime.qt_namespace import Qt, set_enum_property
from ..runtime.single_instance import bring_to_front
from ..sessions.session_list import SessionListPanel
from ..style.icons import app_icon, icon
from ..style.theme import apply_theme, colors, pygments_style_name
from ..style.widgets import ElidedLabel, RichTextView
from ..transcript.view import TranscriptView
from .app_context import AppContext
from .pane_layout import MIN_WINDOW_SIZE, MODEL_VIEW_MIN_WIDTH, PaneRoom, SidePane
from .status import ElidingStatusBar, StatusIndicator
from .window_state import WindowState

if TYPE_CHECKING:
    import asyncio

    from PySide6.QtWidgets import QDialog

    from app.core import CoreConfig, Session
    from app.core import protocol as p
    from app.core.settings import AppSettings

    from ..controller.bridge import SessionBridge
    from ..controller.commands import Command
    from ..settings.dialog import SettingsDialog
    from .find_bar import FindBar
    from .model_view import ModelViewPanel
    from .notifications import Notifications

DEMO_BANNER = "You are chatting with Coco's offline demo model — no key or network needed."
COMPACT_TIP = "Summarise the conversation now to free context (Ctrl+K)"


class DemoBanner(QFrame):
    """The first-run banner: says the demo model is in use, offers the settings."""

    open_settings = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("demoBanner")
        self.setAccessibleName("Offline demo notice")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 6, 8, 6)
        self.icon_label = QLabel()
        layout.addWidget(self.icon_label)
        self.label = QLabel(DEMO_BANNER)
        self.label.setWordWrap(True)
        layout.addWidget(self.label, 1)
        self.button = QPushButton("Open settings")
        self.button.setAccessibleName("Open settings")
        self.button.setToolTip("Choose a model provider and enter an API key")
        self.button.clicked.connect(self.open_settings)
        layout.addWidget(self.button)
        self._styled = False  # styled when shown: most windows never show it

    def restyle(self) -> None:
        """Take the theme's colours (at once when shown, else when next shown)."""
        self._styled = False
        if not self.isVisible():
            return
        c = colors()
        self.setStyleSheet(
            f"QFrame#demoBanner {{ background: {c.banner_bg}; border-bottom: 1px solid {c.border}; }}"
        )
        self.icon_label.setPixmap(icon("info", c.accent).pixmap(16, 16))
        self._styled = True

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._styled:
            self.restyle()


class MainWindow(QMainWindow):
    """Coco's window. Open a session with ``await window.open_session(id_or_None)``."""

    closed = Signal()
    session_opened = Signal(str)
    # How long after a session is shown the first message's needs are prepared (once).
    PREPARE_AFTER_MS = 1000

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
        self._settings_dialog: SettingsDialog | None = None
        self.setWindowTitle("Coco")
        self.setWindowIcon(app_icon())
        self.setAccessibleName("Coco")
        self.resize(1200, 780)

        self._build_actions()
        self._build_toolbar()
        self._build_menus()
        self._build_body()
        self._build_status()
        self._notifications: Notifications | None = None  # built with the first session
        self._wire_controller()
        self._update_controls()
        self._restore_geometry()

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

    def _wire_controller(self) -> None:
        controller = self.controller
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

    # ================================================================ construction

    def _action(
        self, name: str, text: str, tip: str, icon_name: str | None = None,
        shortcut: str | QKeySequence | QKeySequence.StandardKey | None = None,
    ) -> QAction:
        action = QAction(text, self)
        action.setObjectName(name)
        action.setToolTip(tip)
        action.setStatusTip(tip)
        if icon_name:
            action.setIcon(icon(icon_name))
        if shortcut is not None:
            # Through the property (as setShortcut, in this window: Qt's default context):
            # choosing among setShortcut's overloads builds Qt's namespace enums, 14 ms before
            # the first paint (see qt_namespace).
            action.setProperty("shortcut", QKeySequence(shortcut))
        self.addAction(action)
        return action

    def _build_actions(self) -> None:
        self.new_action = self._action("new", "New session", "Start a new session (Ctrl+N)",
                                       "new", QKeySequence.StandardKey.New)
        self.new_action.triggered.connect(lambda: self.start_new_session())
        self.compact_action = self._action("compact", "Compact", COMPACT_TIP, "compact", "Ctrl+K")
        self.compact_action.triggered.connect(lambda: self.compact())
        self.undo_action = self._action(
            "undo_compact", "Undo compaction",
            "Put the history back as it was before the last compaction", "undo",
        )
        self.undo_action.triggered.connect(self.undo_compaction)
        self.stop_action = self._action("stop", "Stop", "Stop the reply or the compaction (Esc)",
                                        "stop", "Esc")
        self.stop_action.triggered.connect(self.stop)
        self.model_view_action = self._action(
            "model_view", "Model view", "Show exactly what the model sees next", "model-view",
            "Ctrl+M",
        )
        self.model_view_action.setCheckable(True)
        self.model_view_action.toggled.connect(self._toggle_model_view)
        self.sidebar_action = self._action("sidebar", "Sessions", "Show or hide the session list",
                                           "sidebar", "Ctrl+B")
        self.sidebar_action.setCheckable(True)
        self.sidebar_action.setChecked(True)
        self.sidebar_action.toggled.connect(lambda on: self.sessions.setVisible(on))
        self.settings_action = self._action("settings", "Settings…",
                                            "Provider, model and compaction settings (Ctrl+,)",
                                            "settings", "Ctrl+,")
        self.settings_action.triggered.connect(self.open_settings)
        self.export_md_action = self._action("export_md", "Export as Markdown…",
                                             "Save this session as a Markdown file", "export")
        self.export_md_action.triggered.connect(lambda: self.export("markdown"))
        self.export_json_action = self._action("export_json", "Export as JSON…",
                                               "Save this session as a JSON file", "export")
        self.export_json_action.triggered.connect(lambda: self.export("json"))
        self.focus_action = self._action("focus_composer", "Focus composer",
                                         "Put the cursor in the message box (Ctrl+L)", None,
                                         "Ctrl+L")
        self.focus_action.triggered.connect(lambda: self.composer.focus())
        self.find_action = self._action("find", "Find in conversation…",
                                        "Search the whole conversation, also what was compacted "
                                        "(Ctrl+F)", None, QKeySequence.StandardKey.Find)
        self.find_action.triggered.connect(lambda: self.find_bar.open_bar())
        self.quit_action = self._action("quit", "Quit", "Close Coco", None,
                                        QKeySequence.StandardKey.Quit)
        self.quit_action.triggered.connect(self.close)
        self.shortcuts_action = self._action("shortcuts", "Keyboard shortcuts",
                                             "List every keyboard shortcut", None, "F1")
        self.shortcuts_action.triggered.connect(self.show_shortcuts)
        self.about_action = self._action("about", "About Coco",
                                         "Version and the folders this profile uses", None)
        self.about_action.triggered.connect(self.show_about)

    def _build_toolbar(self) -> None:
        bar = QToolBar("Main", self)
        bar.setObjectName("mainToolbar")
        bar.setAccessibleName("Main toolbar")
        bar.setMovable(False)
        bar.setIconSize(QSize(18, 18))
        # Built before the first paint: no Qt.* member here (see qt_namespace).
        set_enum_property(bar, "toolButtonStyle", "ToolButtonTextBesideIcon")
        bar.addAction(self.sidebar_action)
        bar.addAction(self.new_action)
        bar.addSeparator()
        bar.addAction(self.compact_action)
        bar.addAction(self.model_view_action)
        spacer = QWidget()
        spacer.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        bar.addWidget(spacer)
        export_button = QToolButton(bar)
        export_button.setText("Export")
        export_button.setIcon(icon("export"))
        export_button.setToolTip("Export this session to Markdown or JSON")
        export_button.setAccessibleName("Export")
        set_enum_property(export_button, "toolButtonStyle", "ToolButtonTextBesideIcon")
        export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(export_button)
        menu.addAction(self.export_md_action)
        menu.addAction(self.export_json_action)
        export_button.setMenu(menu)
        self.export_button = export_button
        bar.addWidget(export_button)
        bar.addAction(self.settings_action)
        self.addToolBar(bar)
        self.toolbar = bar
        for action in bar.actions():
            # Only actions with a text: a separator's widget is of a class private to Qt, and
            # PySide6 finds its Python type by creating every widget type it knows (16 ms).
            if action.text() and (widget := bar.widgetForAction(action)) is not None:
                widget.setAccessibleName(action.text().rstrip("…"))
        self.compact_button = bar.widgetForAction(self.compact_action)

    def _build_menus(self) -> None:
        menu_bar = self.menuBar()
        file_menu = menu_bar.addMenu("&File")
        file_menu.addAction(self.new_action)
        file_menu.addSeparator()
        file_menu.addAction(self.export_md_action)
        file_menu.addAction(self.export_json_action)
        file_menu.addSeparator()
        file_menu.addAction(self.settings_action)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        session_menu = menu_bar.addMenu("&Session")
        session_menu.addAction(self.compact_action)
        session_menu.addAction(self.undo_action)
        session_menu.addAction(self.stop_action)
        session_menu.addAction(self.focus_action)
        session_menu.addAction(self.find_action)
        view_menu = menu_bar.addMenu("&View")
        view_menu.addAction(self.sidebar_action)
        view_menu.addAction(self.model_view_action)
        help_menu = menu_bar.addMenu("&Help")
        help_menu.addAction(self.shortcuts_action)
        help_menu.addAction(self.about_action)

    def _build_body(self) -> None:
        # Horizontal, Qt's default. The parent by name: QSplitter(self) would be checked
        # against QSplitter(Qt.Orientation), which builds Qt's namespace enums (qt_namespace).
        self.splitter = QSplitter(parent=self)
        self.splitter.setChildrenCollapsible(False)
        self.sessions = SessionListPanel(self.context.sessions_dir, self.splitter)
        self.sessions.session_activated.connect(lambda sid: self.controller.schedule_open(sid))
        self.sessions.new_session_requested.connect(lambda: self.start_new_session())
        self.sessions.session_deleted.connect(lambda sid: self.controller.session_deleted(sid))
        self.sessions.deleter = self.controller.delete_session  # closes the open one first
        self.sessions.session_renamed.connect(self._on_session_renamed)
        self.sessions.problem.connect(self.show_problem)

        centre = QWidget(self.splitter)
        column = QVBoxLayout(centre)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        self.banner = DemoBanner(centre)
        self.banner.open_settings.connect(self.open_settings)
        self.banner.hide()
        column.addWidget(self.banner)
        # The find bar goes here, under the banner, when it is first opened (Ctrl+F).
        self._find_bar: FindBar | None = None
        self._column = column
        self.transcript = TranscriptView(centre)
        self.transcript.undo_requested.connect(lambda _item_id: self.undo_compaction())
        self.transcript.op_requested.connect(self.controller.submit)
        self.transcript.retry_requested.connect(self.controller.retry_turn)
        self.transcript.compact_requested.connect(self.compact)
        column.addWidget(self.transcript, 1)
        self.composer = Composer(centre)
        self.composer.message_submitted.connect(self.send_message)
        self.composer.command_submitted.connect(self.run_command)
        self.composer.stop_requested.connect(self.stop)
        column.addWidget(self.composer)

        # The Model view starts hidden: its pane is in the splitter from the start (the saved
        # pane sizes cover it), the panel itself is built the first time it is wanted.
        self.model_view_pane = QWidget(self.splitter)
        self._model_view_layout = QVBoxLayout(self.model_view_pane)
        self._model_view_layout.setContentsMargins(0, 0, 0, 0)
        self.model_view_pane.hide()
        self._model_view: ModelViewPanel | None = None
        self.splitter.addWidget(self.sessions)
        self.splitter.addWidget(centre)
        self.splitter.addWidget(self.model_view_pane)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setStretchFactor(2, 0)
        self.splitter.setSizes([240, 700, 360])
        self.setCentralWidget(self.splitter)
        self._build_pane_room(centre)

    @property
    def find_bar(self) -> FindBar:
        """The find bar above the transcript (built when first wanted)."""
        return self._find_bar if self._find_bar is not None else self._build_find_bar()

    def _build_find_bar(self) -> FindBar:
        from .find_bar import FindBar

        bar = FindBar(self.transcript.parentWidget())
        bar.search_requested.connect(self.find_in_conversation)
        bar.match_chosen.connect(self.transcript_show_match)
        bar.hide()
        self._column.insertWidget(self._column.indexOf(self.transcript), bar)
        # Tab reaches its controls where it sits: after the banner's, before the transcript.
        order = [self.banner.button, bar.query, bar.previous_button, bar.next_button,
                 bar.close_button]
        for first, second in pairwise(order):
            QWidget.setTabOrder(first, second)
        self._find_bar = bar
        return bar

    def _build_pane_room(self, centre: QWidget) -> None:
        """The chat column keeps a usable width down to the window's minimum size: the Model
        view gives way first (its toggle stays, and it comes back when there is room)."""
        self.setMinimumSize(MIN_WINDOW_SIZE)
        self.model_view_pane.setMinimumWidth(MODEL_VIEW_MIN_WIDTH)
        self.pane_room = PaneRoom(
            self.splitter,
            centre,
            [
                SidePane(self.model_view_pane, self.model_view_action, "Model view",
                         self.model_view_action.toolTip(), width=360),
                SidePane(self.sessions, self.sidebar_action, "session list",
                         self.sidebar_action.toolTip(), width=240),
            ],
            say=lambda text: self.statusBar().showMessage(text, 6000),
        )

    def _build_status(self) -> None:
        status = ElidingStatusBar(self)
        self.setStatusBar(status)
        self.model_label = ElidedLabel("")  # a long model name or address ends in "…"
        self.model_label.setAccessibleName("Model")
        self.model_label.setToolTip("The model this session talks to")
        status.addWidget(self.model_label)
        self.indicator = StatusIndicator(status)
        self.indicator.stop_requested.connect(self.stop)
        status.addPermanentWidget(self.indicator)

    def _restore_geometry(self) -> None:
        self.geometry_restored = self.window_state.restore(self, self.splitter)
        draft = self.window_state.draft()
        if draft:
            self.composer.set_text(draft)  # typed but not sent when the window last closed

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
        preload.start(pygments_style_name())
        RichTextView.warm_up(self.transcript.viewport())

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

    # ================================================================ events

    def _render(self, event: p.Event) -> None:
        """Show one core event (the controller's state has already taken it in)."""
        state = self.controller.state
        changes = state.changes
        self.transcript.handle_event(event)
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
        if event.type in ("turn_complete", "context_compacted", "compaction_undone",
                          "session_configured", "item_pinned", "summary_edited") or (
            # The message just sent is in the history while the reply streams.
            event.type == "item_completed"
            and event.item.kind in ("user_message", "function_call_output")
        ):
            self.refresh_model_view()
        if event.type == "turn_complete":
            self.sessions.set_current(self.session.id if self.session else "", reload=True)
            self._update_title()
        if event.type == "message_not_sent":
            self._give_back(event.text)
        if event.type == "conversation_matches":
            self.find_bar.show_matches(event)

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
        self.composer.set_busy(controls.busy, controls.compact_reason)

    # ================================================================ user actions

    def send_message(self, text: str) -> None:
        """Send a user message (the composer already refused it while busy)."""
        self.controller.send_message(text)

    def compact(self, focus: str | None = None) -> bool:
        """Submit a compaction unless a turn runs (then say why next to the composer)."""
        return self.controller.compact(focus)

    def undo_compaction(self) -> None:
        self.controller.undo_compaction()

    def find_in_conversation(self, query: str) -> None:
        """Ask the core to search the whole conversation (the answer comes as an event)."""
        from app.core import ops

        self.controller.submit(ops.FindInConversation(query=query))

    def transcript_show_match(self, match: p.ConversationMatch) -> None:
        self.transcript.show_match(match)

    def stop(self) -> None:
        """Interrupt the streaming reply or the running compaction (Esc, Stop)."""
        self.controller.stop()

    def run_command(self, command: Command) -> None:
        """Run a slash command from the composer."""
        if command.name == "export":
            self.export(None)
        else:
            self.controller.run_command(command)

    # ================================================================ settings

    def open_settings(self) -> SettingsDialog:
        """Show the settings panel (non-blocking); Save applies to the open session."""
        from ..settings.dialog import SettingsDialog

        if self._settings_dialog is not None and self._settings_dialog.isVisible():
            self._settings_dialog.raise_()
            return self._settings_dialog
        dialog = SettingsDialog(
            self.context.settings,
            key_lookup=self.context.lookup_key,
            key_backend=getattr(self.context.secrets, "backend_name", "secret store"),
            config_builder=self.context.test_config,
            parent=self,
        )
        dialog.saved.connect(self.apply_settings)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.finished.connect(lambda _r: setattr(self, "_settings_dialog", None))
        self._settings_dialog = dialog
        dialog.open()
        return dialog

    def apply_settings(self, settings: AppSettings, api_key: str | None) -> bool:
        """Persist ``settings`` (and the key), then apply them to the open session; the theme
        changes at once."""
        applied = self.controller.apply_settings(settings, api_key)
        if applied:
            self._use_theme(settings.theme)
        return applied

    # ================================================================ export

    def choose_export_path(self, kind: str | None) -> tuple[Path, str] | None:
        """Ask where to save; (path, "markdown" | "json"), or None when cancelled."""
        filters = "Markdown (*.md);;JSON (*.json)"
        initial = "Markdown (*.md)" if kind != "json" else "JSON (*.json)"
        from ..sessions.export import export_file_name

        title = self.windowTitle().split(" — ")[0]
        fmt_name = "json" if kind == "json" else "markdown"
        suggested = str(Path.home() / export_file_name(title, fmt_name))
        from PySide6.QtWidgets import QFileDialog  # dialogs load when first wanted

        path, chosen = QFileDialog.getSaveFileName(self, "Export session", suggested, filters,
                                                   initial)
        if not path:
            return None
        fmt = "json" if chosen.startswith("JSON") or path.lower().endswith(".json") else "markdown"
        return Path(path), fmt

    def export(self, kind: str | None) -> Path | None:
        """Write the transcript to a file the user picks (Markdown or JSON)."""
        if self.session is None:
            return None
        choice = self.choose_export_path(kind)
        if choice is None:
            return None
        path, fmt = choice
        from ..sessions.export import transcript_to_json, transcript_to_markdown

        title = self.windowTitle().split(" — ")[0]
        session_id, model = self.session.id, self.session.config.model
        if fmt == "json":  # the record as the core keeps it
            text = transcript_to_json(
                self.session.transcript(), title=title, session_id=session_id, model=model
            )
        else:  # what the window shows, from the events that draw it
            text = transcript_to_markdown(
                self.session.replay_events(), title=title, session_id=session_id, model=model
            )
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            self.show_problem(f"Could not export to {path}: {exc.strerror or exc}")
            return None
        self.statusBar().showMessage(f"Exported to {path}", 6000)
        return path

    # ================================================================ help

    def show_shortcuts(self) -> QDialog:
        """Help → Keyboard shortcuts (read from this window's actions)."""
        from .help_dialogs import ShortcutsDialog

        dialog = ShortcutsDialog(self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def show_about(self) -> QDialog:
        """Help → About: version and this profile's folders."""
        from .help_dialogs import AboutDialog

        dialog = AboutDialog(self.context.paths, self.context.log_file, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def _bring_to_front(self) -> None:
        bring_to_front(self)  # un-minimise only: a maximised window stays maximised

    # ================================================================ problems

    def show_problem(self, message: str) -> None:
        """A problem the user should see, inline in the transcript (never a traceback)."""
        self.transcript.add_notice("error", message)

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
        finally:
            self._close_done = True
            self.close()
            self.closed.emit()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self.banner.restyle()
            QTimer.singleShot(0, self._update_controls)
