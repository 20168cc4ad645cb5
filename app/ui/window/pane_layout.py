"""The side panes give way so the chat column stays usable at every window size.

The window's splitter holds the session list, the chat column and the Model view. The chat
column never gets narrower than :data:`CHAT_MIN_WIDTH`: when the window is too narrow for a side
pane beside it, the pane that gives way first (the Model view) is hidden and its toggle is
unchecked, with a tooltip and a status message saying why; it comes back by itself once the
window is wide enough again. When the user asks for a pane there is no room for, the other
side pane makes way (the Model view in place of the session list at the minimum width), and
comes back in the same way. A pane the user closed stays closed.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QSize
from PySide6.QtGui import QAction, QResizeEvent
from PySide6.QtWidgets import QSplitter, QWidget

CHAT_MIN_WIDTH = 420  # the chat column's floor: a message line of about 60 characters
MODEL_VIEW_MIN_WIDTH = 200
MIN_WINDOW_SIZE = QSize(640, 480)
GAVE_WAY_TIP = " (hidden while the window is too narrow for it beside the chat; click to show it)"


class SidePane:
    """A side pane of the splitter and the checkable action that shows it. (A plain class:
    made before the window's first paint, where a dataclass costs compiling its methods.)"""

    def __init__(
        self, widget: QWidget, action: QAction, name: str, tip: str, width: int = 0
    ) -> None:
        self.widget = widget
        self.action = action
        self.name = name
        self.tip = tip  # the action's own tooltip
        self.gave_way = False  # hidden for lack of room (not by the user): comes back by itself
        self.width = width  # the width it comes back at (its last width the user chose)

    def min_width(self) -> int:
        return max(self.widget.minimumWidth(), self.widget.minimumSizeHint().width(), 1)


class PaneRoom(QObject):
    """Keeps the chat column of ``splitter`` at least :data:`CHAT_MIN_WIDTH` wide by hiding
    side panes that do not fit (``panes``: the one that gives way first comes first)."""

    def __init__(
        self,
        splitter: QSplitter,
        chat: QWidget,
        panes: list[SidePane],
        say: Callable[[str], None] = lambda _text: None,
    ) -> None:
        super().__init__(splitter)
        self.splitter = splitter
        self.chat = chat
        self.panes = panes
        self._say = say
        self._busy = False  # our own changes to the actions are not the user's
        chat.setMinimumWidth(CHAT_MIN_WIDTH)
        for pane in panes:
            pane.action.toggled.connect(lambda on, pane=pane: self._on_toggled(pane, on))
        splitter.installEventFilter(self)
        splitter.splitterMoved.connect(self._remember_widths)

    # -- what fits --------------------------------------------------------------------------

    def _needed(self, shown: list[SidePane]) -> int:
        """The splitter width the chat column and ``shown`` panes need at the least."""
        handle = self.splitter.handleWidth()
        return CHAT_MIN_WIDTH + sum(pane.min_width() + handle for pane in shown)

    def fit(self, width: int | None = None, asked: SidePane | None = None) -> None:
        """Hide what does not fit in ``width`` (default: the splitter's), sparing ``asked``
        (the pane the user just asked for), and bring back what gave way and fits again."""
        if self._busy:
            return
        width = self.splitter.width() if width is None else width
        shown = [pane for pane in self.panes if pane.action.isChecked()]
        changed = False
        while self._needed(shown) > width:
            candidates = [pane for pane in shown if pane is not asked]
            if not candidates:
                break
            pane = candidates[0]
            shown.remove(pane)
            self._give_way(pane)
            changed = True
        if asked is not None and asked in shown and self._needed(shown) > width:
            # Not even alone: the window cannot hold it beside a usable chat column.
            shown.remove(asked)
            self._set_checked(asked, False)
            self._say(f"Widen the window for the {asked.name}")
            return
        for pane in reversed(self.panes):
            if pane.gave_way and asked is not pane and self._needed([*shown, pane]) <= width:
                shown.append(pane)
                pane.gave_way = False
                self._set_checked(pane, True)
                self._restore_tip(pane)
                changed = True
        if changed or asked is not None:
            self._share(width)

    def _give_way(self, pane: SidePane) -> None:
        pane.gave_way = True
        self._set_checked(pane, False)
        pane.action.setToolTip(pane.tip + GAVE_WAY_TIP)
        # Short enough for the status bar beside the gauge of the smallest window (a longer
        # note ended in "…"); the pane's toggle says the rest (``GAVE_WAY_TIP``).
        self._say(f"{pane.name[:1].upper()}{pane.name[1:]} hidden: too narrow")

    def _restore_tip(self, pane: SidePane) -> None:
        pane.action.setToolTip(pane.tip)

    def _set_checked(self, pane: SidePane, on: bool) -> None:
        self._busy = True
        try:
            pane.action.setChecked(on)  # the window's own slot shows or hides the pane
            pane.widget.setVisible(on)
        finally:
            self._busy = False

    def _share(self, width: int) -> None:
        """Pane widths for ``width``: each shown side pane at its last width where that fits,
        the chat column the rest (never under its floor)."""
        handle = self.splitter.handleWidth()
        sides = [pane for pane in self.panes if pane.widget.isVisibleTo(self.splitter)]
        room = width - CHAT_MIN_WIDTH - handle * len(sides)
        sizes: dict[int, int] = {}
        for index, pane in enumerate(sides):
            rest = sum(other.min_width() for other in sides[index + 1 :])
            wanted = max(pane.width, pane.min_width())
            sizes[id(pane.widget)] = max(pane.min_width(), min(wanted, room - rest))
            room -= sizes[id(pane.widget)]
        chat = max(CHAT_MIN_WIDTH, width - handle * len(sides) - sum(sizes.values()))
        widgets = [self.splitter.widget(index) for index in range(self.splitter.count())]
        self.splitter.setSizes(
            [chat if widget is self.chat else sizes.get(id(widget), 0) for widget in widgets]
        )

    def _remember_widths(self, _pos: int = 0, _index: int = 0) -> None:
        """The user dragged a handle: each shown pane comes back at its new width."""
        for pane in self.panes:
            if pane.widget.isVisibleTo(self.splitter):
                pane.width = pane.widget.width()

    # -- events -----------------------------------------------------------------------------

    def _on_toggled(self, pane: SidePane, on: bool) -> None:
        if self._busy:
            return
        # The user's own choice: a pane they open is theirs, one they close stays closed.
        pane.gave_way = False
        self._restore_tip(pane)
        if on:
            pane.widget.setVisible(True)
            self.fit(asked=pane)
        else:  # its room is free again: a pane that gave way for it comes back
            pane.widget.setVisible(False)
            self.fit()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.splitter and event.type() == QEvent.Type.Resize:
            assert isinstance(event, QResizeEvent)
            self.fit(event.size().width())
        return False
