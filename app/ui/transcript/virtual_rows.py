"""A scrolling column of rows of any height in which only the rows on screen have widgets.

A transcript of ten thousand messages cannot be ten thousand widget trees: each costs a few
hundred kilobytes and Qt lays out one big layout in time that grows faster than the row count.
Here the rows are plain Python objects holding their state. The area knows each row's height
(measured from its widget once it has been on screen, estimated from its text before that),
keeps the running tops so a scroll position maps to rows by bisection, and gives a widget only
to the rows in or near the viewport. Widgets of rows that scrolled away are kept in a small
least-recently-used cache and deleted beyond it; a row that comes back gets a new one.

When a row above the viewport turns out taller or shorter than estimated, the first row on
screen keeps its place (the scroll position is adjusted), so nothing jumps under the reader.
While ``follow_bottom`` is set (the user has not scrolled up) the view sticks to the end.

Rows are duck-typed: ``_widget`` (the widget or ``None``), ``height``, ``measured_width`` and
``index`` are managed here; a row provides ``estimate_height(width, TextMetrics)``, the
subclass builds a row's widget (``create_row_widget``), and the widget provides
``height_for(width)``.
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


class TextMetrics(NamedTuple):
    """The view font's sizes that height estimates need (read once, not per row)."""

    char_width: int  # average character width, pixels
    line_height: int  # line spacing, pixels


class VirtualRowArea(QAbstractScrollArea):
    """The scrolling column; subclasses add rows with :meth:`append_row`."""

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
        # The next pass's second step (see ``_next_pass``): a timer object, since a static
        # zero-delay single shot is a posted call, and posted calls go before every timer.
        self._pass_timer = QTimer(self)
        self._pass_timer.setSingleShot(True)
        self._pass_timer.setInterval(0)
        self._pass_timer.timeout.connect(self._continue_layout)
        bar = self.verticalScrollBar()
        bar.setSingleStep(24)
        bar.valueChanged.connect(self._on_scrolled)

    # -- rows -------------------------------------------------------------------------------

    def append_row(self, row: Any) -> Any:
        """Add ``row`` at the end (no widget yet: it gets one when it comes on screen)."""
        row.index = len(self.rows)
        row._widget = None
        row.measured_width = -1
        if self._hold:  # a bulk load: the width cannot change meanwhile
            width = self._held_width
        else:
            width = self._row_width()
        row.height = row.estimate_height(width, self._metrics or self._font_metrics())
        self.rows.append(row)
        self._tops.append(0)
        # Only what changes is set: setting an attribute of a Qt object costs ten times
        # reading it, and a reopened session appends ten thousand rows in a row.
        if self._stale_from > row.index:  # noqa: PLR1730 - min() would set it each time
            self._stale_from = row.index
        if not self._hold:
            self.relayout()
        elif not self._again:
            self._again = True
        return row

    def insert_rows(self, index: int, new_rows: list[Any]) -> None:
        """Put ``new_rows`` at ``index`` (no widgets yet: they get one when on screen)."""
        if not new_rows:
            return
        width = self._held_width if self._hold else self._row_width()
        metrics = self._font_metrics()
        for row in new_rows:
            row._widget = None
            row.measured_width = -1
            row.height = row.estimate_height(width, metrics)
        self.rows[index:index] = new_rows
        self._tops[index:index] = [0] * len(new_rows)
        self._placed = min(self._placed, index)
        for i in range(index, len(self.rows)):
            self.rows[i].index = i
        self._stale_from = min(self._stale_from, index)
        if self._hold:
            self._again = True
        else:
            self.relayout()

    def remove_row(self, row: Any) -> None:
        """Take ``row`` out (its widget is deleted)."""
        index = row.index
        if index >= len(self.rows) or self.rows[index] is not row:
            return
        self._drop_widget(row)
        del self.rows[index]
        del self._tops[index]
        self._placed = min(self._placed, index)
        for i in range(index, len(self.rows)):
            self.rows[i].index = i
        self._stale_from = min(self._stale_from, index)
        self.relayout()

    def clear_rows(self) -> None:
        """Remove every row and delete every widget."""
        for row in list(self._with_widgets.values()):
            self._drop_widget(row)
        self.rows = []
        self._tops = []
        self._stale_from = 0
        self._placed = 0
        self._on_screen = []
        self.follow_bottom = True
        self.relayout()

    def row_changed(self, row: Any) -> None:
        """``row``'s content changed and so may its height: measure it again."""
        row.measured_width = -1
        if row._widget is None:
            height = row.estimate_height(self._row_width(), self._font_metrics())
            if height != row.height:
                row.height = height
                self._stale_from = min(self._stale_from, row.index + 1)
        self.relayout()

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

    def drop_all_widgets(self) -> None:
        """Delete every widget (they are rebuilt from the rows' state when needed)."""
        for row in list(self._with_widgets.values()):
            self._drop_widget(row)
            row.measured_width = -1
        self._on_screen = []
        self.relayout()

    def hold(self) -> _Hold:
        """``with area.hold():`` adds or changes many rows with one layout at the end."""
        return _Hold(self)

    def lazy(self) -> _Lazy:
        """``with area.lazy():`` the rows added or changed inside get their widgets (built,
        rendered, measured) in the passes after, a turn of the event loop later, not in the
        caller's own block (rows that cost no layout still get theirs now)."""
        return _Lazy(self)

    def row_at_top(self) -> Any | None:
        """The first row on screen."""
        self._update_tops()
        if not self.rows:
            return None
        return self.rows[self._first_visible(self.verticalScrollBar().value())]

    # -- scrolling --------------------------------------------------------------------------

    def scroll_to_row(self, row: Any) -> None:
        """Bring ``row`` to the top of the view (the view stops following the bottom)."""
        self._update_tops()
        self.follow_bottom = False
        self._set_range()
        bar = self.verticalScrollBar()
        bar.setValue(min(bar.maximum(), max(0, int(self._tops[row.index]) - MARGIN)))
        self.relayout()

    def scroll_to_bottom(self) -> None:
        """Jump to the end and follow it again."""
        self.follow_bottom = True
        self.relayout()

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
        budget = 0 if self._lazy else self.layout_budget()
        deferred = False
        for _ in range(8):
            visible = self._visible_rows(bar.value())
            changed = False
            for row in visible:
                if row.measured_width != width:
                    cost = getattr(row, "layout_cost", 0)
                    if cost and budget <= 0:
                        deferred = True
                        continue
                    budget -= cost
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


class _Hold:
    def __init__(self, area: VirtualRowArea) -> None:
        self.area = area

    def __enter__(self) -> VirtualRowArea:
        if self.area._hold == 0:
            self.area._held_width = self.area._row_width()
        self.area._hold += 1
        return self.area

    def __exit__(self, *exc: object) -> None:
        self.area._hold -= 1
        if self.area._hold == 0:
            self.area.relayout()


class _Lazy:
    def __init__(self, area: VirtualRowArea) -> None:
        self.area = area

    def __enter__(self) -> VirtualRowArea:
        self.area._lazy += 1
        return self.area

    def __exit__(self, *exc: object) -> None:
        self.area._lazy -= 1
