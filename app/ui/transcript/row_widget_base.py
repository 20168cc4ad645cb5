"""What every row widget of the transcript shares: ``RowWidget`` (the "not in the model's
context" tag and dimming, the pin controls and menu, the measuring of its height) and the small
label helpers the row widgets use.

Each widget shows the state of its row (``row_models``), read again on ``sync``, and hands the
user's clicks back to the row; it holds nothing the row does not, so it can be deleted when the
row scrolls away and rebuilt when it comes back.
"""

from __future__ import annotations

from typing import ClassVar

from PySide6.QtCore import QRectF, QTimer
from PySide6.QtGui import QColor, QContextMenuEvent, QPainter, QPainterPath, QPaintEvent
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..runtime.qt_namespace import Qt
from ..style.icons import icon
from ..style.theme import colors
from ..style.widgets import ElidedLabel, tint, tool_button
from ..text.long_text import break_runs
from .row_models import NOT_IN_CONTEXT, TranscriptRow

DIM_OPACITY = 0.5
EDGE_WIDTH = 3  # the bar down an error notice's left side, pixels
PIN_TIP = (
    "Pin: the model keeps this verbatim through every compaction, before the summary"
)
UNPIN_TIP = "Unpin: a compaction may summarise it like any other message"
FORK_TEXT = "Fork into a new conversation"
FORK_TIP = "A new conversation holding this one up to and including this turn"
LABEL_RUN = 200  # a label's runs without whitespace get break opportunities past this


def label_text(text: str) -> str:
    """``text`` for a wrapping label: only pathological runs get break opportunities (Qt
    cannot lay them out fast), so selecting and copying an ordinary path or hash is exact."""
    return break_runs(text, LABEL_RUN, LABEL_RUN // 2)


def muted_label(text: str, parent: QWidget | None = None) -> QLabel:
    label = QLabel(text, parent)
    label.setTextFormat(Qt.TextFormat.PlainText)
    tint(label, colors().muted)
    return label


def flash_copied(button: QToolButton) -> None:
    tip = button.toolTip()
    button.setIcon(icon("check"))
    button.setToolTip("Copied")

    # The button is the timer's context: a row deleted meanwhile cancels the reset.
    def reset() -> None:
        button.setIcon(icon("copy"))
        button.setToolTip(tip)

    QTimer.singleShot(1200, button, reset)


class RowWidget(QFrame):
    """Base of every row's widget: the "not in context" label and dimming."""

    # Whether the row shows the "not in the model's context" tag (when it is out of context):
    # not a further part of a long message (its first part carries it) nor the app's own
    # notices (never sent to the model, so the tag would say nothing true).
    TAGGED: ClassVar[bool] = True

    def __init__(self, row: TranscriptRow, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.row = row
        self._outer = QVBoxLayout(self)
        self._outer.setContentsMargins(10, 6, 10, 6)
        self._outer.setSpacing(2)
        # Shortened with "…" (whole text in its tooltip) in a header too narrow for it.
        # Parented at once: a shown label without a parent would be a window of its own.
        self.context_tag = ElidedLabel(f"· {NOT_IN_CONTEXT}", self)
        tint(self.context_tag, colors().muted)
        self.context_tag.setToolTip(
            "A compaction replaced this part of the conversation with a summary; the model no "
            "longer sees it, but it stays here for you."
        )
        self.context_tag.setAccessibleName("Not in the model's context")
        self.context_tag.hide()
        self._dimmed = False
        # What is painted under the content (``set_background``): fill, corner radius, edge.
        self._backdrop: tuple[QColor | None, int, QColor | None] | None = None
        self.pin_tag: QLabel | None = None
        self.pin_button: QToolButton | None = None

    def set_background(
        self, color: str | None, radius: int = 0, edge: str | None = None
    ) -> None:
        """Paint the row's rectangle in ``color`` (corners rounded by ``radius``) and, with
        ``edge``, a 3-pixel bar of that colour down its left side, under its content. Painted
        rather than a style sheet on the row, which made Qt polish the row and every widget in
        it through the style-sheet style (see ``style.widgets.tint``)."""
        self._backdrop = (
            QColor(color) if color else None, radius, QColor(edge) if edge else None
        )
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        if self._backdrop is not None:
            fill, radius, edge = self._backdrop
            painter = QPainter(self)
            if fill is not None and radius:
                painter.setRenderHint(QPainter.RenderHint.Antialiasing)
                path = QPainterPath()
                path.addRoundedRect(QRectF(self.rect()), radius, radius)
                painter.fillPath(path, fill)
            elif fill is not None:
                painter.fillRect(self.rect(), fill)
            if edge is not None:
                painter.fillRect(0, 0, EDGE_WIDTH, self.height(), edge)
            painter.end()
        super().paintEvent(event)

    def add_pin_controls(self, header: QHBoxLayout, what: str) -> None:
        """The "pinned" tag and the Pin button of a row the user can pin (``what``: the
        message or the tool output, for the accessible names)."""
        self.pin_tag = muted_label("· pinned")
        self.pin_tag.setAccessibleName(f"Pinned {what}")
        self.pin_tag.hide()
        header.addWidget(self.pin_tag)
        self.pin_button = tool_button("pin", PIN_TIP, f"Pin {what}")
        self.pin_button.clicked.connect(lambda: self.row.request_pin(not self.row.pinned))
        header.addWidget(self.pin_button)

    def sync_pin(self, offered: bool = True) -> None:
        """Show whether the core holds this row pinned (the tag, the button's action)."""
        if self.pin_tag is None or self.pin_button is None:
            return
        pinned = self.row.pinned
        self.pin_tag.setVisible(pinned)
        self.pin_tag.setToolTip(self.row.pin_note)
        self.pin_button.setVisible(offered or pinned)
        self.pin_button.setToolTip(UNPIN_TIP if pinned else PIN_TIP)
        name = self.pin_button.accessibleName().split(" ", 1)[-1]
        self.pin_button.setAccessibleName(f"{'Unpin' if pinned else 'Pin'} {name}")

    def pin_menu(self) -> QMenu | None:
        """The context menu of a row the user can pin: Pin, or Unpin (None for other rows)."""
        if self.pin_button is None or self.pin_button.isHidden():
            return None
        menu = QMenu(self)
        pinned = self.row.pinned
        action = menu.addAction("Unpin" if pinned else "Pin (keep verbatim through compactions)")
        action.triggered.connect(lambda: self.row.request_pin(not pinned))
        return menu

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        """Right-click on a row offers Pin (or Unpin) when it can be pinned, and "Fork into a
        new conversation" when it belongs to a turn."""
        menu = self.pin_menu()
        if self.row.fork_turn():
            menu = menu if menu is not None else QMenu(self)
            fork = menu.addAction(FORK_TEXT)
            fork.setToolTip(FORK_TIP)
            fork.triggered.connect(lambda: self.row.request_fork())
        if menu is None:
            super().contextMenuEvent(event)
            return
        menu.exec(event.globalPos())
        menu.deleteLater()

    def finish(self) -> None:
        """Apply the row's state (end of every subclass's constructor)."""
        self.apply_context()
        self.sync()

    def apply_context(self) -> None:
        dim = not self.row.in_context
        self.context_tag.setVisible(dim and self.TAGGED)
        if dim == self._dimmed:
            return
        self._dimmed = dim
        if dim:
            from PySide6.QtWidgets import QGraphicsOpacityEffect  # not before the first paint

            effect = QGraphicsOpacityEffect(self)
            effect.setOpacity(DIM_OPACITY)
            self.setGraphicsEffect(effect)
        else:
            self.setGraphicsEffect(None)  # type: ignore[arg-type]

    def sync(self) -> None:
        """Show the row's current state."""

    def has_focus_within(self) -> bool:
        """The keyboard focus is in this row (the user is working in it)."""
        focus = QApplication.focusWidget()
        return focus is not None and self.isAncestorOf(focus)

    def height_for(self, width: int) -> int:
        """The height this row needs at ``width`` pixels."""
        self.ensurePolished()
        layout = self._outer
        layout.invalidate()  # box layouts cache heights per width; the content may have grown
        if layout.hasHeightForWidth():
            return layout.totalHeightForWidth(width)
        return layout.totalSizeHint().height()
