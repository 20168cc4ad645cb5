"""The widgets of the transcript's rows: messages and their further parts and notices (tool
calls and reasoning are in ``expandable_widgets``, the compaction marker's in
``compaction_marker``), and ``row_widget``, which picks the widget for a row.

Each builds on ``RowWidget`` (``row_widget_base``): it shows the state of its row
(``row_models``, ``message_rows``), read again on ``sync``, and hands the user's clicks back to
the row; it holds nothing the row does not, so it can be deleted when the row scrolls away and
rebuilt when it comes back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QToolButton,
    QWidget,
)

from ..runtime.qt_namespace import Qt
from ..style.icons import icon
from ..style.theme import colors
from ..style.widgets import RichTextView, tint, tool_button
from ..text.long_text import segment_complete
from .branch_controls import BranchControls
from .expandable_widgets import ReasoningRowWidget, ToolRowWidget
from .message_rows import MessageRow, MessageSegmentRow
from .row_models import NoticeRow, ReasoningRow, ToolRow, TranscriptRow, clip
from .row_widget_base import RowWidget, flash_copied, label_text, muted_label

# A reply the server's failure cut off: kept as it was shown.
CUT_OFF_TEXT = "· cut off: the server stopped; not in the model's view"
CUT_OFF_TIP = (
    "The server stopped while this answer was being written. It stays here as it was shown; "
    "the model does not see it. Retry sends the message again and replaces it."
)

if TYPE_CHECKING:
    from ..richtext.markdown import MarkdownRenderer
    from ..richtext.markdown_document import MarkdownDocument
    from .row_models import RowView, TextView


def markdown_body(
    owner: QWidget, renderer: MarkdownRenderer, name: str, breaks: bool = False
) -> tuple[RichTextView, MarkdownDocument]:
    """A message's Markdown view and the document kept in step with its text; its code
    blocks' copy links copy the block's text. ``breaks`` keeps the line breaks typed inside a
    paragraph (a user's Shift+Enter)."""
    from ..richtext.markdown_document import MarkdownDocument  # with the first message on screen

    body = RichTextView(owner)
    body.setAccessibleName(name)
    body.document().setDefaultStyleSheet(renderer.style_sheet())
    markdown = MarkdownDocument(body.document(), renderer, breaks)
    body.copy_code_requested.connect(lambda index: copy_code_block(markdown, index))
    return body, markdown


def copy_code_block(markdown: MarkdownDocument, index: int) -> None:
    blocks = markdown.code_blocks
    if 0 <= index < len(blocks):
        QGuiApplication.clipboard().setText(blocks[index])


class MessageRowWidget(RowWidget):
    """Header (who, status, copy) over the Markdown body."""

    def __init__(self, row: MessageRow, renderer: MarkdownRenderer, parent: QWidget) -> None:
        super().__init__(row, parent)
        self.message = row
        self.setObjectName("userRow" if row.role == "user" else "assistantRow")
        header = QHBoxLayout()
        header.setSpacing(6)
        who = "You" if row.role == "user" else "Coco"
        self.name_label = QLabel(f"<b>{who}</b>")
        self.name_label.setAccessibleName(f"{who} said")
        header.addWidget(self.name_label)
        header.addWidget(self.context_tag)
        self.status_label = muted_label("")
        self.status_label.hide()
        header.addWidget(self.status_label)
        header.addStretch(1)
        self.branch = BranchControls(row, header, self)
        self.add_pin_controls(header, f"{who.lower()} message")
        self.copy_button = tool_button(
            "copy", "Copy this message as Markdown", f"Copy {who.lower()} message"
        )
        self.copy_button.clicked.connect(self.copy_message)
        header.addWidget(self.copy_button)
        self._outer.addLayout(header)

        self.body, self.markdown = markdown_body(
            self, renderer, "Message text", breaks=row.role == "user"
        )
        self._outer.addWidget(self.body)
        self.attachments: QWidget | None = None  # thumbnails and file chips, when it has any
        if row.role == "user":
            self.set_background(colors().user_bubble, radius=8)
        self.render_text()
        self.finish()

    @property
    def code_blocks(self) -> list[str]:
        return self.markdown.code_blocks

    def render_text(self) -> None:
        self.markdown.update(
            self.message.head_source, complete=segment_complete(self.message.cuts, 0)
        )
        self.body.updateGeometry()

    def copy_message(self) -> None:
        """Copy the message's own text (Markdown source), not what is displayed."""
        QGuiApplication.clipboard().setText(self.message.text)
        flash_copied(self.copy_button)

    def copy_code(self, index: int) -> None:
        copy_code_block(self.markdown, index)

    def sync(self) -> None:
        row = self.message
        if row.cut_off:
            self.status_label.setText(CUT_OFF_TEXT)
            self.status_label.setToolTip(CUT_OFF_TIP)
        elif row.interrupted:
            self.status_label.setText("· interrupted")
        elif row.streaming:
            self.status_label.setText("· writing…")
        self.status_label.setVisible(row.cut_off or row.interrupted or row.streaming)
        self.sync_pin(offered=not row.streaming and not row.cut_off and bool(row.item_id))
        self.branch.sync(self.body, self._outer)
        if row.attachments or self.attachments is not None:
            from .attachments.strip import sync_strip  # with the first attachment on screen

            self.attachments = sync_strip(self, self._outer, self._outer.indexOf(self.body) + 1, row)


class SegmentWidget(RowWidget):
    """A further part of a long message: the Markdown body alone, below the part before."""

    TAGGED = False

    def __init__(self, row: MessageSegmentRow, renderer: MarkdownRenderer, parent: QWidget) -> None:
        super().__init__(row, parent)
        self.segment = row
        self._outer.setContentsMargins(10, 0, 10, 0)
        self.setObjectName("userPart" if row.message.role == "user" else "assistantPart")
        self.body, self.markdown = markdown_body(
            self, renderer, "Message text, continued", breaks=row.message.role == "user"
        )
        self._outer.addWidget(self.body)
        if row.message.role == "user":
            self.set_background(colors().user_bubble)
        self.render_text()
        self.finish()

    def render_text(self) -> None:
        segment = self.segment
        complete = segment_complete(segment.message.cuts, segment.number)
        self.markdown.update(segment.source, complete=complete)
        self.body.updateGeometry()


class NoticeRowWidget(RowWidget):
    """One coloured line with an icon (the app's own words: never tagged as out of the
    model's context, which they never were in)."""

    TAGGED = False

    ICONS: ClassVar[dict[str, str]] = {
        "error": "error", "warning": "warning", "background": "info", "stream_error": "info",
    }

    def __init__(self, row: NoticeRow, parent: QWidget) -> None:
        super().__init__(row, parent)
        self.notice = row
        line = QHBoxLayout()
        line.setSpacing(6)
        self._icon = QLabel()
        line.addWidget(self._icon, 0, Qt.AlignmentFlag.AlignTop)
        self.label = QLabel(label_text(row.message))
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        line.addWidget(self.label, 1)
        self._outer.addLayout(line)
        self.setObjectName("noticeRow")
        c = colors()
        color = {"error": c.error, "warning": c.warning}.get(row.kind, c.muted)
        tint(self.label, color)
        self._icon.setPixmap(icon(self.ICONS.get(row.kind, "info"), color).pixmap(16, 16))
        if row.kind == "error":
            self.set_background(None, edge=c.error)
        self._add_details(line)
        self.retry_button = _retry_button(row)
        line.addWidget(self.retry_button, 0, Qt.AlignmentFlag.AlignTop)
        self.undo_button = tool_button(
            "undo", "Take this out of the model's view again", "Undo", text="Undo"
        )
        self.undo_button.clicked.connect(row.request_undo)
        line.addWidget(self.undo_button, 0, Qt.AlignmentFlag.AlignTop)  # parented: then shown
        self.undo_button.setVisible(row.undo_op is not None)
        self.finish()

    def _add_details(self, line: QHBoxLayout) -> None:
        """A "Details" toggle on the line and, below it, the technical detail as selectable
        text (hidden until asked for); both stay hidden while the row has no detail."""
        self.details_button = QToolButton()
        self.details_button.setText("Details")
        self.details_button.setCheckable(True)
        self.details_button.setAutoRaise(True)
        self.details_button.setToolTip("Show the technical detail of this error")
        self.details_button.setAccessibleName("Show error details")
        self.details_button.toggled.connect(self.notice.set_details_shown)
        line.insertWidget(line.count() - 1, self.details_button, 0, Qt.AlignmentFlag.AlignTop)
        self.details_label = QLabel()
        self.details_label.setTextFormat(Qt.TextFormat.PlainText)
        self.details_label.setWordWrap(True)
        self.details_label.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.details_label.setStyleSheet(
            f"color: {colors().muted}; font-family: monospace; padding-left: 22px;"
        )
        self.details_label.setAccessibleName("Error details")
        self._outer.addWidget(self.details_label)

    def sync(self) -> None:
        row = self.notice
        self.label.setText(label_text(row.message))
        self.label.setAccessibleName(f"{row.kind.replace('_', ' ')}: {row.message}")
        self.retry_button.setVisible(row.retry_turn_id is not None)
        self.undo_button.setVisible(row.undo_op is not None)
        self.details_button.setVisible(bool(row.details))
        self.details_button.setChecked(row.details_shown)
        self.details_button.setText("Hide details" if row.details_shown else "Details")
        self.details_label.setVisible(bool(row.details) and row.details_shown)
        if row.details_shown:
            self.details_label.setText(label_text(clip(row.details)))


def _retry_button(row: NoticeRow) -> QToolButton:
    """Retry on a failed turn's error: the core runs the turn again (the message is already
    in the conversation); shown while the core says the turn can be retried."""
    button = tool_button(
        "retry", "Send the failed message again (it is not added twice)", "Retry", text="Retry"
    )
    button.clicked.connect(row.request_retry)
    button.hide()
    return button


def row_widget(row: TranscriptRow, renderer: MarkdownRenderer, parent: QWidget) -> RowWidget:
    """The widget for a message, tool call, reasoning or notice row."""
    if isinstance(row, MessageRow):
        return MessageRowWidget(row, renderer, parent)
    if isinstance(row, MessageSegmentRow):
        return SegmentWidget(row, renderer, parent)
    if isinstance(row, ToolRow):
        return ToolRowWidget(row, parent)
    if isinstance(row, ReasoningRow):
        return ReasoningRowWidget(row, parent)
    if isinstance(row, NoticeRow):
        return NoticeRowWidget(row, parent)
    raise TypeError(f"no widget for {type(row).__name__}")


if TYPE_CHECKING:  # the rows know their widgets by these protocols: mypy checks they fit
    _ROW_VIEW: type[RowView] = RowWidget
    _TEXT_VIEWS: tuple[type[TextView], ...] = (MessageRowWidget, SegmentWidget)
