"""The transcript view as its rows see it: it builds their widgets and passes on what the
user asks for from a row.

``RowHostArea`` is the ``RowHost`` the rows (``row_models``, ``message_rows``,
``compaction_row``) are given: the Markdown renderer their widgets share, the widget of a row
(``create_row_widget``: ``row_widgets.row_widget``, or the compaction marker's), rows added
below or removed, and the requests the user makes from a row (undo a compaction, retry a
turn, pin a message, edit a summary), which it emits as signals for the window.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QAbstractButton, QWidget

from ...style.theme import colors, pygments_style_name
from ..compaction_marker import CompactionRowWidget
from ..compaction_row import CompactionRow
from ..message_rows import MessageRow
from ..row_models import ToolRow, TranscriptRow
from ..row_widget_base import RowWidget
from ..row_widgets import row_widget
from ..virtual_rows import VirtualRowArea

if TYPE_CHECKING:
    from ...richtext.markdown import MarkdownRenderer
    from ..attachments.thumbnails import ImageLoader


_ROWS_WARMED = False  # a message widget of each role has been built in this process
# What the warmed user row shows under its text: a file chip and a thumbnail's box.
_WARM_ATTACHMENTS: list[dict[str, Any]] = [
    {"kind": "file", "name": "notes.txt", "size": 1200},
    {"kind": "image", "name": "screen.png", "width": 3840, "height": 2160, "missing": True},
]


class RowHostArea(VirtualRowArea):
    """The rows' host: their widgets, their renderer, and the user's requests from a row as
    signals (``TranscriptView`` builds on it)."""

    undo_requested = Signal(str)
    retry_requested = Signal()
    compact_requested = Signal(object)  # a failed compaction's Retry: its focus (or None)
    # An op the user asked for from a row (pin, unpin, edit or un-edit a summary).
    op_requested = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._renderer: MarkdownRenderer | None = None  # built on first use (imports are slow)
        self._images: ImageLoader | None = None
        # What the ``branch_summary`` setting says now (never, ask, always), for an edit box.
        self.branch_summary_of: Callable[[], str] = lambda: "never"
        # Where the keyboard goes when the row that had it lets it go (the composer).
        self.focus_elsewhere: Callable[[], None] = lambda: None

    @property
    def images(self) -> ImageLoader:
        """The images of sent messages, decoded off the window's thread and kept (made when
        the first one is shown)."""
        if self._images is None:
            from ..attachments.thumbnails import ImageLoader

            self._images = ImageLoader(self)
        return self._images

    @property
    def renderer(self) -> MarkdownRenderer:
        """The Markdown renderer for the current palette."""
        if self._renderer is None:
            from ...richtext.markdown import MarkdownRenderer

            self._renderer = MarkdownRenderer(colors(), pygments_style_name())
        return self._renderer

    def create_row_widget(self, row: TranscriptRow) -> RowWidget:
        """The widget that shows ``row`` (rows themselves hold no widget code)."""
        if isinstance(row, CompactionRow):
            return CompactionRowWidget(row, self.renderer, self.viewport())
        return row_widget(row, self.renderer, self.viewport())

    def warm_up_rows(self) -> None:
        """Build, measure and drop a message widget of each role and a tool call's, once per
        process: the first of a process cost 8-11 ms more than the next (the renderer's
        parser and code style, the buttons' icons, the first use of the classes and enums they
        need), and an empty session's first message paid it in the block that showed it.
        Called at idle, once the Markdown modules are loaded (``runtime.preload``).

        The user's row holds a file and an image (one whose file is missing: nothing is
        decoded), each widget is painted once off screen and its buttons' icons (those shown
        on hover too) are rendered: a resumed message with eleven attachments built its
        strip's classes and style and rendered its icons (4-5 ms) in the block that showed
        it. The thumbnails' thread is started here too, at idle: started while that row was
        built, its start waited 8 ms for the interpreter."""
        global _ROWS_WARMED
        if _ROWS_WARMED:
            return
        _ROWS_WARMED = True
        width = self._row_width()
        tool = ToolRow(self, "warm", "read_file", '{"path": "notes.md"}')
        tool.output = "Its text."
        for row in (
            MessageRow(self, "user", "A *first* `message`."),
            MessageRow(self, "assistant", "A *first* `message`."),
            tool,  # its chevron's and its kind's icons (a tool's output first shown)
        ):
            if getattr(row, "role", None) == "user":
                row.attachments = _WARM_ATTACHMENTS
            widget = self.create_row_widget(row)
            strip = getattr(widget, "attachments", None)
            if strip is not None:
                strip.make_boxes()  # (made a turn later otherwise)
            widget.resize(width, widget.height_for(width))
            widget.grab()
            for button in widget.findChildren(QAbstractButton):  # the hidden ones' icons too
                button.icon().pixmap(button.iconSize(), button.devicePixelRatioF())
            widget.deleteLater()
        self.images.start()

    def widget_for(self, row: Any) -> Any:
        """``row``'s widget, showing the row's current text (see ``TranscriptRow.stale``)."""
        if row._widget is None:
            row.stale = False  # a new widget renders the current text
        widget = super().widget_for(row)
        if row.stale:
            row.stale = False
            widget.render_text()
        return widget

    def insert_rows_after(self, row: TranscriptRow, rows: list[TranscriptRow]) -> None:
        """Put ``rows`` right below ``row`` (the further parts of a long message)."""
        self.insert_rows(row.index + 1, rows)

    def remove_rows(self, rows: list[TranscriptRow]) -> None:
        with self.hold():
            for row in rows:
                self.remove_row(row)

    def request_undo(self, item_id: str) -> None:
        """A marker's Undo button was clicked."""
        self.undo_requested.emit(item_id)

    def request_retry(self) -> None:
        """An error's Retry button was clicked."""
        self.retry_requested.emit()

    def request_compact(self, focus: str | None) -> None:
        """A failed compaction's Retry button was clicked."""
        self.compact_requested.emit(focus)

    def request_pin(self, row: TranscriptRow, pinned: bool) -> None:
        """A row's Pin (or Unpin) was clicked: the op names the row; the core decides."""
        from app.core import ops

        if isinstance(row, ToolRow):
            op = ops.PinItem(
                pinned=pinned, key=row.pin_key, kind="function_call_output", row_id=row.call_id
            )
        elif isinstance(row, MessageRow):
            kind = "user_message" if row.role == "user" else "agent_message"
            op = ops.PinItem(
                pinned=pinned, key=row.pin_key, kind=kind, row_id=row.item_id, text=row.text
            )
        else:
            return
        self.op_requested.emit(op)

    def request_summary_edit(self, item_id: str, text: str | None) -> None:
        """A marker's summary was edited (``text``), or its edit undone (``None``)."""
        from app.core import ops

        if text is None:
            self.op_requested.emit(ops.UndoSummaryEdit(item_id=item_id))
        else:
            self.op_requested.emit(ops.EditSummary(item_id=item_id, text=text))

    @property
    def branch_summary(self) -> str:
        return self.branch_summary_of()

    def keyboard_back(self) -> None:
        """A row's editor closed with the keyboard: it goes to ``focus_elsewhere``."""
        self.focus_elsewhere()

    def request_op(self, op: Any) -> None:
        """An op a row asked for (edit, regenerate, switch branch, fork)."""
        self.op_requested.emit(op)

    def turn_of(self, row: TranscriptRow) -> str:
        """The turn ``row`` belongs to: its own, else that of the nearest message above it
        (a tool call, a notice, a marker or a part of a long message)."""
        rows = self.rows
        for index in range(min(row.index, len(rows) - 1), -1, -1):
            other = rows[index]
            message = getattr(other, "message", other)  # a part: its message
            if isinstance(message, MessageRow) and message.turn_id:
                return message.turn_id
        return ""
