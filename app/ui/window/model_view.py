"""The Model view panel: exactly what the model will see next (``session.context_view()``).

One line per history item with its role, kind and tokens as the core counts them (the same
counter as the context gauge); the summary message is
highlighted; totals at the bottom. Side by side with the transcript it shows what a compaction
rewrote. The selected item is shown in full, wrapped, below the list; double-click or Enter
opens it in a window of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont, QGuiApplication, QResizeEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core import protocol as p

from ..controller.format import format_tokens
from ..style.theme import colors


def describe_entry(entry: p.ContextEntry) -> dict[str, Any]:
    """One row of the panel from the core's view of an item: role, kind label, exact tokens
    (the gauge's own counter), a one-line preview and whether it is the summary."""
    label = entry.kind
    if entry.is_summary:
        label = "summary"
    elif entry.carried_notes:
        label = "carried notes"
    elif entry.injected:
        label = "context"
    elif entry.kind in ("compaction", "compaction_summary"):
        label = "compaction (encrypted)"
    if entry.pinned:
        label = f"{label} · pinned"
    preview = entry.text
    if not preview and entry.kind in ("compaction", "compaction_summary", "reasoning"):
        preview = "(opaque, replayed as is)"
    return {
        "role": entry.role or "—",
        "kind": label,
        "tokens": entry.tokens,
        "preview": " ".join(preview.split())[:200],
        "text": preview,
        "summary": entry.is_summary,
    }


NARROW_WIDTH = 330  # a pane narrower than this leaves out the Role column
DETAILS_PLACEHOLDER = "Select an item to read it in full here (double-click or Enter opens it)."


def entry_heading(number: int, row: dict[str, Any]) -> str:
    """``#3 · user · summary · 199 tokens``: what a details view says above the text."""
    return f"#{number} · {row['role']} · {row['kind']} · {format_tokens(row['tokens'])} tokens"


class ItemTextDialog(QDialog):
    """One Model view item in full: read-only, wrapped, selectable, with a Copy button."""

    def __init__(self, heading: str, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Model view item {heading.split(' · ')[0]}")
        self.setAccessibleName("Model view item")
        self.resize(640, 480)
        layout = QVBoxLayout(self)
        self.heading = QLabel(heading, self)
        self.heading.setTextFormat(Qt.TextFormat.PlainText)
        self.heading.setWordWrap(True)
        layout.addWidget(self.heading)
        self.text = QPlainTextEdit(self)
        self.text.setReadOnly(True)
        self.text.setAccessibleName("Item text")
        self.text.setPlainText(text)
        layout.addWidget(self.text, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        copy = buttons.addButton("Copy", QDialogButtonBox.ButtonRole.ActionRole)
        copy.setToolTip("Copy the whole text of this item")
        copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(text))
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)


class ModelViewPanel(QWidget):
    """A table of the history items the next request will carry."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Model view")
        self.setToolTip("Exactly what the model will see on the next request")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(4)
        title = QLabel("<b>Model view</b> · what the model sees next")
        title.setWordWrap(True)  # a narrow pane wraps the title instead of cutting it
        layout.addWidget(title)
        self.tree = QTreeWidget(self)
        self.tree.setAccessibleName("History items")
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setHeaderLabels(["#", "Role", "Kind", "Tokens", "Content"])
        # The content column takes what is left and ends in "…"; the item is read in full
        # below (selected) or in a window (double-click, Enter).
        self.tree.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideRight)
        header = self.tree.header()
        header.setStretchLastSection(False)  # (a stretched section keeps 100 px at least)
        for column in range(4):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(4, QHeaderView.ResizeMode.Fixed)
        header.sectionResized.connect(self._section_resized)
        self.tree.currentItemChanged.connect(lambda _now, _before: self._show_current())
        self.tree.itemActivated.connect(lambda item, _column: self.open_item(item))
        self.details = QPlainTextEdit(self)
        self.details.setReadOnly(True)
        self.details.setAccessibleName("Selected item in full")
        self.details.setPlaceholderText(DETAILS_PLACEHOLDER)
        self.details.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        parts = QSplitter(Qt.Orientation.Vertical, self)
        parts.setChildrenCollapsible(False)
        parts.addWidget(self.tree)
        parts.addWidget(self.details)
        parts.setStretchFactor(0, 3)
        parts.setStretchFactor(1, 2)
        layout.addWidget(parts, 1)
        self.totals = QLabel(self)
        self.totals.setAccessibleName("Model view totals")
        self.totals.setWordWrap(True)
        layout.addWidget(self.totals)
        self.rows: list[dict[str, Any]] = []
        self.dialog: ItemTextDialog | None = None

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        # A narrow pane drops the Role column (each item's heading below still names it) so
        # the content column keeps some room instead of none.
        self.tree.setColumnHidden(1, self.width() < NARROW_WIDTH)
        self._fit_columns()

    def _fit_columns(self) -> None:
        """The content column takes exactly the room the others leave: its text ends in "…"
        at the pane's edge instead of running past it."""
        header = self.tree.header()
        others = sum(header.sectionSize(column) for column in range(4)
                     if not header.isSectionHidden(column))
        room = max(24, self.tree.viewport().width() - others)
        if header.sectionSize(4) != room:
            header.resizeSection(4, room)

    def _section_resized(self, column: int, _old: int, _new: int) -> None:
        if column < 4:  # the content column takes what the others leave
            self._fit_columns()

    def _current_index(self) -> int:
        current = self.tree.currentItem()
        return -1 if current is None else self.tree.indexOfTopLevelItem(current)

    def _show_current(self) -> None:
        index = self._current_index()
        if 0 <= index < len(self.rows):
            row = self.rows[index]
            self.details.setPlainText(f"{entry_heading(index + 1, row)}\n\n{row['text']}")
        else:
            self.details.clear()

    def open_item(self, item: QTreeWidgetItem | None = None) -> ItemTextDialog | None:
        """Show ``item`` (default: the selected one) in full in a window of its own."""
        item = item or self.tree.currentItem()
        index = self.tree.indexOfTopLevelItem(item) if item is not None else -1
        if not 0 <= index < len(self.rows):
            return None
        row = self.rows[index]
        if self.dialog is not None:
            self.dialog.close()
        dialog = ItemTextDialog(entry_heading(index + 1, row), row["text"], self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.finished.connect(lambda _result: self._dialog_closed(dialog))
        self.dialog = dialog
        dialog.show()
        return dialog

    def _dialog_closed(self, dialog: ItemTextDialog) -> None:
        if self.dialog is dialog:
            self.dialog = None

    def set_entries(
        self,
        entries: Sequence[p.ContextEntry],
        token_total: int | None = None,
        approximate: bool = True,
    ) -> None:
        """Show what the next request carries, as the core counts it (``session.context_view``)."""
        selected = self._current_index()
        self.tree.clear()
        self.rows = [describe_entry(entry) for entry in entries]
        c = colors()
        highlight = QBrush(QColor(c.summary_bg))
        bold = QFont(self.font())
        bold.setBold(True)
        for number, row in enumerate(self.rows, start=1):
            entry = QTreeWidgetItem(
                [str(number), row["role"], row["kind"], format_tokens(row["tokens"]), row["preview"]]
            )
            entry.setTextAlignment(3, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            entry.setToolTip(4, row["text"][:4000])
            entry.setToolTip(2, f"{row['role']} · {row['kind']}")
            if row["summary"]:
                for column in range(5):
                    entry.setBackground(column, highlight)
                    entry.setFont(column, bold)
                entry.setToolTip(2, "The compaction summary: it stands in for the earlier turns")
            self.tree.addTopLevelItem(entry)
        self._fit_columns()
        # The item read below stays selected while the list is refreshed (when it still is).
        item = self.tree.topLevelItem(selected) if 0 <= selected < len(self.rows) else None
        if item is not None:
            self.tree.setCurrentItem(item)
        else:
            self._show_current()
        estimate = sum(r["tokens"] for r in self.rows)
        summaries_in = sum(1 for r in self.rows if r["summary"])
        text = f"{len(self.rows)} items · {format_tokens(estimate)} tokens of history"
        if token_total is not None:
            text += f" · next request {'≈' if approximate else ''}{format_tokens(token_total)}"
        if summaries_in:
            text += " · 1 summary message" if summaries_in == 1 else f" · {summaries_in} summaries"
        self.totals.setText(text)
