"""The Model view panel: exactly what the model will see next (``session.context_view()``).

One line per history item with its role, kind and tokens as the core counts them (the same
counter as the context gauge); the summary message is
highlighted; totals at the bottom. Side by side with the transcript it shows what a compaction
rewrote.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core import protocol as p

from .format import format_tokens
from .theme import colors


def describe_entry(entry: p.ContextEntry) -> dict[str, Any]:
    """One row of the panel from the core's view of an item: role, kind label, exact tokens
    (the gauge's own counter), a one-line preview and whether it is the summary."""
    label = entry.kind
    if entry.is_summary:
        label = "summary"
    elif entry.injected:
        label = "context"
    elif entry.kind in ("compaction", "compaction_summary"):
        label = "compaction (encrypted)"
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
        layout.addWidget(title)
        self.tree = QTreeWidget(self)
        self.tree.setAccessibleName("History items")
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setHeaderLabels(["#", "Role", "Kind", "Tokens", "Content"])
        header = self.tree.header()
        header.setStretchLastSection(True)
        for column in range(4):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        layout.addWidget(self.tree, 1)
        self.totals = QLabel(self)
        self.totals.setAccessibleName("Model view totals")
        self.totals.setWordWrap(True)
        layout.addWidget(self.totals)
        self.rows: list[dict[str, Any]] = []

    def set_entries(
        self,
        entries: Sequence[p.ContextEntry],
        token_total: int | None = None,
        approximate: bool = True,
    ) -> None:
        """Show what the next request carries, as the core counts it (``session.context_view``)."""
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
            if row["summary"]:
                for column in range(5):
                    entry.setBackground(column, highlight)
                    entry.setFont(column, bold)
                entry.setToolTip(2, "The compaction summary: it stands in for the earlier turns")
            self.tree.addTopLevelItem(entry)
        estimate = sum(r["tokens"] for r in self.rows)
        summaries_in = sum(1 for r in self.rows if r["summary"])
        text = f"{len(self.rows)} items · {format_tokens(estimate)} tokens of history"
        if token_total is not None:
            text += f" · next request {'≈' if approximate else ''}{format_tokens(token_total)}"
        if summaries_in:
            text += " · 1 summary message" if summaries_in == 1 else f" · {summaries_in} summaries"
        self.totals.setText(text)
