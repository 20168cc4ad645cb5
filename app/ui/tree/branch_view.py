"""The window's part in the conversation as a tree: the ops a row asks for (edit, regenerate,
``‹ n/m ›``, fork) submitted, the active branch drawn again after ``branch_switched`` (from the
core's replay, as when a session is opened) and the view kept where the user was, ↑ in an
empty composer editing the last message, a fork opened when written, a find match on another
branch shown there, and the conversation tree panel (View → Conversation tree).

``MainWindow`` builds one and routes the core's events to :meth:`handle_event`; everything it
shows comes from events and the public ``Session`` (``replay_events``, ``tree``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QKeySequence

if TYPE_CHECKING:
    from PySide6.QtWidgets import QDockWidget

    from app.core import protocol as p

    from ..controller.branch_redraw import BranchDrawing
    from ..transcript.message_rows import MessageRow
    from .tree_panel import ConversationTreePanel

TREE_TIP = "Show the conversation as a tree of turns: its branches, click one to switch (Ctrl+T)"
_TREE_EVENTS = frozenset(
    ("turn_started", "turn_complete", "branch_switched", "session_forked", "context_compacted",
     "compaction_undone")
)


class BranchView(QObject):
    """Edit, regenerate, switch and fork in ``window`` (a ``MainWindow``)."""

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.window = window
        self.controller = window.controller
        self.transcript = window.transcript
        # The turn to show once the branch now being drawn is shown (a switch in place).
        self._show_turn: str | None = None
        self._pending_match: p.ConversationMatch | None = None
        self._pending_query = ""  # the words it was found by, highlighted when it is shown
        self.transcript.op_requested.connect(self.submit_row_op)
        self.transcript.branch_summary_of = lambda: window.context.settings.branch_summary
        self.transcript.focus_elsewhere = window.composer.focus
        self.controller.branch_redrawn.connect(self._redraw)
        window.composer.edit_last_requested.connect(self.edit_last)
        self.tree_action = QAction("Conversation tree", window)
        self.tree_action.setObjectName("conversation_tree")
        self.tree_action.setToolTip(TREE_TIP)
        self.tree_action.setStatusTip(TREE_TIP)
        self.tree_action.setCheckable(True)
        self.tree_action.setProperty("shortcut", QKeySequence("Ctrl+T"))
        self.tree_action.toggled.connect(self._toggle_tree)
        window.addAction(self.tree_action)
        self._dock: QDockWidget | None = None
        self._panel: ConversationTreePanel | None = None

    # ================================================================ ops from the rows

    def submit_row_op(self, op: p.Op) -> None:
        """An op a row asked for: the tree's through the controller's branch actions (they
        wait for a running reply), pins and summary edits as they are."""
        if op.op in ("edit_turn", "regenerate_turn", "switch_branch", "fork_session"):
            if self.controller.branches.submit(op) and op.op == "switch_branch":
                self._show_turn = op.turn_id
        else:
            self.controller.submit(op)

    def switch_to(self, turn_id: str) -> None:
        """Make the branch holding ``turn_id`` active and show that turn once drawn."""
        from app.core import ops

        self.submit_row_op(ops.SwitchBranch(turn_id=turn_id))

    def edit_last(self) -> bool:
        """↑ in an empty composer: the last message of the active branch becomes an editor."""
        rows = [row for row in self.transcript.message_rows("user") if row.editable]
        if not rows:
            return False
        if self.controller.busy:
            from ..controller.branch_actions import BRANCH_BUSY_HINT

            self.controller.hint.emit(BRANCH_BUSY_HINT)
            return False
        row = rows[-1]
        self.transcript.scroll_to_row(row)
        row.start_edit()
        return True

    # ================================================================ events

    def _redraw(self, drawing: BranchDrawing) -> None:
        """Another branch is active: draw it from the core's replay, a slice at a time (the
        window paints and takes input meanwhile), the old branch on screen until it is in."""
        self.transcript.replay_in_slices(drawing.take(), drawing.done)

    def handle_event(self, event: p.Event) -> None:
        if event.type == "branch_switched":
            self._branch_shown()
        elif event.type == "session_forked":
            self._forked(event)
        if event.type in _TREE_EVENTS:
            self.refresh_tree()

    def _branch_shown(self) -> None:
        """The branch now active is drawn: show the turn the user switched to, or the match
        they chose (an edit or a regeneration follows its new answer at the end)."""
        match, self._pending_match = self._pending_match, None
        turn, self._show_turn = self._show_turn, None
        if match is not None:
            self.transcript.show_match(match, self._pending_query)
        elif turn and (row := self.row_of(turn)) is not None:
            self.transcript.scroll_to_row(row)

    def _forked(self, event: p.SessionForked) -> None:
        """A fork was written: it opens at once (listed under the conversation it came from,
        which stays as it was)."""
        self.window.statusBar().showMessage(
            f"Forked into “{event.title}”: the original conversation is unchanged", 8000
        )
        self.window.sessions.refresh()  # the fork is listed (under its source)
        self.controller.schedule_open(event.session_id)

    def row_of(self, turn_id: str) -> MessageRow | None:
        """The first message row of turn ``turn_id`` on the active branch."""
        return next((r for r in self.transcript.message_rows() if r.turn_id == turn_id), None)

    # ================================================================ find

    def show_match(self, match: p.ConversationMatch, query: str = "") -> None:
        """Show a find match (``query``'s words highlighted); one on another branch switches
        there first."""
        session = self.controller.session
        if match.turn_id and session is not None and self.row_of(match.turn_id) is None:
            on_path = {node.turn_id for node in session.tree().nodes if node.active}
            if match.turn_id not in on_path:
                self._pending_match = match
                self._pending_query = query
                self.switch_to(match.turn_id)
                return
        self.transcript.show_match(match, query)

    # ================================================================ the tree panel

    @property
    def panel(self) -> ConversationTreePanel:
        """The conversation tree panel (built on first use, docked on the right)."""
        if self._panel is None:  # its modules load when first wanted, after the first paint
            from PySide6.QtCore import Qt
            from PySide6.QtWidgets import QDockWidget

            from .tree_panel import ConversationTreePanel

            dock = QDockWidget("Conversation tree", self.window)
            dock.setObjectName("conversationTreeDock")
            panel = ConversationTreePanel(dock)
            panel.switch_requested.connect(self.switch_to)
            panel.show_requested.connect(self._show_turn_row)
            dock.setWidget(panel)
            dock.visibilityChanged.connect(self._dock_visibility)
            self.window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
            dock.hide()
            self._dock, self._panel = dock, panel
        return self._panel

    def _toggle_tree(self, on: bool) -> None:
        panel = self.panel
        assert self._dock is not None
        self._dock.setVisible(on)
        if on:
            self.refresh_tree()
            panel.tree.setFocus()

    def _dock_visibility(self, visible: bool) -> None:
        if self._dock is not None and not self._dock.isVisible() and not visible:
            self.tree_action.setChecked(False)  # closed with its own button

    def refresh_tree(self) -> None:
        """Draw the tree again from the core (only while the panel is shown)."""
        session = self.controller.session
        if self._dock is None or not self._dock.isVisible() or session is None:
            return
        self.panel.set_tree(session.tree())

    def _show_turn_row(self, turn_id: str) -> None:
        row = self.row_of(turn_id)
        if row is not None:
            self.transcript.scroll_to_row(row)
