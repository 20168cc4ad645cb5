"""The Model view panel: exactly what the model will see next (``session.history()``).

One line per history item with its role, kind and token estimate; the summary message is
highlighted; totals at the bottom. Side by side with the transcript it shows what a compaction
rewrote.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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

from app.core.items import (
    is_compaction_item,
    is_injected_context,
    item_text_for_count,
    item_type,
    message_text,
)

from .format import format_tokens
from .theme import colors


def _summary_prefix() -> str | None:
    try:
        from app.core.compaction.prompts import summary_prefix

        return summary_prefix()
    except (ImportError, OSError):
        return None


Item = dict[str, Any]


def describe_item(item: Item, summary_prefix: str | None, summaries: Sequence[str] = ()) -> dict[str, Any]:
    """Role, kind, token estimate, preview and whether ``item`` is the summary message."""
    from app.core.tokens import approx_tokens  # not needed until the panel is first shown

    kind = item_type(item)
    role = str(item.get("role", "")) if kind == "message" else ""
    text = message_text(item) if kind == "message" else ""
    is_summary = False
    if kind == "message" and role == "user":
        if summary_prefix:
            is_summary = text.startswith(summary_prefix)
        else:  # no prefix to go by: recognise the summary texts the transcript recorded
            is_summary = any(s.strip() and text.rstrip().endswith(s.strip()) for s in summaries)
    label = kind
    if is_summary:
        label = "summary"
    elif kind == "message" and is_injected_context(item):
        label = "context"
    elif is_compaction_item(item):
        label = "compaction (encrypted)"
    if kind == "message":
        preview = text
    elif kind == "function_call":
        preview = f"{item.get('name', '')}({item.get('arguments', '')})"
    elif kind == "function_call_output":
        output = item.get("output", "")
        preview = output if isinstance(output, str) else str(output)
    elif is_compaction_item(item) or kind == "reasoning":
        preview = "(opaque, replayed as is)"
    else:
        preview = ""
    return {
        "role": role or "—",
        "kind": label,
        "tokens": approx_tokens(item_text_for_count(item)),
        "preview": " ".join(preview.split())[:200],
        "summary": is_summary,
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

    def set_history(
        self,
        items: Sequence[Item],
        summaries: Sequence[str] = (),
        token_total: int | None = None,
        approximate: bool = True,
        prefix_source: Callable[[], str | None] = _summary_prefix,
    ) -> None:
        """Show ``items``; ``summaries`` (from the transcript) help spot the summary message."""
        prefix = prefix_source()
        self.tree.clear()
        self.rows = [describe_item(dict(item), prefix, summaries) for item in items]
        c = colors()
        highlight = QBrush(QColor(c.summary_bg))
        bold = QFont(self.font())
        bold.setBold(True)
        for number, row in enumerate(self.rows, start=1):
            entry = QTreeWidgetItem(
                [str(number), row["role"], row["kind"], format_tokens(row["tokens"]), row["preview"]]
            )
            entry.setTextAlignment(3, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            entry.setToolTip(4, row["preview"])
            if row["summary"]:
                for column in range(5):
                    entry.setBackground(column, highlight)
                    entry.setFont(column, bold)
                entry.setToolTip(2, "The compaction summary: it stands in for the earlier turns")
            self.tree.addTopLevelItem(entry)
        estimate = sum(r["tokens"] for r in self.rows)
        summaries_in = sum(1 for r in self.rows if r["summary"])
        text = f"{len(self.rows)} items · ≈{format_tokens(estimate)} tokens (estimate)"
        if token_total is not None:
            text += f" · next request {'≈' if approximate else ''}{format_tokens(token_total)}"
        if summaries_in:
            text += " · 1 summary message" if summaries_in == 1 else f" · {summaries_in} summaries"
        self.totals.setText(text)
