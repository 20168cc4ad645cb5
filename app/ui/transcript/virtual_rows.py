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

This module holds what the area does with its rows (add, insert, remove, change, scroll to one);
how a layout pass measures and places them is ``row_layout``'s.
"""

from __future__ import annotations

from typing import Any

from .row_layout import MARGIN, RowColumnLayout


class VirtualRowArea(RowColumnLayout):
    """The scrolling column; subclasses add rows with :meth:`append_row`."""

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

    def drop_all_widgets(self) -> None:
        """Delete every widget (they are rebuilt from the rows' state when needed)."""
        for row in list(self._with_widgets.values()):
            self._drop_widget(row)
            row.measured_width = -1
        self._on_screen = []
        self.relayout()

    def retire_widgets(self) -> list[Any]:
        """Take the rows that have widgets out of the layout's care, their widgets left where
        they are on screen (a replay in slices shows them until its new rows are in); they
        are returned for :meth:`drop_widgets_of`."""
        retired = list(self._with_widgets.values())
        self._with_widgets.clear()
        self._on_screen = []
        return retired

    def drop_widgets_of(self, rows: list[Any]) -> None:
        """Delete the widgets of ``rows`` (rows retired by :meth:`retire_widgets`)."""
        for row in rows:
            self._drop_widget(row)

    def hold(self) -> _Hold:
        """``with area.hold():`` adds or changes many rows with one layout at the end."""
        return _Hold(self)

    def lazy(self) -> _Lazy:
        """``with area.lazy():`` the rows added or changed inside get their widgets (built,
        rendered, measured) in the passes after, a turn of the event loop later, not in the
        caller's own block (rows that cost no layout still get theirs now)."""
        return _Lazy(self)

    def later(self) -> _Lazy:
        """``with area.later():`` as :meth:`lazy`, and a row that has no widget yet gets it
        in the passes after even when it costs no layout: building a message's widget takes
        2-6 ms, which the block that received the message (a core event) is not given."""
        return _Lazy(self, new_rows=True)

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
    def __init__(self, area: VirtualRowArea, new_rows: bool = False) -> None:
        self.area = area
        self.new_rows = int(new_rows)

    def __enter__(self) -> VirtualRowArea:
        self.area._lazy += 1
        self.area._later += self.new_rows
        return self.area

    def __exit__(self, *exc: object) -> None:
        self.area._lazy -= 1
        self.area._later -= self.new_rows
