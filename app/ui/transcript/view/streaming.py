"""How the transcript shows a reply as it streams in.

Deltas are only appended to the reply's row (``append_delta``); the row is re-rendered on a
timer (``flush``), at most once per frame and less often when rendering costs more
(``STREAM_PACE``), and only the open end of its Markdown is rendered again. While the view
follows a stream, one part is laid out per pass and the rows just above the screen are not
built ahead. When the turn or the item ends the rows stop streaming; a failed attempt's partial
replies stay, marked cut off, until the retry's answer begins (then they go: it replaces them)
or, when the turn fails, until a retry of the turn answers (``reply_replaced``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QWidget

from ..message_rows import MessageRow
from .rows import TranscriptRows

FRAME_MS = 33
MAX_FRAME_MS = 250
# Rendering a stream takes at most about one part in this many of the window's thread: the
# next render waits this many times as long as rendering took since the last one (at least a
# frame). A reply arriving faster than anyone reads is shown less often, and what scrolled past
# between two renders is never built at all; at reading speed (a render of the open end costs
# about a millisecond) every frame is rendered. The painting of what a render built comes on
# top of it, hence 20 rather than 12: a stream of 60 000 deltas a second, rendered 7 times a
# second, took 1.23-1.32 times as long as the bare client; 4-5 times a second, 1.15-1.2 times.
STREAM_PACE = 20


class StreamingTranscript(TranscriptRows):
    """The streaming of replies: deltas in, renders paced on a timer, the end of a stream."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._streaming: MessageRow | None = None
        # Replies streaming in the current attempt, by item id: their text is not saved until
        # the item completes, and a retried attempt replaces them.
        self._partial: dict[str, MessageRow] = {}
        # Replies a failed attempt had streamed, shown cut off while the core reconnects: the
        # next attempt's answer replaces them.
        self._held: dict[str, MessageRow] = {}

        # Streaming text is re-rendered on this timer, never per delta.
        self._flush_timer = QTimer(self)
        self._flush_timer.setInterval(FRAME_MS)
        self._flush_timer.timeout.connect(self.flush)
        self.render_count = 0  # renders of streaming rows, for tests and diagnostics
        self._stream_work = 0.0  # seconds spent showing the stream since the last render
        self.work_clock: Callable[[], float] = time.perf_counter  # times that work

    # -- streaming --------------------------------------------------------------------------

    def _stream_row(self, item_id: str) -> MessageRow:
        if self._held:
            self._drop_held()  # the retry's answer begins: it replaces what was cut off
        row = self._messages.get(item_id)
        if row is None:
            row = self.add_message("assistant", "", item_id)
        if not row.streaming:
            row.set_streaming(True)
        self._streaming = row
        self._partial[item_id] = row
        return row

    def append_delta(self, item_id: str, delta: str) -> None:
        self._stream_row(item_id).append(delta)
        if not self._flush_timer.isActive():
            self._flush_timer.start()

    def flush(self) -> None:
        """Render the streaming row if its text changed (at most once per frame)."""
        row = self._streaming
        if row is None or not row.dirty:
            self._flush_timer.stop()
            return
        started = self.work_clock()
        # The parts the render changed are built and measured by the next passes (one each,
        # see ``layout_budget``), not in the render's own block.
        with self.lazy():
            row.render_markdown()
        self.render_count += 1
        spent_ms = (self._stream_work + self.work_clock() - started) * 1000
        self._stream_work = 0.0
        self._flush_timer.setInterval(int(min(MAX_FRAME_MS, max(FRAME_MS, spent_ms * STREAM_PACE))))

    @property
    def render_interval_ms(self) -> int:
        """How long the next render of the streaming text waits (see ``STREAM_PACE``)."""
        return self._flush_timer.interval()

    def layout_budget(self) -> int:
        if self._streaming is not None and self.follow_bottom:
            # Following a stream: one part laid out per pass, so a frame that brings several
            # screens of text is shown over several short passes, not one long block.
            return 1
        return super().layout_budget()

    def _visible_rows(self, value: int) -> list[Any]:
        rows = super()._visible_rows(value)
        if self._streaming is not None and self.follow_bottom and rows:
            # Following a stream, the rows just above the screen are not built ahead: what
            # arrives pushes them further up before anyone could scroll to them (scrolling up
            # stops the following, and they are built as they come on screen).
            tops = self._tops
            rows = [row for row in rows if tops[row.index] + row.height > value]
        return rows

    def resizeEvent(self, event: QResizeEvent) -> None:
        if self._deferred or (self._streaming is not None and self.follow_bottom):
            # While a layout goes on over several passes (a long message coming on screen, a
            # stream followed: a part per pass), what a new width needs (the scroll bar
            # appearing as a long message first fills the view) is laid out by the next
            # pass, not in the block of the resize.
            with self.lazy():
                super().resizeEvent(event)
            return
        super().resizeEvent(event)

    def _continue_layout(self) -> None:
        # Parts of the stream coming on screen a pass after its render count as its work.
        started = self.work_clock()
        super()._continue_layout()
        if self._streaming is not None:
            self._stream_work += self.work_clock() - started

    def _finish_stream(self, interrupted: bool = False) -> None:
        """The turn ended: no row streams any more (those cut short are marked)."""
        self._flush_timer.stop()
        rows = list(self._partial.values())
        if self._streaming is not None and self._streaming not in rows:
            rows.append(self._streaming)
        for row in rows:
            row.render_markdown()
            if interrupted:
                row.set_interrupted()
            row.set_streaming(False)
        self._partial.clear()
        self._held.clear()  # the turn ended: what was cut off stays, marked (the core keeps it)
        self._streaming = None

    def _finish_item(self, row: MessageRow) -> None:
        """``row``'s item completed: its text is final."""
        self._partial.pop(row.item_id, None)
        # Rendered only if the text changed since the last render: the reply's final text
        # arrives twice (item_completed, then agent_message), and a render of an unchanged
        # text still re-measured the row's parts (6 ms at the end of a long reply). Rendered
        # as the stream's last frame (one part laid out per pass, see ``layout_budget``): the
        # parts the end of the text adds come on screen over the next passes.
        if row.dirty:
            with self.lazy():
                row.render_markdown()
        if row is self._streaming:
            self._flush_timer.stop()
            self._streaming = None
        if row.streaming:
            row.set_streaming(False)

    def _hold_partial(self) -> None:
        """The core retries the stream: what the failed attempt streamed stays on screen,
        marked cut off, until the retry's answer begins (it may reuse the item id)."""
        if not self._partial:
            return
        self._flush_timer.stop()
        for item_id, row in self._partial.items():
            row.render_markdown()
            row.set_cut_off()
            self._held[item_id] = row
        self._partial.clear()
        self._streaming = None

    def _drop_held(self) -> None:
        for item_id, row in self._held.items():
            self.remove_reply(item_id, row)
        self._held.clear()

    def remove_reply(self, item_id: str, row: MessageRow | None = None) -> None:
        """Take a reply's rows out (a cut-off reply replaced by a retry's answer)."""
        row = row or self._messages.get(item_id)
        if row is None:
            return
        if self._messages.get(item_id) is row:
            self._messages.pop(item_id, None)
        self.remove_rows([*row.segments, row])
