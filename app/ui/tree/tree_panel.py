"""The conversation tree panel: every turn of the conversation as a tree (``Session.tree()``),
the branch points and how many compactions ran in each turn, the active path in bold; a click
on a turn of another branch switches to it (``SwitchBranch``), on a turn of the active branch
shows it in the transcript.

A chain of turns is drawn as a list, not nested: a turn with one follower is followed by it at
the same level, and only a branch point nests its branches, each under its first turn. A long
conversation without branches is one flat list.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QLabel, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

if TYPE_CHECKING:
    from app.core import protocol as p

TURN_ROLE = Qt.ItemDataRole.UserRole
EMPTY_TEXT = "No turns yet: the conversation's tree grows as you send messages."


def turn_text(node: p.TreeNode, number: int, branches: int) -> str:
    """A turn's line: its number and message, how many branches leave it, its compactions."""
    label = " ".join(node.label.split()) or "(no message)"
    parts = [f"{number}. {label}"]
    if branches > 1:
        parts.append(f"⑂ {branches} branches")
    if node.compactions:
        parts.append(f"{node.compactions} compaction{'s' if node.compactions != 1 else ''}")
    return " · ".join(parts)


class ConversationTreePanel(QWidget):
    """The tree of turns; ``switch_requested(turn_id)`` for a turn of another branch,
    ``show_requested(turn_id)`` for one of the active branch."""

    switch_requested = Signal(str)
    show_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Conversation tree")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        self.caption = QLabel(EMPTY_TEXT, self)
        self.caption.setWordWrap(True)
        layout.addWidget(self.caption)
        self.tree = QTreeWidget(self)
        self.tree.setHeaderHidden(True)
        self.tree.setAccessibleName("Turns of the conversation")
        self.tree.setUniformRowHeights(True)
        self.tree.itemActivated.connect(self._chosen)
        self.tree.itemClicked.connect(self._chosen)
        layout.addWidget(self.tree, 1)
        self.items: dict[str, QTreeWidgetItem] = {}
        self._active: set[str] = set()

    def set_tree(self, tree: p.ConversationTree) -> None:
        """Draw ``tree`` (the whole conversation), the active path in bold, its newest turn
        current."""
        self.tree.clear()
        self.items = {}
        nodes = tree.nodes
        children: dict[str | None, list[p.TreeNode]] = {}
        for node in nodes:
            children.setdefault(node.parent, []).append(node)
        self._active = {node.turn_id for node in nodes if node.active}
        bold = QFont(self.tree.font())
        bold.setBold(True)
        branch_points = sum(1 for kids in children.values() if len(kids) > 1)
        # A chain to draw: the item it goes under (None: the top level), its first turn, that
        # turn's number, and whether it is a branch (then it goes on under its first turn).
        roots = children.get(None, [])
        stack: list[tuple[QTreeWidgetItem | None, p.TreeNode, int, bool]] = [
            (None, node, 1, len(roots) > 1) for node in reversed(roots)
        ]
        while stack:
            container, node, number, branch = stack.pop()
            current: p.TreeNode | None = node
            while current is not None:
                item = self._item(container, current, number, children, bold)
                if branch and current is node:
                    container = item  # a branch goes on under its first turn
                kids = children.get(current.turn_id, [])
                if len(kids) > 1:  # a branch point: each branch nested under its first turn
                    stack.extend((item, kid, number + 1, True) for kid in reversed(kids))
                    break
                current = kids[0] if kids else None
                number += 1
        self.tree.expandAll()
        self.caption.setText(
            EMPTY_TEXT if not nodes else
            f"{len(nodes)} turn{'s' if len(nodes) != 1 else ''} · {branch_points} branch "
            f"point{'s' if branch_points != 1 else ''} · the active branch in bold"
        )
        if tree.active in self.items:
            self.tree.setCurrentItem(self.items[tree.active])
            self.tree.scrollToItem(self.items[tree.active])

    def _item(
        self,
        container: QTreeWidgetItem | None,
        node: p.TreeNode,
        number: int,
        children: dict[str | None, list[p.TreeNode]],
        bold: QFont,
    ) -> QTreeWidgetItem:
        text = turn_text(node, number, len(children.get(node.turn_id, [])))
        item = QTreeWidgetItem([text])
        item.setData(0, TURN_ROLE, node.turn_id)
        item.setToolTip(0, node.label)
        if node.active:
            item.setFont(0, bold)
        if container is None:
            self.tree.addTopLevelItem(item)
        else:
            container.addChild(item)
        self.items[node.turn_id] = item
        return item

    def is_active(self, turn_id: str) -> bool:
        return turn_id in self._active

    def _chosen(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        turn_id = str(item.data(0, TURN_ROLE) or "")
        if not turn_id:
            return
        if turn_id in self._active:
            self.show_requested.emit(turn_id)
        else:
            self.switch_requested.emit(turn_id)
