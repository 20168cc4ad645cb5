"""The widgets of the transcript's rows (the compaction marker's is in ``compaction_marker``).

Each widget shows the state of its row (``row_models``), read again on ``sync``, and hands the
user's clicks back to the row; it holds nothing the row does not, so it can be deleted when
the row scrolls away and rebuilt when it comes back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from PySide6.QtCore import QSize, QTimer
from PySide6.QtGui import QContextMenuEvent, QGuiApplication, QMouseEvent
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..runtime.qt_namespace import Qt
from ..style.icons import icon
from ..style.theme import colors
from ..style.widgets import ElidedLabel, RichTextView, tool_button
from ..text.long_text import break_runs, segment_complete
from .message_rows import MessageRow, MessageSegmentRow
from .row_models import (
    NOT_IN_CONTEXT,
    ExpandableRow,
    NoticeRow,
    ReasoningRow,
    ToolRow,
    TranscriptRow,
    clip,
    one_line,
    pretty_arguments,
)

if TYPE_CHECKING:
    from ..richtext.markdown import MarkdownRenderer
    from ..richtext.markdown_document import MarkdownDocument
    from .row_models import RowView, TextView

DIM_OPACITY = 0.5
PIN_TIP = (
    "Pin: the model keeps this verbatim through every compaction, before the summary"
)
UNPIN_TIP = "Unpin: a compaction may summarise it like any other message"
LABEL_RUN = 200  # a label's runs without whitespace get break opportunities past this


def label_text(text: str) -> str:
    """``text`` for a wrapping label: only pathological runs get break opportunities (Qt
    cannot lay them out fast), so selecting and copying an ordinary path or hash is exact."""
    return break_runs(text, LABEL_RUN, LABEL_RUN // 2)


def muted_label(text: str, parent: QWidget | None = None) -> QLabel:
    label = QLabel(text, parent)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setStyleSheet(f"color: {colors().muted};")
    return label


def flash_copied(button: QToolButton) -> None:
    tip = button.toolTip()
    button.setIcon(icon("check"))
    button.setToolTip("Copied")

    # The button is the timer's context: a row deleted meanwhile cancels the reset.
    def reset() -> None:
        button.setIcon(icon("copy"))
        button.setToolTip(tip)

    QTimer.singleShot(1200, button, reset)


class RowWidget(QFrame):
    """Base of every row's widget: the "not in context" label and dimming."""

    # Whether the row shows the "not in the model's context" tag (when it is out of context):
    # not a further part of a long message (its first part carries it) nor the app's own
    # notices (never sent to the model, so the tag would say nothing true).
    TAGGED: ClassVar[bool] = True

    def __init__(self, row: TranscriptRow, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.row = row
        self._outer = QVBoxLayout(self)
        self._outer.setContentsMargins(10, 6, 10, 6)
        self._outer.setSpacing(2)
        # Shortened with "…" (whole text in its tooltip) in a header too narrow for it.
        # Parented at once: a shown label without a parent would be a window of its own.
        self.context_tag = ElidedLabel(f"· {NOT_IN_CONTEXT}", self)
        self.context_tag.setStyleSheet(f"color: {colors().muted};")
        self.context_tag.setToolTip(
            "A compaction replaced this part of the conversation with a summary; the model no "
            "longer sees it, but it stays here for you."
        )
        self.context_tag.setAccessibleName("Not in the model's context")
        self.context_tag.hide()
        self._dimmed = False
        self.pin_tag: QLabel | None = None
        self.pin_button: QToolButton | None = None

    def add_pin_controls(self, header: QHBoxLayout, what: str) -> None:
        """The "pinned" tag and the Pin button of a row the user can pin (``what``: the
        message or the tool output, for the accessible names)."""
        self.pin_tag = muted_label("· pinned")
        self.pin_tag.setAccessibleName(f"Pinned {what}")
        self.pin_tag.hide()
        header.addWidget(self.pin_tag)
        self.pin_button = tool_button("pin", PIN_TIP, f"Pin {what}")
        self.pin_button.clicked.connect(lambda: self.row.request_pin(not self.row.pinned))
        header.addWidget(self.pin_button)

    def sync_pin(self, offered: bool = True) -> None:
        """Show whether the core holds this row pinned (the tag, the button's action)."""
        if self.pin_tag is None or self.pin_button is None:
            return
        pinned = self.row.pinned
        self.pin_tag.setVisible(pinned)
        self.pin_tag.setToolTip(self.row.pin_note)
        self.pin_button.setVisible(offered or pinned)
        self.pin_button.setToolTip(UNPIN_TIP if pinned else PIN_TIP)
        name = self.pin_button.accessibleName().split(" ", 1)[-1]
        self.pin_button.setAccessibleName(f"{'Unpin' if pinned else 'Pin'} {name}")

    def pin_menu(self) -> QMenu | None:
        """The context menu of a row the user can pin: Pin, or Unpin (None for other rows)."""
        if self.pin_button is None or self.pin_button.isHidden():
            return None
        menu = QMenu(self)
        pinned = self.row.pinned
        action = menu.addAction("Unpin" if pinned else "Pin (keep verbatim through compactions)")
        action.triggered.connect(lambda: self.row.request_pin(not pinned))
        return menu

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        """Right-click on a row the user can pin offers Pin (or Unpin)."""
        menu = self.pin_menu()
        if menu is None:
            super().contextMenuEvent(event)
            return
        menu.exec(event.globalPos())
        menu.deleteLater()

    def finish(self) -> None:
        """Apply the row's state (end of every subclass's constructor)."""
        self.apply_context()
        self.sync()

    def apply_context(self) -> None:
        dim = not self.row.in_context
        self.context_tag.setVisible(dim and self.TAGGED)
        if dim == self._dimmed:
            return
        self._dimmed = dim
        if dim:
            from PySide6.QtWidgets import QGraphicsOpacityEffect  # not before the first paint

            effect = QGraphicsOpacityEffect(self)
            effect.setOpacity(DIM_OPACITY)
            self.setGraphicsEffect(effect)
        else:
            self.setGraphicsEffect(None)  # type: ignore[arg-type]

    def sync(self) -> None:
        """Show the row's current state."""

    def has_focus_within(self) -> bool:
        """The keyboard focus is in this row (the user is working in it)."""
        focus = QApplication.focusWidget()
        return focus is not None and self.isAncestorOf(focus)

    def height_for(self, width: int) -> int:
        """The height this row needs at ``width`` pixels."""
        self.ensurePolished()
        layout = self._outer
        layout.invalidate()  # box layouts cache heights per width; the content may have grown
        if layout.hasHeightForWidth():
            return layout.totalHeightForWidth(width)
        return layout.totalSizeHint().height()


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
        if row.role == "user":
            self.setStyleSheet(
                f"QFrame#userRow {{ background: {colors().user_bubble}; border-radius: 8px; }}"
            )
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
        if row.interrupted:
            self.status_label.setText("· interrupted")
        elif row.streaming:
            self.status_label.setText("· writing…")
        self.status_label.setVisible(row.interrupted or row.streaming)
        self.sync_pin(offered=not row.streaming and bool(row.item_id))


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
            self.setStyleSheet(f"QFrame#userPart {{ background: {colors().user_bubble}; }}")
        self.render_text()
        self.finish()

    def render_text(self) -> None:
        segment = self.segment
        complete = segment_complete(segment.message.cuts, segment.number)
        self.markdown.update(segment.source, complete=complete)
        self.body.updateGeometry()


def _code_label(text: str) -> QLabel:
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)  # tool text is data, never markup
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    c = colors()
    label.setStyleSheet(
        f"QLabel {{ font-family: monospace; background: {c.code_bg}; "
        f"border: 1px solid {c.border}; border-radius: 4px; padding: 6px; }}"
    )
    return label


class ExpandableRowWidget(RowWidget):
    """A one-line header (chevron, icon, title, summary line, status) over hidden details."""

    def __init__(self, row: ExpandableRow, title: str, icon_name: str, parent: QWidget) -> None:
        super().__init__(row, parent)
        self.expandable = row
        header = QHBoxLayout()
        header.setSpacing(6)
        self.toggle = QToolButton(self)
        self.toggle.setAutoRaise(True)
        self.toggle.setIconSize(QSize(14, 14))
        self.toggle.setCheckable(True)
        self.toggle.setAccessibleName(f"Show details of {title}")
        self.toggle.toggled.connect(row.set_expanded)
        header.addWidget(self.toggle)
        kind_icon = QLabel()
        kind_icon.setPixmap(icon(icon_name, colors().muted).pixmap(14, 14))
        header.addWidget(kind_icon)
        self.title_label = QLabel(title)
        self.title_label.setTextFormat(Qt.TextFormat.PlainText)
        header.addWidget(self.title_label)
        # A one-line preview: shortened with "…" (whole text in its tooltip), never cut.
        self.detail_label = ElidedLabel("")
        self.detail_label.setStyleSheet(f"color: {colors().muted};")
        header.addWidget(self.detail_label, 1)
        header.addWidget(self.context_tag)
        self.status_label = muted_label("")
        header.addWidget(self.status_label)
        self.header = header
        self._outer.addLayout(header)
        self.details = QWidget(self)
        self.details_layout = QVBoxLayout(self.details)
        self.details_layout.setContentsMargins(26, 2, 0, 2)
        self.details.hide()
        self._outer.addWidget(self.details)

    def sync(self) -> None:
        expanded = self.expandable.expanded
        self.details.setVisible(expanded)
        self.toggle.setIcon(icon("chevron-down" if expanded else "chevron-right"))
        self.toggle.setToolTip("Hide details" if expanded else "Show details")
        if self.toggle.isChecked() != expanded:
            self.toggle.setChecked(expanded)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        # A click anywhere on the header line toggles, not only on the chevron.
        if event.position().y() <= self.toggle.geometry().bottom() + 4:
            self.expandable.set_expanded(not self.expandable.expanded)
        super().mousePressEvent(event)


class ToolRowWidget(ExpandableRowWidget):
    """A tool call's header; details are its arguments and output."""

    def __init__(self, row: ToolRow, parent: QWidget) -> None:
        super().__init__(row, f"Tool · {row.name}", "tool", parent)
        self.tool = row
        self.setAccessibleName(f"Tool call {row.name}")
        self.details_layout.addWidget(muted_label("Arguments"))
        self.arguments_label = _code_label("")
        self.details_layout.addWidget(self.arguments_label)
        self.output_caption = muted_label("Output")
        self.output_label = _code_label("")
        self.add_pin_controls(self.header, "tool output")
        self.details_layout.addWidget(self.output_caption)
        self.details_layout.addWidget(self.output_label)
        self._shown: tuple[str, str | None] | None = None
        self.finish()

    def sync(self) -> None:
        super().sync()
        row = self.tool
        self.status_label.setText(row.status_text)
        self.sync_pin(offered=row.output is not None)
        if self._shown != (row.arguments, row.output):
            self._shown = (row.arguments, row.output)
            self.detail_label.setText(one_line(row.arguments))
            self.arguments_label.setText(label_text(clip(pretty_arguments(row.arguments))))
            self.output_label.setText(label_text(clip(row.output or "")))
            self.output_caption.setVisible(row.output is not None)
            self.output_label.setVisible(row.output is not None)


class ReasoningRowWidget(ExpandableRowWidget):
    """The reasoning summary's header; details are the whole text."""

    def __init__(self, row: ReasoningRow, parent: QWidget) -> None:
        super().__init__(row, "Reasoning", "info", parent)
        self.detail_label.setText(one_line(row.text))
        label = QLabel(label_text(row.text))
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details_layout.addWidget(label)
        self.finish()


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
        self.label.setStyleSheet(f"color: {color};")
        self._icon.setPixmap(icon(self.ICONS.get(row.kind, "info"), color).pixmap(16, 16))
        if row.kind == "error":
            self.setStyleSheet(f"QFrame#noticeRow {{ border-left: 3px solid {c.error}; }}")
        self._add_details(line)
        self.retry_button = _retry_button(row)
        line.addWidget(self.retry_button, 0, Qt.AlignmentFlag.AlignTop)
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
