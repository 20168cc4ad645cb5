"""The status-bar indicator: the context gauge, or a spinner while a compaction runs."""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QRect, QTimer, Signal
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QStatusBar,
    QToolButton,
    QWidget,
)

from ..controller.format import (
    compacted_text,
    gauge_level,
    gauge_percent,
    gauge_text,
    progress_text,
)
from ..runtime.qt_namespace import Qt, set_enum_property
from ..style.theme import colors
from ..style.widgets import Spinner, tool_button

AFTER_MESSAGE_MS = 8000


class StatusIndicator(QWidget):
    """Shows ``41 % of context used · auto-compact at 90 %`` with a small bar; during a
    compaction a spinner, the stage and the elapsed time, and a Stop button."""

    stop_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 0, 4, 0)
        layout.setSpacing(6)
        self.spinner = Spinner(self)
        self.spinner.hide()
        layout.addWidget(self.spinner)
        self.label = QLabel(self)
        set_enum_property(self.label, "textFormat", "PlainText")  # before the first paint
        self.label.setAccessibleName("Context usage")
        layout.addWidget(self.label)
        self.bar = QProgressBar(self)
        self.bar.setRange(0, 100)
        self.bar.setTextVisible(False)
        self.bar.setFixedSize(90, 8)
        self.bar.setAccessibleName("Context gauge")
        layout.addWidget(self.bar)
        self.stop_button: QToolButton = tool_button(
            "stop", "Stop the compaction (Esc); nothing is changed", "Stop compaction", self
        )
        self.stop_button.clicked.connect(self.stop_requested)
        self.stop_button.hide()
        layout.addWidget(self.stop_button)

        self.mode = "gauge"  # gauge | compacting | compacted
        self.level = "ok"
        self._gauge = "No messages yet"
        self._gauge_tip = ""
        self._has_percent = False
        self._automatic = False
        self._stage = "starting"
        self._stage_message = ""
        self._trimmed = 0
        self._elapsed: Callable[[], float] = lambda: 0.0
        self._tick = QTimer(self)
        self._tick.setInterval(100)
        self._tick.timeout.connect(self._refresh_progress)
        self._after = QTimer(self)
        self._after.setSingleShot(True)
        self._after.timeout.connect(self._back_to_gauge)
        self._show_gauge()

    # -- gauge ------------------------------------------------------------------------------

    def set_usage(
        self,
        total: int,
        context_window: int | None,
        auto_compact_limit: int | None,
        approximate: bool,
        auto_compact: bool = True,
    ) -> None:
        """Update the gauge from a token count."""
        self._gauge = gauge_text(total, context_window, auto_compact_limit, approximate,
                                 auto_compact)
        self.level = gauge_level(total, context_window, auto_compact_limit)
        percent = gauge_percent(total, context_window)
        # QProgressBar.setValue repaints at once, and a repaint at once paints every update
        # the window has pending in this block: a long message just sent with it (4 ms for
        # 128 KB). With its updates held, the bar is painted with the window's next frame.
        self.bar.setUpdatesEnabled(False)
        self.bar.setValue(percent or 0)
        self.bar.setUpdatesEnabled(True)
        self._has_percent = percent is not None
        source = "an estimate" if approximate else "reported by the server"
        window = f"{context_window:,}" if context_window else "unknown"
        limit = f"{auto_compact_limit:,}" if auto_compact_limit else "none"
        self._gauge_tip = (
            f"{total:,} tokens in the next request ({source}); context window {window}; "
            f"automatic compaction at {limit} tokens"
        )
        if self.mode == "gauge":
            self._show_gauge()

    def _show_gauge(self) -> None:
        self.mode = "gauge"
        self.spinner.stop()
        self.stop_button.hide()
        self.bar.setVisible(self._has_percent)
        self.label.setText(self._gauge)
        self.setToolTip(self._gauge_tip or "How much of the model's context window is used")
        c = colors()
        color = {"ok": c.text, "near": c.warning, "over": c.error}[self.level]
        bar = {"ok": c.accent, "near": c.warning, "over": c.error}[self.level]
        self.label.setStyleSheet(f"color: {color};")
        self.bar.setStyleSheet(
            f"QProgressBar {{ border: 1px solid {c.border}; border-radius: 3px; "
            f"background: {c.base}; }} QProgressBar::chunk {{ background: {bar}; "
            "border-radius: 2px; }"
        )

    def _back_to_gauge(self) -> None:
        if self.mode == "compacted":
            self._show_gauge()

    # -- compaction -------------------------------------------------------------------------

    def start_compaction(
        self, automatic: bool, stage: str, elapsed: Callable[[], float] | None = None
    ) -> None:
        """Turn into the spinner (manual or automatic compaction); ``elapsed`` gives the
        seconds since the compaction started."""
        self._after.stop()
        self.mode = "compacting"
        self._automatic = automatic
        self._stage = stage
        self._stage_message = ""
        self._trimmed = 0
        if elapsed is None:
            started = time.monotonic()
            elapsed = lambda: time.monotonic() - started
        self._elapsed = elapsed
        self.spinner.start()
        self.bar.hide()
        self.stop_button.show()
        self.label.setStyleSheet("")
        self.setToolTip(
            "Coco is compacting the conversation"
            + (" automatically because the context is nearly full" if automatic else "")
            + ". Stop (Esc) cancels without changing anything."
        )
        self._refresh_progress()
        self._tick.start()

    def set_stage(self, stage: str, trimmed: int = 0, message: str = "") -> None:
        """A new compaction stage (remote, local, retrying…)."""
        self._stage = stage
        self._trimmed = trimmed
        self._stage_message = message
        self._refresh_progress()

    def _refresh_progress(self) -> None:
        if self.mode != "compacting":
            self._tick.stop()
            return
        text = progress_text(
            self._stage, self._elapsed(), self._trimmed, self._automatic, self._stage_message
        )
        if self._stage == "retrying" and not self._trimmed and self._stage_message:
            # "Reconnecting... 1/5" counts attempts itself: no clock beside it.
            text = f"{'Auto-compacting · ' if self._automatic else ''}{self._stage_message}"
        self.label.setText(text)

    def finish_compaction(
        self, tokens_before: int, tokens_after: int, freed_little: bool = False
    ) -> None:
        """Show ``Context compacted 182k → 21k tokens`` for a while, then the gauge; in the
        warning colour when the core says it freed little."""
        self._tick.stop()
        self.mode = "compacted"
        self.spinner.stop()
        self.stop_button.hide()
        self.bar.hide()
        self.label.setText(compacted_text(tokens_before, tokens_after))
        tone = colors().warning if freed_little else colors().ok
        self.label.setStyleSheet(f"color: {tone};")
        self._after.start(AFTER_MESSAGE_MS)

    def compaction_undone(self) -> None:
        """The compaction just reported was undone: its figures no longer hold, the gauge
        (which the core's next count updates) comes back at once."""
        self._after.stop()
        self._back_to_gauge()

    def end_compaction(self) -> None:
        """The compaction ended without result (stopped, failed): back to the gauge."""
        self._tick.stop()
        if self.mode == "compacting":
            self._show_gauge()

    def text(self) -> str:
        return self.label.text()


class ElidingStatusBar(QStatusBar):
    """A status bar whose passing messages (a control's hover text, "Exported to …") end in
    "…" where they would run into the permanent widgets on the right, instead of being cut
    off mid-word; the message hides the ordinary widgets (the model name) while it shows."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._permanent: list[QWidget] = []
        self._normal: list[QWidget] = []

    def addPermanentWidget(self, widget: QWidget, stretch: int | None = 0) -> None:
        self._permanent.append(widget)
        super().addPermanentWidget(widget, stretch or 0)

    def addWidget(self, widget: QWidget, stretch: int | None = 0) -> None:
        self._normal.append(widget)
        widget.installEventFilter(self)
        super().addWidget(widget, stretch or 0)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """A message hides the ordinary widgets (the model label) while it shows; one shown
        again meanwhile (the bar laid out anew when a compaction ends) would be drawn under
        the message's text: it stays hidden until the message goes."""
        if (
            event.type() == QEvent.Type.Show
            and watched in self._normal
            and self.currentMessage()
            and isinstance(watched, QWidget)
        ):
            watched.hide()
            # As Qt's own hiding for a message: shown again when the message is cleared.
            watched.setAttribute(Qt.WidgetAttribute.WA_WState_ExplicitShowHide, False)
        return False

    def message_rect(self) -> QRect:
        """Where a message is drawn: from the left edge to the first permanent widget."""
        left, right = 6, self.width() - 12
        for widget in self._permanent:
            if widget.isVisible():
                right = min(right, widget.x() - 6)
                break
        return QRect(left, 0, max(0, right - left), self.height())

    def shown_message(self) -> str:
        """The current message as drawn (shortened with "…" when it does not fit)."""
        return self.fontMetrics().elidedText(
            self.currentMessage(), Qt.TextElideMode.ElideRight, self.message_rect().width()
        )

    def paintEvent(self, event: QPaintEvent) -> None:
        if not self.currentMessage():
            super().paintEvent(event)
            return
        # Loaded here: the first paint has no message, and QStyle alone costs PySide6 ~5 ms.
        from PySide6.QtWidgets import QStyle, QStyleOption

        painter = QPainter(self)
        option = QStyleOption()
        option.initFrom(self)
        self.style().drawPrimitive(QStyle.PrimitiveElement.PE_PanelStatusBar, option, painter,
                                   self)
        for widget in self._permanent:
            if widget.isVisible():
                frame = QStyleOption()
                frame.rect = widget.geometry().adjusted(-2, -1, 2, 1)
                frame.palette = self.palette()
                self.style().drawPrimitive(
                    QStyle.PrimitiveElement.PE_FrameStatusBarItem, frame, painter, widget
                )
        painter.setPen(self.palette().windowText().color())
        painter.drawText(
            self.message_rect(),
            int(Qt.AlignmentFlag.AlignLeading | Qt.AlignmentFlag.AlignVCenter
                | Qt.TextFlag.TextSingleLine),
            self.shown_message(),
        )
        painter.end()
