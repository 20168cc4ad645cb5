"""The rows of the transcript: each is a small Python object holding what the row shows, and
gets a widget only while it is on screen (see ``virtual_rows``).

A row's state (text, whether it streams, is expanded, is still in the model's context, a
compaction's figures…) lives on the row, so a widget can be dropped and rebuilt at any time;
widgets read the row (``sync``) and send the user's clicks back to it. The widget parts a
caller may want (``row.body``, ``row.copy_button``, ``marker.undo_button``…) are reached
through the row, which builds its widget if it has none at that moment.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from PySide6.QtCore import QSize, Qt, QTimer
from PySide6.QtGui import QGuiApplication, QMouseEvent
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QGraphicsOpacityEffect,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from .format import STRATEGY_TEXT, TRIGGER_TEXT, format_duration, format_tokens
from .icons import icon
from .theme import colors
from .virtual_rows import TextMetrics
from .widgets import RichTextView, Spinner, tool_button

if TYPE_CHECKING:
    from .markdown import MarkdownRenderer

NOT_IN_CONTEXT = "not in the model's context"
REMOTE_SUMMARY_TEXT = "Summary held by the server (encrypted; Coco cannot show it)."
MAX_TOOL_TEXT = 20_000  # characters of tool arguments/output shown before cutting
DIM_OPACITY = 0.5


class RowHost(Protocol):
    """What rows need from the view that shows them."""

    @property
    def renderer(self) -> MarkdownRenderer: ...

    def widget_for(self, row: Any) -> Any: ...

    def row_changed(self, row: Any) -> None: ...

    def request_undo(self, item_id: str) -> None: ...


def _clip(text: str, limit: int = MAX_TOOL_TEXT) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit} more characters not shown)"


def _pretty_arguments(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), indent=2, ensure_ascii=False)
    except (ValueError, TypeError):
        return arguments


def _one_line(text: str, limit: int = 80) -> str:
    line = " ".join(text[: limit * 4].split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _muted_label(text: str, parent: QWidget | None = None) -> QLabel:
    label = QLabel(text, parent)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setStyleSheet(f"color: {colors().muted};")
    return label


def _flash_copied(button: QToolButton) -> None:
    tip = button.toolTip()
    button.setIcon(icon("check"))
    button.setToolTip("Copied")

    # The button is the timer's context: a row deleted meanwhile cancels the reset.
    def reset() -> None:
        button.setIcon(icon("copy"))
        button.setToolTip(tip)

    QTimer.singleShot(1200, button, reset)


def _text_lines(text: str, width: int, metrics: TextMetrics) -> int:
    """About how many lines ``text`` wraps to at ``width`` pixels (for height estimates)."""
    per_line = max(20, width // metrics.char_width)
    return text.count("\n") + len(text) // per_line + 1


# ---------------------------------------------------------------------------------- rows


class TranscriptRow:
    """Base of every row: whether it is still in the model's context (dimmed if not)."""

    __slots__ = ("_host", "_widget", "height", "in_context", "index", "measured_width")

    def __init__(self, host: RowHost) -> None:
        self._host = host
        self._widget: RowWidget | None = None
        self.in_context = True
        self.index = 0
        self.height = 0
        self.measured_width = -1

    @property
    def widget(self) -> Any:
        """The row's widget (built now if the row is off screen and has none)."""
        return self._host.widget_for(self)

    @property
    def context_tag(self) -> QLabel:
        return self.widget.context_tag  # type: ignore[no-any-return]

    def set_in_context(self, in_context: bool) -> None:
        """Dim the row (and show the label) when the model no longer sees it."""
        if in_context == self.in_context:
            return
        self.in_context = in_context
        if self._widget is not None:
            self._widget.apply_context()

    def keep_widget(self) -> bool:
        """True while the widget must survive off screen (the user is working in it)."""
        focus = QApplication.focusWidget()
        return self._widget is not None and focus is not None and self._widget.isAncestorOf(
            focus
        )

    def _changed(self, resized: bool = True) -> None:
        if self._widget is not None:
            self._widget.sync()
        if resized:
            self._host.row_changed(self)

    def create_widget(self, parent: QWidget) -> RowWidget:
        raise NotImplementedError

    def estimate_height(self, width: int, metrics: TextMetrics) -> int:
        return 2 * metrics.line_height + 16


class MessageRow(TranscriptRow):
    """A user or assistant message rendered as Markdown, with a copy button.

    While a reply streams, deltas are only collected; :meth:`render_markdown` (once per frame)
    re-renders just the part of the Markdown that is still open (see ``MarkdownDocument``).
    """

    __slots__ = (
        "_pending", "_rendered", "_text", "_version", "interrupted", "item_id", "role",
        "streaming",
    )

    def __init__(self, host: RowHost, role: str, text: str = "", item_id: str = "") -> None:
        super().__init__(host)
        self.role = role
        self.item_id = item_id
        self._text = text
        self._pending: list[str] = []  # deltas not yet joined into _text
        self._version = 0
        self._rendered = 0
        self.streaming = False
        self.interrupted = False

    @property
    def text(self) -> str:
        """The whole message as received so far (Markdown source)."""
        if self._pending:
            self._text += "".join(self._pending)
            self._pending.clear()
        return self._text

    def set_text(self, text: str) -> None:
        self._pending.clear()
        if text != self._text:
            self._text = text
            self._version += 1

    def append(self, delta: str) -> None:
        # Joined on the next read: appending to a long string per delta would copy it each time.
        self._pending.append(delta)
        self._version += 1

    @property
    def dirty(self) -> bool:
        """The text changed since the last :meth:`render_markdown`."""
        return self._version != self._rendered

    def render_markdown(self) -> None:
        """Bring the rendered Markdown up to date (only its open end re-renders when the text
        grew; a row off screen just re-estimates its height)."""
        self._rendered = self._version
        if isinstance(self._widget, MessageRowWidget):
            self._widget.render_text()
        self._host.row_changed(self)

    def set_interrupted(self) -> None:
        self.interrupted = True
        self._changed(resized=False)

    def set_streaming(self, streaming: bool) -> None:
        self.streaming = streaming
        self._changed(resized=False)

    @property
    def code_blocks(self) -> list[str]:
        """The text of each code block, in the order of their copy links."""
        return self.widget.code_blocks  # type: ignore[no-any-return]

    @property
    def body(self) -> RichTextView:
        return self.widget.body  # type: ignore[no-any-return]

    @property
    def copy_button(self) -> QToolButton:
        return self.widget.copy_button  # type: ignore[no-any-return]

    def copy_message(self) -> None:
        QGuiApplication.clipboard().setText(self.text)
        if isinstance(self._widget, MessageRowWidget):
            _flash_copied(self._widget.copy_button)

    def copy_code(self, index: int) -> None:
        self.widget.copy_code(index)

    def keep_widget(self) -> bool:
        return self.streaming or super().keep_widget()

    def estimate_height(self, width: int, metrics: TextMetrics) -> int:
        text = self._text if not self._pending else self.text
        return 40 + _text_lines(text, width - 24, metrics) * metrics.line_height

    def create_widget(self, parent: QWidget) -> RowWidget:
        return MessageRowWidget(self, self._host.renderer, parent)


class ExpandableRow(TranscriptRow):
    """A one-line header that expands to details (tool calls, reasoning)."""

    __slots__ = ("expanded",)

    def __init__(self, host: RowHost) -> None:
        super().__init__(host)
        self.expanded = False

    def set_expanded(self, expanded: bool) -> None:
        if expanded != self.expanded:
            self.expanded = expanded
            self._changed()

    @property
    def toggle(self) -> QToolButton:
        return self.widget.toggle  # type: ignore[no-any-return]

    @property
    def title_label(self) -> QLabel:
        return self.widget.title_label  # type: ignore[no-any-return]

    @property
    def detail_label(self) -> QLabel:
        return self.widget.detail_label  # type: ignore[no-any-return]

    @property
    def status_label(self) -> QLabel:
        return self.widget.status_label  # type: ignore[no-any-return]


class ToolRow(ExpandableRow):
    """A tool call: name and a short argument line; expands to arguments and output."""

    __slots__ = ("arguments", "call_id", "name", "output", "stopped")

    def __init__(self, host: RowHost, call_id: str, name: str, arguments: str) -> None:
        super().__init__(host)
        self.call_id = call_id
        self.name = name
        self.arguments = arguments
        self.output: str | None = None
        self.stopped = False

    def set_arguments(self, arguments: str) -> None:
        self.arguments = arguments
        self._changed()

    def set_output(self, output: str) -> None:
        self.output = output
        self._changed()

    def set_stopped(self) -> None:
        if self.output is None:
            self.stopped = True
            self._changed(resized=False)

    @property
    def status_text(self) -> str:
        if self.output is None:
            return "stopped" if self.stopped else "running…"
        lines = self.output.count("\n") + 1 if self.output else 0
        return f"done · {lines} line{'s' if lines != 1 else ''}"

    @property
    def arguments_label(self) -> QLabel:
        return self.widget.arguments_label  # type: ignore[no-any-return]

    @property
    def output_label(self) -> QLabel:
        return self.widget.output_label  # type: ignore[no-any-return]

    def estimate_height(self, width: int, metrics: TextMetrics) -> int:
        if not self.expanded:
            return metrics.line_height + 16
        text = self.arguments + (self.output or "")
        return 60 + _text_lines(text[:MAX_TOOL_TEXT * 2], width - 40, metrics) * (
            metrics.line_height
        )

    def create_widget(self, parent: QWidget) -> RowWidget:
        return ToolRowWidget(self, parent)


class ReasoningRow(ExpandableRow):
    """The model's reasoning summary, collapsed by default."""

    __slots__ = ("text",)

    def __init__(self, host: RowHost, text: str) -> None:
        super().__init__(host)
        self.text = text

    def estimate_height(self, width: int, metrics: TextMetrics) -> int:
        if not self.expanded:
            return metrics.line_height + 16
        return 30 + _text_lines(self.text, width - 40, metrics) * metrics.line_height

    def create_widget(self, parent: QWidget) -> RowWidget:
        return ReasoningRowWidget(self, parent)


class NoticeRow(TranscriptRow):
    """An inline error, warning, background or reconnect line, in its own colour."""

    __slots__ = ("kind", "message")

    def __init__(self, host: RowHost, kind: str, message: str) -> None:
        super().__init__(host)
        self.kind = kind
        self.message = message

    def set_message(self, message: str) -> None:
        self.message = message
        self._changed()

    @property
    def label(self) -> QLabel:
        return self.widget.label  # type: ignore[no-any-return]

    def estimate_height(self, width: int, metrics: TextMetrics) -> int:
        return 14 + _text_lines(self.message, width - 40, metrics) * metrics.line_height

    def create_widget(self, parent: QWidget) -> RowWidget:
        return NoticeRowWidget(self, parent)


class CompactionRow(TranscriptRow):
    """The compaction marker: trigger, strategy, tokens before → after, duration, the summary
    (expandable), and Undo while the core still allows it."""

    __slots__ = (
        "automatic", "dimmed", "expanded", "figures", "figures_tip", "info", "item_id",
        "started", "state", "strategy", "summary", "title", "undoable",
    )

    def __init__(self, host: RowHost, item_id: str, automatic: bool = False) -> None:
        super().__init__(host)
        self.item_id = item_id
        self.state = "running"  # running | done | undone | stopped
        self.automatic = automatic
        self.undoable = False
        self.summary = ""
        self.strategy = ""
        self.started = time.monotonic()
        # Rows this marker dimmed, with their state before, so an undo can restore them.
        self.dimmed: list[tuple[TranscriptRow, bool]] = []
        self.title = "Compacting automatically…" if automatic else "Compacting…"
        self.figures = "Starting…"
        self.figures_tip = ""
        self.info = ""
        self.expanded = False

    # -- state ------------------------------------------------------------------------------

    def set_stage(self, text: str) -> None:
        """What the running compaction is doing (from the progress events)."""
        if self.state == "running":
            self.figures = text
            self._changed()

    def complete(
        self,
        *,
        trigger: str,
        strategy: str,
        tokens_before: int,
        tokens_after: int,
        duration_ms: int,
        summary: str = "",
        kept_user_messages: int = 0,
        kept_truncated: bool = False,
        trimmed_items: int = 0,
        focus: str | None = None,
        style: str = "handoff",
        undoable: bool = False,
        undone: bool = False,
    ) -> None:
        """Fill in the figures of a finished compaction."""
        self.state = "done"
        self.summary = summary
        self.strategy = strategy
        self.automatic = trigger != "manual"
        trigger_text = TRIGGER_TEXT.get(trigger, trigger)
        strategy_text = STRATEGY_TEXT.get(strategy, strategy)
        self.title = f"Context compacted · {trigger_text} · {strategy_text}"
        self.figures = (
            f"{format_tokens(tokens_before)} → {format_tokens(tokens_after)} tokens · "
            f"{format_duration(duration_ms)}"
        )
        self.figures_tip = (
            f"{tokens_before:,} tokens before, {tokens_after:,} after, "
            f"in {format_duration(duration_ms)}"
        )
        info: list[str] = []
        if kept_user_messages:
            noun = "message" if kept_user_messages == 1 else "messages"
            kept = f"{kept_user_messages} recent user {noun} kept verbatim"
            if kept_truncated:
                kept += " (the oldest one shortened)"
            info.append(kept)
        if trimmed_items:
            info.append(f"{trimmed_items} older item(s) trimmed to fit the compaction request")
        if style == "checkpoint":
            info.append("checkpoint summary")
        if focus:
            info.append(f"focus: {focus}")
        self.info = " · ".join(info)
        self.undoable = undoable
        if undone:
            self.mark_undone()
        else:
            self._changed()

    def set_undoable(self, undoable: bool) -> None:
        undoable = undoable and self.state == "done"
        if undoable != self.undoable:
            self.undoable = undoable
            self._changed(resized=False)

    def mark_undone(self) -> None:
        self.state = "undone"
        self.undoable = False
        self.title = "Compaction undone · the history is back to what it was before"
        for row, previous in self.dimmed:
            row.set_in_context(previous)
        self.dimmed = []
        self._changed()

    def mark_stopped(self, reason: str) -> None:
        """A compaction that ended without compacting (cancelled or failed)."""
        self.state = "stopped"
        self.title = reason
        self.figures = "The history is exactly as it was before."
        self._changed()

    def set_expanded(self, expanded: bool) -> None:
        if expanded != self.expanded:
            self.expanded = expanded
            self._changed()

    def request_undo(self) -> None:
        self._host.request_undo(self.item_id)

    # -- widget parts -----------------------------------------------------------------------

    @property
    def title_label(self) -> QLabel:
        return self.widget.title_label  # type: ignore[no-any-return]

    @property
    def figures_label(self) -> QLabel:
        return self.widget.figures_label  # type: ignore[no-any-return]

    @property
    def info_label(self) -> QLabel:
        return self.widget.info_label  # type: ignore[no-any-return]

    @property
    def summary_view(self) -> RichTextView:
        return self.widget.summary_view  # type: ignore[no-any-return]

    @property
    def summary_button(self) -> QToolButton:
        return self.widget.summary_button  # type: ignore[no-any-return]

    @property
    def undo_button(self) -> QToolButton:
        return self.widget.undo_button  # type: ignore[no-any-return]

    @property
    def spinner(self) -> Spinner:
        return self.widget.spinner  # type: ignore[no-any-return]

    def keep_widget(self) -> bool:
        return self.state == "running" or super().keep_widget()

    def estimate_height(self, width: int, metrics: TextMetrics) -> int:
        lines = 2 + (1 if self.info else 0)
        if self.expanded:
            lines += _text_lines(self.summary, width - 24, metrics)
        return 20 + lines * metrics.line_height

    def create_widget(self, parent: QWidget) -> RowWidget:
        return CompactionRowWidget(self, self._host.renderer, parent)


# ------------------------------------------------------------------------------- widgets


class RowWidget(QFrame):
    """Base of every row's widget: the "not in context" label and dimming."""

    def __init__(self, row: TranscriptRow, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.row = row
        self._outer = QVBoxLayout(self)
        self._outer.setContentsMargins(10, 6, 10, 6)
        self._outer.setSpacing(2)
        self.context_tag = _muted_label(f"· {NOT_IN_CONTEXT}")
        self.context_tag.setToolTip(
            "A compaction replaced this part of the conversation with a summary; the model no "
            "longer sees it, but it stays here for you."
        )
        self.context_tag.setAccessibleName("Not in the model's context")
        self.context_tag.hide()
        self._dimmed = False

    def finish(self) -> None:
        """Apply the row's state (end of every subclass's constructor)."""
        self.apply_context()
        self.sync()

    def apply_context(self) -> None:
        dim = not self.row.in_context
        self.context_tag.setVisible(dim)
        if dim == self._dimmed:
            return
        self._dimmed = dim
        if dim:
            effect = QGraphicsOpacityEffect(self)
            effect.setOpacity(DIM_OPACITY)
            self.setGraphicsEffect(effect)
        else:
            self.setGraphicsEffect(None)  # type: ignore[arg-type]

    def sync(self) -> None:
        """Show the row's current state."""

    def height_for(self, width: int) -> int:
        """The height this row needs at ``width`` pixels."""
        self.ensurePolished()
        layout = self._outer
        layout.invalidate()  # box layouts cache heights per width; the content may have grown
        if layout.hasHeightForWidth():
            return layout.totalHeightForWidth(width)
        return layout.totalSizeHint().height()


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
        self.status_label = _muted_label("")
        self.status_label.hide()
        header.addWidget(self.status_label)
        header.addStretch(1)
        self.copy_button = tool_button(
            "copy", "Copy this message as Markdown", f"Copy {who.lower()} message"
        )
        self.copy_button.clicked.connect(row.copy_message)
        header.addWidget(self.copy_button)
        self._outer.addLayout(header)

        self.body = RichTextView(self)
        self.body.setAccessibleName("Message text")
        self.body.copy_code_requested.connect(self.copy_code)
        self.body.document().setDefaultStyleSheet(renderer.style_sheet())
        from .markdown_document import MarkdownDocument  # with the first message on screen

        self.markdown = MarkdownDocument(self.body.document(), renderer)
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
        self.markdown.update(self.message.text)
        self.body.updateGeometry()

    def copy_code(self, index: int) -> None:
        blocks = self.markdown.code_blocks
        if 0 <= index < len(blocks):
            QGuiApplication.clipboard().setText(blocks[index])

    def sync(self) -> None:
        row = self.message
        if row.interrupted:
            self.status_label.setText("· interrupted")
        elif row.streaming:
            self.status_label.setText("· writing…")
        self.status_label.setVisible(row.interrupted or row.streaming)


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
        self.detail_label = _muted_label("")
        self.detail_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        header.addWidget(self.detail_label, 1)
        header.addWidget(self.context_tag)
        self.status_label = _muted_label("")
        header.addWidget(self.status_label)
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
        self.details_layout.addWidget(_muted_label("Arguments"))
        self.arguments_label = _code_label("")
        self.details_layout.addWidget(self.arguments_label)
        self.output_caption = _muted_label("Output")
        self.output_label = _code_label("")
        self.details_layout.addWidget(self.output_caption)
        self.details_layout.addWidget(self.output_label)
        self._shown: tuple[str, str | None] | None = None
        self.finish()

    def sync(self) -> None:
        super().sync()
        row = self.tool
        self.status_label.setText(row.status_text)
        if self._shown != (row.arguments, row.output):
            self._shown = (row.arguments, row.output)
            self.detail_label.setText(_one_line(row.arguments))
            self.arguments_label.setText(_clip(_pretty_arguments(row.arguments)))
            self.output_label.setText(_clip(row.output or ""))
            self.output_caption.setVisible(row.output is not None)
            self.output_label.setVisible(row.output is not None)


class ReasoningRowWidget(ExpandableRowWidget):
    """The reasoning summary's header; details are the whole text."""

    def __init__(self, row: ReasoningRow, parent: QWidget) -> None:
        super().__init__(row, "Reasoning", "info", parent)
        self.detail_label.setText(_one_line(row.text))
        label = QLabel(row.text)
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details_layout.addWidget(label)
        self.finish()


class NoticeRowWidget(RowWidget):
    """One coloured line with an icon."""

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
        self.label = QLabel(row.message)
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        line.addWidget(self.label, 1)
        line.addWidget(self.context_tag, 0, Qt.AlignmentFlag.AlignTop)
        self._outer.addLayout(line)
        self.setObjectName("noticeRow")
        c = colors()
        color = {"error": c.error, "warning": c.warning}.get(row.kind, c.muted)
        self.label.setStyleSheet(f"color: {color};")
        self._icon.setPixmap(icon(self.ICONS.get(row.kind, "info"), color).pixmap(16, 16))
        if row.kind == "error":
            self.setStyleSheet(f"QFrame#noticeRow {{ border-left: 3px solid {c.error}; }}")
        self.finish()

    def sync(self) -> None:
        row = self.notice
        self.label.setText(row.message)
        self.label.setAccessibleName(f"{row.kind.replace('_', ' ')}: {row.message}")


class CompactionRowWidget(RowWidget):
    """The marker: spinner or icon, title, Summary and Undo buttons, figures, the summary."""

    def __init__(self, row: CompactionRow, renderer: MarkdownRenderer, parent: QWidget) -> None:
        super().__init__(row, parent)
        self.marker = row
        self._renderer = renderer
        self._summary_shown: str | None = None
        self.setObjectName("compactionRow")
        self.setAccessibleName("Compaction marker")
        header = QHBoxLayout()
        header.setSpacing(6)
        self.spinner = Spinner(self)
        header.addWidget(self.spinner)
        c = colors()
        self._icon = QLabel()
        self._icon.setPixmap(icon("compact", c.accent).pixmap(16, 16))
        header.addWidget(self._icon)
        self.title_label = QLabel()
        self.title_label.setTextFormat(Qt.TextFormat.RichText)
        header.addWidget(self.title_label)
        header.addWidget(self.context_tag)
        header.addStretch(1)
        self.summary_button = tool_button(
            "chevron-right", "Show the summary that replaced the history", "Show summary",
            text="Summary",
        )
        self.summary_button.setCheckable(True)
        self.summary_button.toggled.connect(row.set_expanded)
        header.addWidget(self.summary_button)
        self.undo_button = tool_button(
            "undo", "Undo this compaction: the history returns to what it was before",
            "Undo compaction", text="Undo",
        )
        self.undo_button.clicked.connect(row.request_undo)
        header.addWidget(self.undo_button)
        self._outer.addLayout(header)

        self.figures_label = QLabel()
        self.figures_label.setTextFormat(Qt.TextFormat.PlainText)
        self.figures_label.setWordWrap(True)
        self.figures_label.setAccessibleName("Compaction figures")
        self._outer.addWidget(self.figures_label)
        self.info_label = _muted_label("")
        self.info_label.setWordWrap(True)
        self._outer.addWidget(self.info_label)
        self.summary_view = RichTextView(self)
        self.summary_view.setAccessibleName("Compaction summary")
        self.summary_view.document().setDefaultStyleSheet(renderer.style_sheet())
        self._outer.addWidget(self.summary_view)
        self.setStyleSheet(
            f"QFrame#compactionRow {{ background: {c.summary_bg}; border: 1px solid {c.border};"
            " border-radius: 8px; }"
        )
        self.finish()

    def sync(self) -> None:
        row = self.marker
        running = row.state == "running"
        if running and not self.spinner.spinning:
            self.spinner.start()
        elif not running and self.spinner.spinning:
            self.spinner.stop()
        self.spinner.setVisible(running)
        import html

        self.title_label.setText(f"<b>{html.escape(row.title)}</b>")
        self.figures_label.setText(row.figures)
        self.figures_label.setToolTip(row.figures_tip)
        self.info_label.setText(row.info)
        self.info_label.setVisible(bool(row.info))
        self.summary_button.setVisible(row.state in ("done", "undone"))
        self.undo_button.setVisible(row.undoable)
        expanded = row.expanded
        if expanded and self._summary_shown != row.summary:
            # The summary is rendered the first time it is shown.
            if row.summary:
                self.summary_view.setHtml(self._renderer.render(row.summary).html)
            else:
                text = REMOTE_SUMMARY_TEXT if row.strategy == "remote" else "No summary text."
                self.summary_view.setHtml(f"<p><i>{text}</i></p>")
            self._summary_shown = row.summary
            self.summary_view.updateGeometry()
        self.summary_view.setVisible(expanded)
        self.summary_button.setIcon(icon("chevron-down" if expanded else "chevron-right"))
        if self.summary_button.isChecked() != expanded:
            self.summary_button.setChecked(expanded)
