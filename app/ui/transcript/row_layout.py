"""How the virtual row area lays out its column: which rows are on screen, their widgets.

The area (``virtual_rows``) keeps the running tops of its rows so a scroll position maps to rows
by bisection; a pass measures the rows that come on screen (within a budget of text, the rest
in the passes after), places their widgets and deletes the widgets of rows long scrolled away
beyond a small least-recently-used cache. When a row above the viewport turns out taller or
shorter than estimated, the first row on screen keeps its place (the scroll position is
adjusted); while ``follow_bottom`` is set the view sticks to the end.
"""

from __future__ import annotations

import bisect
from collections import OrderedDict
from typing import Any, NamedTuple

from PySide6.QtCore import QCoreApplication, QEvent, QTimer
from PySide6.QtGui import QFontMetrics, QPalette, QResizeEvent
from PySide6.QtWidgets import QAbstractScrollArea, QFrame, QWidget

from ..runtime.qt_namespace import set_enum_property

MARGIN = 12  # around the column of rows
SPACING = 8  # between rows
OVERSCAN = 240  # pixels above and below the viewport that get widgets too
KEEP_WIDGETS = 24  # widgets of off-screen rows kept for a quick return
FOLLOW_SLACK = 8  # "at the bottom" within this many pixels
# Characters of text laid out per layout pass (a row's ``layout_cost``); rows beyond it get
# their widget in the next pass, one event-loop turn later, so no pass blocks the window long.
LAYOUT_BUDGET = 2_000
# What making a row's widget (its labels, buttons and text document) costs, in the budget's
# characters: about what laying out this much text does (1-1.5 ms). A redraw that brought a
# screenful of short rows made them all in one pass (13-15 ms).
NEW_WIDGET_COST = 400


class TextMetrics(NamedTuple):
    """The view font's sizes that height estimates need (read once, not per row)."""

    char_width: int  # average character width, pixels
    line_height: int  # line spacing, pixels


class RowColumnLayout(QAbstractScrollArea):
    """The scrolling column and its layout passes; ``VirtualRowArea`` adds the rows."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.NoFrame)
        # Built before the window's first paint: no Qt.* member here (see qt_namespace).
        set_enum_property(self, "horizontalScrollBarPolicy", "ScrollBarAlwaysOff")
        # The viewport is made here rather than taken from Qt: the first widget Qt made itself
        # that Python is handed costs PySide6 a search for its Python type that creates every
        # widget class it has (9-16 ms), before the window's first paint.
        viewport = QWidget(self)
        viewport.setObjectName("qt_scrollarea_viewport")
        self.setViewport(viewport)
        viewport.setBackgroundRole(QPalette.ColorRole.Base)
        viewport.setAutoFillBackground(True)
        self.rows: list[Any] = []
        self._tops: list[int] = []
        self._stale_from = 0  # _tops[i] is right for i < _stale_from
        self._placed = 0  # rows that have had a top computed (the old layout, for anchoring)
        self._with_widgets: OrderedDict[int, Any] = OrderedDict()  # id(row) -> row, LRU
        self._on_screen: list[Any] = []
        self.follow_bottom = True
        self._hold = 0  # > 0 while rows are added or changed in bulk
        self._in_layout = False
        self._again = False
        self._adjusting = False  # the scroll bar is moved by the layout, not the user
        self._metrics: TextMetrics | None = None
        self._held_width = 100
        self._deferred = False  # a pass left rows on screen for the next one
        self._lazy = 0  # > 0 while what changes is laid out by the next pass, not this one
        self._budget = 0  # what the pass under way may still lay out (``layout_budget``)
        self._later = 0  # > 0 while even a short row's new widget is built by the next pass
        # The next pass's second step (see ``_next_pass``): a timer object, since a static
        # zero-delay single shot is a posted call, and posted calls go before every timer.
        self._pass_timer = QTimer(self)
        self._pass_timer.setSingleShot(True)
        self._pass_timer.setInterval(0)
        self._pass_timer.timeout.connect(self._continue_layout)
        bar = self.verticalScrollBar()
        bar.setSingleStep(24)
        bar.valueChanged.connect(self._on_scrolled)

    def widget_for(self, row: Any) -> Any:
        """``row``'s widget, created now if it has none (sized to the column's width)."""
        widget = row._widget
        if widget is None:
            widget = self.create_row_widget(row)
            row._widget = widget
            widget.resize(self._row_width(), max(1, row.height))
            widget.hide()
            self._with_widgets[id(row)] = row
        self._with_widgets.move_to_end(id(row))
        return widget

    def create_row_widget(self, row: Any) -> Any:
        """A new widget showing ``row``, a child of the viewport (subclasses build them)."""
        raise NotImplementedError

    # -- scrolling --------------------------------------------------------------------------

    def _on_scrolled(self, value: int) -> None:
        if not self._adjusting:
            self.follow_bottom = value >= self.verticalScrollBar().maximum() - FOLLOW_SLACK

    def scrollContentsBy(self, dx: int, dy: int) -> None:
        if not self._adjusting:
            # Qt calls this before the scroll bar's other listeners: note first whether the
            # user left the bottom, or the layout would put the view back there.
            self._on_scrolled(self.verticalScrollBar().value())
            self.relayout()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.relayout()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._metrics = None

    # -- layout -----------------------------------------------------------------------------

    def _row_width(self) -> int:
        return max(100, self.viewport().width() - 2 * MARGIN)

    def _font_metrics(self) -> TextMetrics:
        if self._metrics is None:
            metrics = QFontMetrics(self.font())
            self._metrics = TextMetrics(max(1, metrics.averageCharWidth()), metrics.lineSpacing())
        return self._metrics

    def _update_tops(self) -> None:
        rows, tops = self.rows, self._tops
        start = self._stale_from
        if start >= len(rows):
            return
        top = MARGIN if start == 0 else tops[start - 1] + rows[start - 1].height
        for i in range(start, len(rows)):
            if i:  # a row continuing the one above (a long message's next part) has no gap
                top += 0 if getattr(rows[i], "joined", False) else SPACING
            tops[i] = top
            top += rows[i].height
        self._stale_from = len(rows)
        self._placed = len(rows)

    def _content_height(self) -> int:
        if not self.rows:
            return 0
        return int(self._tops[-1] + self.rows[-1].height) + MARGIN

    def _first_visible(self, top: int, placed: int | None = None) -> int:
        hi = len(self._tops) if placed is None else placed
        return max(0, bisect.bisect_right(self._tops, top, 0, hi) - 1)

    def _set_range(self) -> bool:
        """Set the scroll bar's range to the rows' height; True when that showed or hid the
        bar, which narrowed or widened the viewport (the rows' width) now."""
        bar = self.verticalScrollBar()
        page = self.viewport().height()
        bar.setPageStep(max(1, page))
        had_range = bar.maximum() > 0
        maximum = max(0, self._content_height() - page)
        bar.setRange(0, maximum)
        if (maximum > 0) == had_range:
            return False
        # Qt shows or hides the bar a turn later (a queued call), and the viewport's new width
        # then measured the rows on screen again (a 16 KB part of a reopened message: 2.4 ms
        # in the block after the replay's). A layout request makes it happen now.
        QCoreApplication.sendEvent(self, QEvent(QEvent.Type.LayoutRequest))
        return True

    def relayout(self) -> None:
        """Measure the rows on screen, give them widgets and place them (now, unless held)."""
        if self._hold or self._in_layout:
            self._again = True
            return
        self._in_layout = True
        self._adjusting = True
        # One budget for the whole pass, however often it lays out again.
        self._budget = 0 if self._lazy else self.layout_budget()
        try:
            for _ in range(4):  # a measured row can change which rows are on screen
                self._again = False
                self._layout_once()
                if not self._again:
                    break
        finally:
            self._adjusting = False
            self._in_layout = False

    def _layout_once(self) -> None:
        bar = self.verticalScrollBar()
        width = self._row_width()
        # The anchor is found in the layout as it was on screen, before heights that changed
        # since move the rows below them.
        anchor: tuple[int, int] | None = None
        if self._placed and not self.follow_bottom:
            first = self._first_visible(bar.value(), self._placed)
            anchor = (first, bar.value() - self._tops[first])
        self._update_tops()
        if self._set_range():  # the scroll bar came or went: this pass uses the new width
            width = self._row_width()
            self._again = False  # what the viewport's resize asked for
        if self.follow_bottom:
            bar.setValue(bar.maximum())
        elif anchor is not None:
            bar.setValue(self._tops[anchor[0]] + anchor[1])
        # Measure the rows that come on screen; rows above the anchor keep it in place. Text
        # beyond this pass's budget is measured in the next pass (lazily, a turn later).
        budget = self._budget
        deferred = False
        for _ in range(8):
            visible = self._visible_rows(bar.value())
            changed = False
            # The rows nearest where the view holds on come first: at the bottom, the newest.
            for row in reversed(visible) if self.follow_bottom else visible:
                if row.measured_width != width:
                    cost = getattr(row, "layout_cost", 0)
                    fresh = row._widget is None
                    if budget <= 0 and (cost or (fresh and (self._later or not self._lazy))):
                        deferred = True
                        continue
                    budget -= cost + NEW_WIDGET_COST * fresh
                widget = self.widget_for(row)
                if row.measured_width != width:
                    widget.resize(width, max(1, row.height))
                    height = max(1, int(widget.height_for(width)))
                    row.measured_width = width
                    if height != row.height:
                        row.height = height
                        self._stale_from = min(self._stale_from, row.index + 1)
                        changed = True
            if not changed:
                break
            self._update_tops()
            self._set_range()
            if self.follow_bottom:
                bar.setValue(bar.maximum())
            elif anchor is not None:
                bar.setValue(self._tops[anchor[0]] + anchor[1])
        self._budget = budget
        self._place(visible, bar.value(), width)
        if deferred and not self._deferred:
            self._deferred = True
            # A timer, not a posted call (0 ms): timers that are due (input, painting, a
            # stream's reading) get their turn between two passes rather than after all.
            QTimer.singleShot(1, self, self._next_pass)

    def layout_budget(self) -> int:
        """Characters of text one layout pass lays out (``LAYOUT_BUDGET``; the first row
        needing it is laid out whatever its size)."""
        return LAYOUT_BUDGET

    def _next_pass(self) -> None:
        """The next pass is due: it is put behind the timers due by now. Qt fires every timer
        that is due in one round, oldest first, so when painting what the last pass placed
        outlasted this timer's millisecond, the pass went before every timer that came due
        meanwhile (the stream's reading, the window's own): now they run first."""
        self._pass_timer.start()

    def _continue_layout(self) -> None:
        self._deferred = False
        self.relayout()

    def _visible_rows(self, value: int) -> list[Any]:
        if not self.rows:
            return []
        low = value - OVERSCAN
        high = value + self.viewport().height() + OVERSCAN
        rows, tops = self.rows, self._tops
        out: list[Any] = []
        i = self._first_visible(max(0, low))
        while i < len(rows) and tops[i] < high:
            if tops[i] + rows[i].height >= low:
                out.append(rows[i])
            i += 1
        return out

    def _place(self, visible: list[Any], value: int, width: int) -> None:
        showing = {id(row) for row in visible}
        for row in self._on_screen:
            if id(row) not in showing and row._widget is not None:
                row._widget.hide()
        for row in visible:
            widget = row._widget
            if widget is None or row.measured_width != width:
                if widget is not None:  # measured in the next pass; not shown at a wrong size
                    widget.hide()
                continue
            widget.setGeometry(MARGIN, self._tops[row.index] - value, width, row.height)
            if widget.isHidden():
                widget.show()
        self._on_screen = visible
        self._evict(showing)

    def _evict(self, showing: set[int]) -> None:
        spare = len(self._with_widgets) - len(showing) - KEEP_WIDGETS
        if spare <= 0:
            return
        for key in list(self._with_widgets):
            if spare <= 0:
                break
            if key not in showing and not self._with_widgets[key].keep_widget():
                self._drop_widget(self._with_widgets[key])
                spare -= 1

    def _drop_widget(self, row: Any) -> None:
        self._with_widgets.pop(id(row), None)
        widget = row._widget
        row._widget = None
        if widget is not None:
            widget.hide()
            widget.deleteLater()
