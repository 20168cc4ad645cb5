"""How the main window is built: its actions (with their shortcuts), the toolbar, the menus,
the body (session list, chat column with banner, transcript and composer, the Model view
pane), the find bar when first wanted, the status bar, and the geometry restored.

A layer of ``MainWindow`` (``main_window``), over ``WindowCommands``: every action and panel
is wired here to the command it runs.
"""

from __future__ import annotations

from itertools import pairwise
from typing import TYPE_CHECKING

from PySide6.QtCore import QSize
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QMenu,
    QSizePolicy,
    QSplitter,
    QToolBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..composer.attachment_drop import AttachmentDrop
from ..composer.widget import Composer
from ..runtime.qt_namespace import set_enum_property
from ..sessions.session_list import SessionListPanel
from ..style.icons import icon
from ..style.widgets import ElidedLabel
from ..transcript.view import TranscriptView
from ..tree.branch_view import BranchView
from .approval_card import ApprovalCard
from .demo_banner import DemoBanner
from .pane_layout import MIN_WINDOW_SIZE, MODEL_VIEW_MIN_WIDTH, PaneRoom, SidePane
from .session_view import COMPACT_TIP
from .status import ElidingStatusBar, StatusIndicator
from .window_commands import WindowCommands

if TYPE_CHECKING:
    from .find_bar import FindBar
    from .model_view import ModelViewPanel


class WindowLayout(WindowCommands):
    """The window's construction (see the module docstring)."""

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
        view_menu.addAction(self.branch_view.tree_action)
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
        self.transcript.retry_requested.connect(self.controller.retry_turn)
        self.transcript.compact_requested.connect(self.compact)
        column.addWidget(self.transcript, 1)
        self.approval_card = ApprovalCard(self.controller.answer_tool_call, centre)
        column.addWidget(self.approval_card)  # an MCP tool call waiting for the user
        self.composer = Composer(centre)
        self.composer.message_submitted.connect(self.send_message)
        self.composer.command_submitted.connect(self.run_command)
        self.composer.stop_requested.connect(self.stop)
        self.composer.attachments.inspect_requested.connect(self.inspect_attachments)
        self.composer.attachments.changed.connect(self._attachments_changed)
        self._attachment_drop = AttachmentDrop(self, self.composer)  # drops attach files
        column.addWidget(self.composer)
        # Edit, regenerate, ‹ n/m ›, fork, the conversation tree (the rows' ops go through it).
        self.branch_view = BranchView(self)

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
        bar.match_chosen.connect(lambda match: self.transcript_show_match(match, bar.searched))
        bar.closed.connect(self.transcript.clear_match)
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
