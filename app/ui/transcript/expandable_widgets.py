"""The widgets of the rows that expand: a one-line header over hidden details. A tool call
(its arguments and output, and the images it returned under the header, shown collapsed too)
and the model's reasoning summary."""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from ..runtime.qt_namespace import Qt
from ..style.icons import icon
from ..style.theme import colors
from ..style.widgets import ElidedLabel, tint
from .row_models import (
    TOOL_IMAGES_INDENT,
    ExpandableRow,
    ReasoningRow,
    ToolRow,
    clip,
    one_line,
    pretty_arguments,
)
from .row_widget_base import RowWidget, label_text, muted_label


def _code_label(text: str) -> QLabel:
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)  # tool text is data, never markup
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    c = colors()
    label.setStyleSheet(
        f"QLabel {{ font-family: monospace; background: {c.code_bg}; "
        f"border: 1px solid {c.border}; border-radius: 4px; padding: 6px; }}"
    )
    return label


class ExpandableRowWidget(RowWidget):
    """A one-line header (chevron, icon, title, summary line, status) over hidden details."""

    def __init__(self, row: ExpandableRow, title: str, icon_name: str, parent: QWidget) -> None:
        super().__init__(row, parent)
        self.expandable = row
        header = QHBoxLayout()
        header.setSpacing(6)
        self.toggle = QToolButton(self)
        self.toggle.setAutoRaise(True)
        self.toggle.setIconSize(QSize(14, 14))
        self.toggle.setCheckable(True)
        self.toggle.setAccessibleName(f"Show details of {title}")
        self.toggle.toggled.connect(row.set_expanded)
        header.addWidget(self.toggle)
        kind_icon = QLabel()
        kind_icon.setPixmap(icon(icon_name, colors().muted).pixmap(14, 14))
        header.addWidget(kind_icon)
        self.title_label = QLabel(title)
        self.title_label.setTextFormat(Qt.TextFormat.PlainText)
        header.addWidget(self.title_label)
        # A one-line preview: shortened with "…" (whole text in its tooltip), never cut.
        self.detail_label = ElidedLabel("")
        tint(self.detail_label, colors().muted)
        header.addWidget(self.detail_label, 1)
        header.addWidget(self.context_tag)
        self.status_label = muted_label("")
        header.addWidget(self.status_label)
        self.header = header
        self._outer.addLayout(header)
        self.details = QWidget(self)
        self.details_layout = QVBoxLayout(self.details)
        self.details_layout.setContentsMargins(26, 2, 0, 2)
        self.details.hide()
        self._outer.addWidget(self.details)

    def sync(self) -> None:
        expanded = self.expandable.expanded
        self.details.setVisible(expanded)
        self.toggle.setIcon(icon("chevron-down" if expanded else "chevron-right"))
        self.toggle.setToolTip("Hide details" if expanded else "Show details")
        if self.toggle.isChecked() != expanded:
            self.toggle.setChecked(expanded)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        # A click anywhere on the header line toggles, not only on the chevron.
        if event.position().y() <= self.toggle.geometry().bottom() + 4:
            self.expandable.set_expanded(not self.expandable.expanded)
        super().mousePressEvent(event)


class ToolRowWidget(ExpandableRowWidget):
    """A tool call's header; details are its arguments and output."""

    def __init__(self, row: ToolRow, parent: QWidget) -> None:
        super().__init__(row, f"Tool · {row.name}", "tool", parent)
        self.tool = row
        self.setAccessibleName(f"Tool call {row.name}")
        self.details_layout.addWidget(muted_label("Arguments"))
        self.arguments_label = _code_label("")
        self.details_layout.addWidget(self.arguments_label)
        self.output_caption = muted_label("Output")
        self.output_label = _code_label("")
        self.add_pin_controls(self.header, "tool output")
        self.details_layout.addWidget(self.output_caption)
        self.details_layout.addWidget(self.output_label)
        self._shown: tuple[str, str | None] | None = None
        self.attachments: QWidget | None = None  # the thumbnails of the images it returned
        self.finish()

    def sync(self) -> None:
        super().sync()
        row = self.tool
        self.status_label.setText(row.status_text)
        self.sync_pin(offered=row.output is not None)
        if self._shown != (row.arguments, row.output):
            self._shown = (row.arguments, row.output)
            self.detail_label.setText(one_line(row.arguments))
            self.arguments_label.setText(label_text(clip(pretty_arguments(row.arguments))))
            self.output_label.setText(label_text(clip(row.output or "")))
            self.output_caption.setVisible(row.output is not None)
            self.output_label.setVisible(row.output is not None)
        if row.attachments or self.attachments is not None:
            from .attachments.strip import sync_strip  # with the first image on screen

            at = self._outer.indexOf(self.details)  # under the title, shown collapsed too
            self.attachments = sync_strip(self, self._outer, at, row, TOOL_IMAGES_INDENT)


class ReasoningRowWidget(ExpandableRowWidget):
    """The reasoning summary's header; details are the whole text."""

    def __init__(self, row: ReasoningRow, parent: QWidget) -> None:
        super().__init__(row, "Reasoning", "info", parent)
        self.detail_label.setText(one_line(row.text))
        label = QLabel(label_text(row.text))
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details_layout.addWidget(label)
        self.finish()
