"""The transcript view: the widget the window shows, built on the layers of ``view``.

``TranscriptView`` is the scrolling list of rows the window holds. It adds to the layers below
it (rows, streaming, waits, events) what concerns the whole widget: its hint while empty, the
progress of a session being opened, drawing a reopened session from the core's replay in two
steps, clearing it for another session, and a palette change.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QTimer
from PySide6.QtWidgets import QLabel, QWidget

from ...controller.replay_prep import forget_prepared
from ...controller.waits import opening_text
from ...runtime.qt_namespace import set_enum_property
from ...style.theme import colors
from .events import TranscriptEvents

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from app.core import OpenProgress
    from app.core import protocol as p

    from .sliced_replay import SlicedReplay


OPENING_TICK_MS = 100
OPENING_SHOWN_AFTER = 0.5  # seconds: a quicker open shows no progress
EMPTY_TEXT = (
    "Ask anything to start.\n\n"
    "Type / for commands: /compact [focus] summarises the conversation to free context, "
    "/undo-compact puts it back. The gauge in the status bar shows how full the context is."
)


class TranscriptView(TranscriptEvents):
    """The scrolling list of rows; feed it core events with ``handle_event``."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Transcript")
        self.setToolTip("")
        # While a replay's rows wait for their layout (``finish_replay``): the hold on it.
        self._replay_hold: AbstractContextManager[Any] | None = None
        self._slices: SlicedReplay | None = None  # made when a replay is first drawn in slices
        self.settling = False  # after a replay in slices: one row laid out per pass until done
        self.empty_label = QLabel(EMPTY_TEXT, self.viewport())
        self.empty_label.setWordWrap(True)
        set_enum_property(self.empty_label, "alignment", "AlignCenter")  # before the first paint
        self.empty_label.setStyleSheet(f"color: {colors().muted}; padding: 40px;")

        # While a session opens: its progress, polled (the core reports from a thread).
        self._opening: OpenProgress | None = None
        self._opening_since = 0.0
        self._opening_shown = ""
        self._opening_timer = QTimer(self)
        self._opening_timer.setInterval(OPENING_TICK_MS)
        self._opening_timer.timeout.connect(self.tick_opening)

    def relayout(self) -> None:
        super().relayout()
        if self.settling and not self._deferred:
            self.settling = False
        if not self._hold:
            self.empty_label.setVisible(not self.rows)
            if not self.rows:
                self.empty_label.setGeometry(self.viewport().rect())

    def clear(self) -> None:
        """Remove every row (another session is being shown)."""
        if self._slices is not None:
            self._slices.stop()
        self._clear_state()

    def _clear_state(self) -> None:
        self._flush_timer.stop()
        self._wait_timer.stop()
        self._retry_wait = None
        self._stall = None
        self._messages.clear()
        self._tools.clear()
        self._compactions.clear()
        self._streaming = None
        self._partial.clear()
        self._reconnect = None
        self._turn_id = None
        self.forget_branches()
        self.clear_rows()

    # -- opening a session -----------------------------------------------------------------

    def watch_opening(self, progress: OpenProgress | None) -> None:
        """A session is being opened: once it takes more than half a second, say how far it
        has got ("Opening session… 12 MB of 50 MB") where its conversation will appear."""
        self._end_opening()
        if progress is None:
            return
        # The sizes the replay's height estimates need, read while the core reads the file:
        # the view's first font costs PySide6 ~1 ms making its types, in the replay's step.
        self._font_metrics()
        self._opening = progress
        self._opening_since = self.clock()
        self._opening_timer.start()

    def tick_opening(self) -> None:
        """Show the open's progress now (its timer calls this every 100 ms)."""
        progress = self._opening
        if progress is None or progress.finished:
            self._end_opening()
            return
        if self.clock() - self._opening_since < OPENING_SHOWN_AFTER:
            return
        text = opening_text(progress.stage, progress.done, progress.total)
        if text != self._opening_shown:
            self._opening_shown = text
            self.empty_label.setText(text)
            self.empty_label.setAccessibleName(text)

    def opening_text(self) -> str:
        """The progress shown while a session opens ("" when none is)."""
        return self._opening_shown

    def _end_opening(self) -> None:
        self._opening_timer.stop()
        self._opening = None
        if self._opening_shown:
            self._opening_shown = ""
            self.empty_label.setText(EMPTY_TEXT)
            self.empty_label.setAccessibleName("")

    # -- resume -----------------------------------------------------------------------------

    def replay(self, events: Iterable[p.Event]) -> None:
        """Draw a reopened session from the core's replay of it (``session.replay_events()``),
        through the handler live events go through: it looks as it did live. Rows are created
        for every event, widgets (and Markdown rendering) only for those on screen."""
        self.replay_rows(events)
        self.finish_replay()

    def replay_in_steps(self, events: Iterable[p.Event]) -> None:
        """:meth:`replay` in two turns of the event loop: the rows now, their layout (the
        widgets on screen, the window's next paint) next, before the task that emitted the
        events goes on. For a 50 MB message the two made one block of 14 ms."""
        import asyncio  # not at import: the window paints before asyncio loads

        self.replay_rows(events)
        asyncio.get_event_loop().call_soon(self.finish_replay)

    def replay_rows(self, events: Iterable[p.Event]) -> None:
        """The first step of :meth:`replay`: every row, none laid out yet (what the window
        shows does not change until :meth:`finish_replay`)."""
        self.begin_replay()
        handle = self.handle_event  # looked up once: a Qt object's attributes cost more
        try:
            for event in events:
                handle(event)
            # At the end, in the same layout pass: a second pass laid out a second long part
            # in the same block (each pass lays out at least one, see ``layout_budget``).
            self.scroll_to_bottom()
        except BaseException:
            self.finish_replay()
            raise

    def keep_keyboard(self) -> None:
        """The rows' widgets are about to go: if one has the keyboard, it goes elsewhere
        (``focus_elsewhere``) rather than nowhere."""
        from PySide6.QtWidgets import QApplication

        focus = QApplication.focusWidget()
        if focus is not None and self.viewport().isAncestorOf(focus):
            self.focus_elsewhere()

    def layout_budget(self) -> int:
        return 1 if self.settling else super().layout_budget()

    def replay_in_slices(self, events: Iterable[p.Event], done: Callable[[], None]) -> None:
        """:meth:`replay` a few milliseconds at a time, the old rows on screen until the new
        ones are all made (``sliced_replay``): another branch of a long conversation drawn
        without blocking the window. ``done`` once the new rows are on screen (or the replay
        was stopped by another)."""
        if self._slices is None:
            from .sliced_replay import SlicedReplay

            self._slices = SlicedReplay(self, self)
        self._slices.start(events, done)

    def begin_replay(self, *, keep_on_screen: bool = False) -> list[Any]:
        """Empty the view for a replay and hold its layout until :meth:`finish_replay`. With
        ``keep_on_screen`` the widgets on screen stay there meanwhile and are returned (for
        ``drop_widgets_of`` once the new rows are in)."""
        if self._slices is not None:
            self._slices.stop()
        if self._replay_hold is not None:
            self.finish_replay()  # one left pending goes first
        kept: list[Any] = []
        if keep_on_screen:
            hold = self.hold()
            hold.__enter__()  # before the rows go: no layout shows the view empty meanwhile
            kept = self.retire_widgets()
            self._clear_state()
        else:
            self.clear()
            hold = self.hold()
            hold.__enter__()
        self._replay_hold = hold
        return kept

    def finish_replay(self) -> None:
        """The second step of :meth:`replay`: lay out the rows on screen (nothing when no
        replay is pending)."""
        hold, self._replay_hold = self._replay_hold, None
        if hold is None:
            return
        self._end_opening()
        hold.__exit__(None, None, None)
        forget_prepared()
        if self._renderer is not None:
            self._renderer.forget_ahead()

    def markdown_ahead(self) -> Callable[[str, bool, bool], None]:
        """What renders a part's Markdown ahead, in a worker thread, for the replay to come
        (``replay_prep.prepare_replay``): this view's renderer, as it is now."""
        from functools import partial

        from ...richtext.markdown_document import render_ahead

        return partial(render_ahead, self.renderer)

    # -- palette ----------------------------------------------------------------------------

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            # Widgets are rebuilt from the rows' state, in the new colours, when next shown.
            self._renderer = None
            self.empty_label.setStyleSheet(f"color: {colors().muted}; padding: 40px;")
            self.drop_all_widgets()
