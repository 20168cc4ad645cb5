"""A replay drawn in slices: another branch of a long conversation shown without blocking.

Switching to another branch of a 5 000-turn conversation replays ten thousand events, a quarter
of a second of rows made in one block. Here they are made a few milliseconds at a time
(``SLICE_S``), and between two slices the window paints, scrolls and takes input. What was on
screen stays there until the new rows are all made: the widgets of the rows on screen are taken
out of the layout's care (``retire_widgets``) and left where they are, and the layout is held.
At the end the old widgets go and the new rows on screen get theirs, one a layout pass (a
message's widget takes milliseconds to build and render), so the new branch appears over a
few frames rather than in one long block.

A replay in slices is stopped by anything that draws the view again (another replay, a
``clear`` for another session); ``done`` is called once, when the new rows are on screen or
when the replay was stopped.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject, QTimer

if TYPE_CHECKING:
    from app.core import protocol as p

SLICE_S = 0.004  # rows made per slice, in seconds of the window's time
FREED_PER_SLICE = 1_000  # old rows freed per slice (freeing ten thousand took 4-10 ms)
_CHECK_EVERY = 16  # events handled between two looks at the clock (a look costs ~0.1 µs)


class ReplayTarget(Protocol):
    """What a replay in slices needs of the view it draws (``TranscriptView``)."""

    rows: list[Any]
    settling: bool

    def begin_replay(self, *, keep_on_screen: bool = False) -> list[Any]: ...

    def handle_event(self, event: p.Event) -> None: ...

    def scroll_to_bottom(self) -> None: ...

    def drop_widgets_of(self, rows: list[Any]) -> None: ...

    def keep_keyboard(self) -> None: ...

    def lazy(self) -> AbstractContextManager[Any]: ...

    def finish_replay(self) -> None: ...


class SlicedReplay:
    """Draws one replay at a time into ``view`` in slices (``start``)."""

    def __init__(self, view: ReplayTarget, parent: QObject) -> None:
        self._view = view
        # The next slice: a timer, not a posted call, so timers already due (input, painting,
        # a stream's reading) go first (see ``RowColumnLayout._next_pass``).
        self._timer = QTimer(parent)
        self._timer.setSingleShot(True)
        self._timer.setInterval(1)
        self._timer.timeout.connect(self._slice)
        self._events: Iterator[p.Event] | None = None
        self._retired: list[Any] = []
        self._old_rows: list[Any] = []  # the rows replaced, freed a slice at a time
        self._done: Callable[[], None] | None = None
        self.slices = 0  # slices of the last replay (tests see it was drawn in more than one)

    @property
    def running(self) -> bool:
        return self._events is not None

    def start(self, events: Iterable[p.Event], done: Callable[[], None]) -> None:
        """Draw ``events`` as the view's whole content, in slices from now; ``done`` then."""
        self.stop()
        view = self._view
        self._old_rows = view.rows  # the view gets a new list: these are freed in slices
        self._retired = view.begin_replay(keep_on_screen=True)
        self._events = iter(events)
        self._done = done
        self.slices = 0
        self._timer.start()

    def _slice(self) -> None:
        events = self._events
        if events is None:
            return
        self.slices += 1
        del self._old_rows[-FREED_PER_SLICE:]
        handle = self._view.handle_event
        clock = time.perf_counter
        deadline = clock() + SLICE_S
        count = 0
        try:
            for event in events:
                handle(event)
                count += 1
                if count % _CHECK_EVERY == 0 and clock() > deadline:
                    self._timer.start()
                    return
        except Exception:
            self._end()
            raise
        if count:  # the last events made rows in this slice: the end gets a pass of its own
            self._timer.start()  # (its layout and widgets took 7-8 ms after a 4 ms slice)
            return
        self._view.scroll_to_bottom()
        self._end()

    def stop(self) -> None:
        """Stop a replay under way (the view is then drawn again by whoever stopped it)."""
        if self._events is not None:
            self._end()

    def _end(self) -> None:
        """The new rows on screen, the old widgets gone, ``done`` told."""
        self._timer.stop()
        self._events = None
        self._old_rows = []
        retired, self._retired = self._retired, []
        view = self._view
        view.keep_keyboard()  # an old row had it (an edit box just sent, an arrow clicked)
        view.drop_widgets_of(retired)
        # The rows on screen get their widgets one per pass from the next (a message's widget
        # is a few milliseconds to build and render): no pass blocks the window long.
        view.settling = True
        with view.lazy():
            view.finish_replay()
        done, self._done = self._done, None
        if done is not None:
            done()
