"""The transcript: one row widget per message, tool call, notice or compaction marker.

Rows live in a scroll area, so appending or streaming into the last row never re-lays-out the
rows above it. Streaming text is buffered and re-rendered at most once per frame. The view follows
the bottom unless the user scrolled up. It renders core events (``handle_event``) or a resumed
session's ``session.transcript()`` (``load_entries``) and never touches the history itself.
"""

from __future__ import annotations

import html
import json
import time
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from PySide6.QtCore import QEvent, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication, QPalette
from PySide6.QtWidgets import (
    QFrame,
    QGraphicsOpacityEffect,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.core import protocol as p
from app.core.items import is_compaction_item, is_injected_context, item_type, message_text

from .format import STAGE_TEXT, STRATEGY_TEXT, TRIGGER_TEXT, format_duration, format_tokens
from .icons import icon
from .markdown import MarkdownRenderer
from .markdown_document import MarkdownDocument
from .theme import colors, pygments_style_name
from .widgets import RichTextView, Spinner, tool_button

NOT_IN_CONTEXT = "not in the model's context"
REMOTE_SUMMARY_TEXT = "Summary held by the server (encrypted; Coco cannot show it)."
MAX_TOOL_TEXT = 20_000  # characters of tool arguments/output shown before cutting
FRAME_MS = 33
DIM_OPACITY = 0.5
EMPTY_TEXT = (
    "Ask anything to start.\n\n"
    "Type / for commands: /compact [focus] summarises the conversation to free context, "
    "/undo-compact puts it back. The gauge in the status bar shows how full the context is."
)


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
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _data_text(data: Mapping[str, Any]) -> str:
    """The text a TurnItem's data carries, whichever key the core used."""
    for key in ("text", "message", "content"):
        value = data.get(key)
        if isinstance(value, str):
            return value
    item = data.get("item")
    if isinstance(item, dict):
        return message_text(item)
    return ""


def _muted_label(text: str, parent: QWidget | None = None) -> QLabel:
    label = QLabel(text, parent)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setStyleSheet(f"color: {colors().muted};")
    return label


# ---------------------------------------------------------------------------------------- rows


class TranscriptRow(QFrame):
    """Base of every row: knows whether it is still in the model's context and dims if not."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.in_context = True
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

    def set_in_context(self, in_context: bool) -> None:
        """Dim the row (and show the label) when the model no longer sees it."""
        if in_context == self.in_context:
            return
        self.in_context = in_context
        self.context_tag.setVisible(not in_context)
        if in_context:
            self.setGraphicsEffect(None)  # type: ignore[arg-type]
        else:
            effect = QGraphicsOpacityEffect(self)
            effect.setOpacity(DIM_OPACITY)
            self.setGraphicsEffect(effect)

    def restyle(self, renderer: MarkdownRenderer) -> None:
        """Re-apply palette-derived colours (the system switched light/dark)."""
        self.context_tag.setStyleSheet(f"color: {colors().muted};")


class MessageRow(TranscriptRow):
    """A user or assistant message rendered as Markdown, with a copy button.

    While a reply streams, deltas are only collected; :meth:`render_markdown` (once per frame)
    re-renders just the part of the Markdown that is still open (see ``MarkdownDocument``).
    """

    def __init__(
        self,
        role: str,
        renderer: MarkdownRenderer,
        text: str = "",
        item_id: str = "",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.role = role
        self.item_id = item_id
        self._text = text
        self._pending: list[str] = []  # deltas not yet joined into _text
        self.streaming = False
        self.interrupted = False
        self._renderer = renderer
        self.setObjectName("userRow" if role == "user" else "assistantRow")

        header = QHBoxLayout()
        header.setSpacing(6)
        who = "You" if role == "user" else "Coco"
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
        self.copy_button.clicked.connect(self.copy_message)
        header.addWidget(self.copy_button)
        self._outer.addLayout(header)

        self.body = RichTextView(self)
        self.body.setAccessibleName("Message text")
        self.body.copy_code_requested.connect(self.copy_code)
        self._markdown = MarkdownDocument(self.body.document(), renderer)
        self._outer.addWidget(self.body)
        self.restyle(renderer)

    @property
    def text(self) -> str:
        """The whole message as received so far (Markdown source)."""
        if self._pending:
            self._text += "".join(self._pending)
            self._pending.clear()
        return self._text

    @property
    def code_blocks(self) -> list[str]:
        return self._markdown.code_blocks

    def set_text(self, text: str) -> None:
        self._pending.clear()
        self._text = text

    def append(self, delta: str) -> None:
        # Joined on the next read: appending to a long string per delta would copy it each time.
        self._pending.append(delta)

    @property
    def dirty(self) -> bool:
        return bool(self._pending) or self._markdown.text != self._text

    def render_markdown(self) -> None:
        """Bring the rendered Markdown up to date with the text (only its open end re-renders
        when the text grew)."""
        if self.dirty:
            self._markdown.update(self.text)

    def set_interrupted(self) -> None:
        self.interrupted = True
        self.status_label.setText("· interrupted")
        self.status_label.show()

    def set_streaming(self, streaming: bool) -> None:
        self.streaming = streaming
        if streaming:
            self.status_label.setText("· writing…")
            self.status_label.show()
        elif not self.interrupted:
            self.status_label.hide()

    def copy_message(self) -> None:
        QGuiApplication.clipboard().setText(self.text)
        _flash_copied(self.copy_button)

    def copy_code(self, index: int) -> None:
        blocks = self._markdown.code_blocks
        if 0 <= index < len(blocks):
            QGuiApplication.clipboard().setText(blocks[index])

    def restyle(self, renderer: MarkdownRenderer) -> None:
        super().restyle(renderer)
        self._renderer = renderer
        c = colors()
        self.body.document().setDefaultStyleSheet(renderer.style_sheet())
        if self.role == "user":
            self.setStyleSheet(
                f"QFrame#userRow {{ background: {c.user_bubble}; border-radius: 8px; }}"
            )
        self._markdown.set_renderer(renderer)
        self.render_markdown()


def _flash_copied(button: QToolButton) -> None:
    tip = button.toolTip()
    button.setIcon(icon("check"))
    button.setToolTip("Copied")
    # The button is the timer's context: a row deleted meanwhile cancels the reset.
    def reset() -> None:
        button.setIcon(icon("copy"))
        button.setToolTip(tip)

    QTimer.singleShot(1200, button, reset)


class ExpandableRow(TranscriptRow):
    """A one-line header that expands to details (tool calls, reasoning)."""

    def __init__(self, title: str, icon_name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        header = QHBoxLayout()
        header.setSpacing(6)
        self.toggle = QToolButton(self)
        self.toggle.setAutoRaise(True)
        self.toggle.setIcon(icon("chevron-right"))
        self.toggle.setIconSize(QSize(14, 14))
        self.toggle.setCheckable(True)
        self.toggle.setToolTip("Show details")
        self.toggle.setAccessibleName(f"Show details of {title}")
        self.toggle.toggled.connect(self.set_expanded)
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

    @property
    def expanded(self) -> bool:
        return self.details.isVisible()

    def set_expanded(self, expanded: bool) -> None:
        self.details.setVisible(expanded)
        self.toggle.setIcon(icon("chevron-down" if expanded else "chevron-right"))
        self.toggle.setToolTip("Hide details" if expanded else "Show details")
        if self.toggle.isChecked() != expanded:
            self.toggle.setChecked(expanded)

    def mousePressEvent(self, event: Any) -> None:
        # A click anywhere on the header line toggles, not only on the chevron.
        if event.position().y() <= self.toggle.geometry().bottom() + 4:
            self.set_expanded(not self.expanded)
        super().mousePressEvent(event)


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


class ToolRow(ExpandableRow):
    """A tool call: name and a short argument line; expands to arguments and output."""

    def __init__(self, call_id: str, name: str, arguments: str, parent: QWidget | None = None):
        super().__init__(f"Tool · {name}", "tool", parent)
        self.call_id = call_id
        self.name = name
        self.arguments = arguments
        self.output: str | None = None
        self.setAccessibleName(f"Tool call {name}")
        self.detail_label.setText(_one_line(arguments))
        self.status_label.setText("running…")
        self.details_layout.addWidget(_muted_label("Arguments"))
        self.arguments_label = _code_label(_clip(_pretty_arguments(arguments)))
        self.details_layout.addWidget(self.arguments_label)
        self.output_caption = _muted_label("Output")
        self.output_label = _code_label("")
        self.output_caption.hide()
        self.output_label.hide()
        self.details_layout.addWidget(self.output_caption)
        self.details_layout.addWidget(self.output_label)

    def set_arguments(self, arguments: str) -> None:
        self.arguments = arguments
        self.detail_label.setText(_one_line(arguments))
        self.arguments_label.setText(_clip(_pretty_arguments(arguments)))

    def set_output(self, output: str) -> None:
        self.output = output
        self.output_label.setText(_clip(output))
        self.output_caption.show()
        self.output_label.show()
        lines = output.count("\n") + 1 if output else 0
        self.status_label.setText(f"done · {lines} line{'s' if lines != 1 else ''}")

    def set_stopped(self) -> None:
        if self.output is None:
            self.status_label.setText("stopped")


class ReasoningRow(ExpandableRow):
    """The model's reasoning summary, collapsed by default."""

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__("Reasoning", "info", parent)
        self.detail_label.setText(_one_line(text))
        label = QLabel(text)
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details_layout.addWidget(label)


class NoticeRow(TranscriptRow):
    """An inline error, warning, background or reconnect line, in its own colour."""

    ICONS: ClassVar[dict[str, str]] = {
        "error": "error", "warning": "warning", "background": "info", "stream_error": "info",
    }

    def __init__(self, kind: str, message: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.kind = kind
        self.message = message
        line = QHBoxLayout()
        line.setSpacing(6)
        self._icon = QLabel()
        line.addWidget(self._icon, 0, Qt.AlignmentFlag.AlignTop)
        self.label = QLabel(message)
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.label.setAccessibleName(f"{kind.replace('_', ' ')}: {message}")
        line.addWidget(self.label, 1)
        line.addWidget(self.context_tag, 0, Qt.AlignmentFlag.AlignTop)
        self._outer.addLayout(line)
        self.setObjectName("noticeRow")
        self._apply_colors()

    def set_message(self, message: str) -> None:
        self.message = message
        self.label.setText(message)

    def _apply_colors(self) -> None:
        c = colors()
        color = {"error": c.error, "warning": c.warning}.get(self.kind, c.muted)
        self.label.setStyleSheet(f"color: {color};")
        self._icon.setPixmap(icon(self.ICONS.get(self.kind, "info"), color).pixmap(16, 16))
        if self.kind == "error":
            self.setStyleSheet(
                f"QFrame#noticeRow {{ border-left: 3px solid {c.error}; }}"
            )

    def restyle(self, renderer: MarkdownRenderer) -> None:
        super().restyle(renderer)
        self._apply_colors()


class CompactionRow(TranscriptRow):
    """The compaction marker: trigger, strategy, tokens before → after, duration, the summary
    (expandable), and Undo while the core still allows it."""

    undo_requested = Signal(str)

    def __init__(
        self, item_id: str, renderer: MarkdownRenderer, automatic: bool = False,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.item_id = item_id
        self.state = "running"  # running | done | undone | stopped | failed
        self.automatic = automatic
        self.undoable = False
        self.summary = ""
        self.strategy = ""
        self.started = time.monotonic()
        # Rows this marker dimmed, with their state before, so an undo can restore them.
        self.dimmed: list[tuple[TranscriptRow, bool]] = []
        self._renderer = renderer
        self.setObjectName("compactionRow")
        self.setAccessibleName("Compaction marker")

        header = QHBoxLayout()
        header.setSpacing(6)
        self.spinner = Spinner(self)
        header.addWidget(self.spinner)
        self._icon = QLabel()
        header.addWidget(self._icon)
        self.title_label = QLabel()
        self.title_label.setTextFormat(Qt.TextFormat.RichText)
        header.addWidget(self.title_label)
        header.addStretch(1)
        self.summary_button = tool_button(
            "chevron-right", "Show the summary that replaced the history", "Show summary",
            text="Summary",
        )
        self.summary_button.setCheckable(True)
        self.summary_button.toggled.connect(self.set_expanded)
        self.summary_button.hide()
        header.addWidget(self.summary_button)
        self.undo_button = tool_button(
            "undo", "Undo this compaction: the history returns to what it was before",
            "Undo compaction", text="Undo",
        )
        self.undo_button.clicked.connect(lambda: self.undo_requested.emit(self.item_id))
        self.undo_button.hide()
        header.addWidget(self.undo_button)
        self._outer.addLayout(header)

        self.figures_label = QLabel()
        self.figures_label.setTextFormat(Qt.TextFormat.PlainText)
        self.figures_label.setWordWrap(True)
        self.figures_label.setAccessibleName("Compaction figures")
        self._outer.addWidget(self.figures_label)
        self.info_label = _muted_label("")
        self.info_label.setWordWrap(True)
        self.info_label.hide()
        self._outer.addWidget(self.info_label)
        self.summary_view = RichTextView(self)
        self.summary_view.setAccessibleName("Compaction summary")
        self.summary_view.hide()
        self._outer.addWidget(self.summary_view)
        self.restyle(renderer)
        self.spinner.start()
        self._set_title("Compacting…" if not automatic else "Compacting automatically…")
        self.figures_label.setText("Starting…")

    # -- state ------------------------------------------------------------------------------

    def _set_title(self, text: str) -> None:
        self.title_label.setText(f"<b>{html.escape(text)}</b>")

    def set_stage(self, text: str) -> None:
        """What the running compaction is doing (from the progress events)."""
        if self.state == "running":
            self.figures_label.setText(text)

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
        self.spinner.stop()
        self.state = "done"
        self.summary = summary
        self.strategy = strategy
        self.automatic = trigger != "manual"
        trigger_text = TRIGGER_TEXT.get(trigger, trigger)
        strategy_text = STRATEGY_TEXT.get(strategy, strategy)
        self._set_title(f"Context compacted · {trigger_text} · {strategy_text}")
        figures = (
            f"{format_tokens(tokens_before)} → {format_tokens(tokens_after)} tokens · "
            f"{format_duration(duration_ms)}"
        )
        self.figures_label.setText(figures)
        self.figures_label.setToolTip(
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
        self.info_label.setText(" · ".join(info))
        self.info_label.setVisible(bool(info))
        if summary:
            self.summary_view.document().setDefaultStyleSheet(self._renderer.style_sheet())
            self.summary_view.setHtml(self._renderer.render(summary).html)
        else:
            text = REMOTE_SUMMARY_TEXT if strategy == "remote" else "No summary text."
            self.summary_view.setHtml(f"<p><i>{text}</i></p>")
        self.summary_button.show()
        self.set_undoable(undoable)
        if undone:
            self.mark_undone()

    def set_undoable(self, undoable: bool) -> None:
        self.undoable = undoable and self.state == "done"
        self.undo_button.setVisible(self.undoable)

    def mark_undone(self) -> None:
        self.state = "undone"
        self.set_undoable(False)
        self._set_title("Compaction undone · the history is back to what it was before")
        for row, previous in self.dimmed:
            row.set_in_context(previous)
        self.dimmed = []

    def mark_stopped(self, reason: str) -> None:
        """A compaction that ended without compacting (cancelled or failed)."""
        self.spinner.stop()
        self.state = "stopped"
        self._set_title(reason)
        self.figures_label.setText("The history is exactly as it was before.")

    def set_expanded(self, expanded: bool) -> None:
        self.summary_view.setVisible(expanded)
        self.summary_button.setIcon(icon("chevron-down" if expanded else "chevron-right"))
        if self.summary_button.isChecked() != expanded:
            self.summary_button.setChecked(expanded)

    @property
    def expanded(self) -> bool:
        return self.summary_view.isVisible()

    def restyle(self, renderer: MarkdownRenderer) -> None:
        super().restyle(renderer)
        self._renderer = renderer
        c = colors()
        self.setStyleSheet(
            f"QFrame#compactionRow {{ background: {c.summary_bg}; border: 1px solid {c.border};"
            " border-radius: 8px; }"
        )
        self._icon.setPixmap(icon("compact", c.accent).pixmap(16, 16))
        if self.summary:
            self.summary_view.document().setDefaultStyleSheet(renderer.style_sheet())
            self.summary_view.setHtml(renderer.render(self.summary).html)


# ---------------------------------------------------------------------------------------- view


class TranscriptView(QScrollArea):
    """The scrolling list of rows; feed it core events with ``handle_event``."""

    undo_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setAccessibleName("Transcript")
        self.setToolTip("")
        self.renderer = MarkdownRenderer(colors(), pygments_style_name())
        self._container = QWidget()
        self._container.setObjectName("transcriptContainer")
        # Messages sit on the text background (white / near-black), not the window grey.
        self._container.setBackgroundRole(QPalette.ColorRole.Base)
        self._container.setAutoFillBackground(True)
        self.viewport().setBackgroundRole(QPalette.ColorRole.Base)
        self._layout = QVBoxLayout(self._container)
        self._layout.setContentsMargins(12, 12, 12, 12)
        self._layout.setSpacing(8)
        self.empty_label = QLabel(EMPTY_TEXT, self._container)
        self.empty_label.setWordWrap(True)
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setStyleSheet(f"color: {colors().muted}; padding: 40px;")
        self._layout.addWidget(self.empty_label)
        self._layout.addStretch(1)
        self.setWidget(self._container)

        self.rows: list[TranscriptRow] = []
        self._messages: dict[str, MessageRow] = {}
        self._tools: dict[str, ToolRow] = {}
        self._compactions: dict[str, CompactionRow] = {}
        self._streaming: MessageRow | None = None
        self._reconnect: NoticeRow | None = None
        self._turn_id: str | None = None
        self.follow_bottom = True

        # Streaming text is re-rendered on this timer, never per delta.
        self._flush_timer = QTimer(self)
        self._flush_timer.setInterval(FRAME_MS)
        self._flush_timer.timeout.connect(self.flush)
        self.render_count = 0  # renders of streaming rows, for tests and diagnostics

        bar = self.verticalScrollBar()
        bar.rangeChanged.connect(self._on_range_changed)
        bar.valueChanged.connect(self._on_scrolled)

    # -- scrolling --------------------------------------------------------------------------

    def _on_range_changed(self, _minimum: int, maximum: int) -> None:
        if self.follow_bottom:
            self.verticalScrollBar().setValue(maximum)

    def _on_scrolled(self, value: int) -> None:
        self.follow_bottom = value >= self.verticalScrollBar().maximum() - 8

    def scroll_to_bottom(self) -> None:
        """Jump to the newest row and follow it again (the user just sent something)."""
        self.follow_bottom = True
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())

    # -- rows -------------------------------------------------------------------------------

    def _add(self, row: TranscriptRow) -> TranscriptRow:
        self.empty_label.hide()
        self._layout.insertWidget(self._layout.count() - 1, row)
        self.rows.append(row)
        return row

    def _remove(self, row: TranscriptRow) -> None:
        if row in self.rows:
            self.rows.remove(row)
        self._layout.removeWidget(row)
        row.deleteLater()

    def clear(self) -> None:
        """Remove every row (another session is being shown)."""
        self._flush_timer.stop()
        for row in list(self.rows):
            self._remove(row)
        self._messages.clear()
        self._tools.clear()
        self._compactions.clear()
        self._streaming = None
        self._reconnect = None
        self._turn_id = None
        self.follow_bottom = True
        self.empty_label.show()

    def message_rows(self, role: str | None = None) -> list[MessageRow]:
        return [r for r in self.rows if isinstance(r, MessageRow) and (role is None or r.role == role)]

    def compaction_rows(self) -> list[CompactionRow]:
        return [r for r in self.rows if isinstance(r, CompactionRow)]

    def notice_rows(self, kind: str | None = None) -> list[NoticeRow]:
        return [r for r in self.rows if isinstance(r, NoticeRow) and (kind is None or r.kind == kind)]

    def tool_rows(self) -> list[ToolRow]:
        return [r for r in self.rows if isinstance(r, ToolRow)]

    def add_message(self, role: str, text: str, item_id: str = "") -> MessageRow:
        if item_id and item_id in self._messages:
            row = self._messages[item_id]
            row.set_text(text)
            row.render_markdown()
            return row
        row = MessageRow(role, self.renderer, text, item_id)
        self._add(row)
        if item_id:
            self._messages[item_id] = row
        return row

    def add_notice(self, kind: str, message: str) -> NoticeRow:
        row = NoticeRow(kind, message)
        self._add(row)
        return row

    def add_tool_call(self, call_id: str, name: str, arguments: str) -> ToolRow:
        if call_id and call_id in self._tools:
            row = self._tools[call_id]
            row.set_arguments(arguments)
            return row
        row = ToolRow(call_id, name, arguments)
        self._add(row)
        if call_id:
            self._tools[call_id] = row
        return row

    def set_tool_output(self, call_id: str, output: str) -> None:
        row = self._tools.get(call_id)
        if row is None:
            row = self.add_tool_call(call_id, "tool", "")
        row.set_output(output)

    def begin_compaction(self, item_id: str, automatic: bool) -> CompactionRow:
        row = self._compactions.get(item_id)
        if row is None:
            row = CompactionRow(item_id, self.renderer, automatic)
            row.undo_requested.connect(self.undo_requested)
            self._add(row)
            self._compactions[item_id] = row
        return row

    def complete_compaction(self, item_id: str, *, dim: bool = True, **figures: Any) -> None:
        """Fill in a marker's figures and dim every row above it."""
        row = self.begin_compaction(item_id, figures.get("trigger") != "manual")
        for other in self._compactions.values():
            if other is not row:
                other.set_undoable(False)
        row.complete(**figures)
        if dim and row.state == "done":
            index = self.rows.index(row)
            row.dimmed = [(r, r.in_context) for r in self.rows[:index]]
            for above in self.rows[:index]:
                above.set_in_context(False)

    def _drop_running_compactions(self, reason: str) -> None:
        for row in self._compactions.values():
            if row.state == "running":
                row.mark_stopped(reason)

    # -- streaming --------------------------------------------------------------------------

    def _stream_row(self, item_id: str) -> MessageRow:
        row = self._messages.get(item_id)
        if row is None:
            row = self.add_message("assistant", "", item_id)
        if not row.streaming:
            row.set_streaming(True)
        self._streaming = row
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
        started = time.perf_counter()
        row.render_markdown()
        self.render_count += 1
        # A very long reply renders slowly: stretch the interval so typing stays responsive.
        spent_ms = (time.perf_counter() - started) * 1000
        self._flush_timer.setInterval(int(min(250, max(FRAME_MS, spent_ms * 3))))

    def _finish_stream(self, interrupted: bool = False) -> None:
        row = self._streaming
        self._flush_timer.stop()
        if row is None:
            return
        row.render_markdown()
        if interrupted:
            row.set_interrupted()
        row.set_streaming(False)
        self._streaming = None

    # -- events -----------------------------------------------------------------------------

    def handle_event(self, event: Any) -> None:
        """Render one core event (those that concern the transcript; others are ignored)."""
        kind = getattr(event, "type", "")
        handler = getattr(self, f"_on_{kind}", None)
        if handler is not None:
            handler(event)

    def _on_turn_started(self, event: p.TurnStarted) -> None:
        self._turn_id = event.turn_id
        self._reconnect = None
        if event.kind != "undo":
            # Undo is only possible until the next turn starts.
            for row in self._compactions.values():
                row.set_undoable(False)

    def _on_item_started(self, event: p.ItemStarted) -> None:
        item = event.item
        if item.kind == "context_compaction":
            automatic = bool(item.data.get("trigger", "manual") != "manual") or (
                item.data.get("automatic") is True
            )
            self.begin_compaction(item.id, automatic)
        elif item.kind == "user_message":
            self.add_message("user", _data_text(item.data), item.id)
        elif item.kind == "agent_message":
            self._stream_row(item.id)
        elif item.kind == "function_call":
            self._add_function_call(item)

    def _on_item_completed(self, event: p.ItemCompleted) -> None:
        item = event.item
        data = item.data
        if item.kind == "user_message":
            self.add_message("user", _data_text(data), item.id)
        elif item.kind == "agent_message":
            text = _data_text(data)
            row = self._messages.get(item.id)
            if row is None:
                row = self.add_message("assistant", text, item.id)
            elif text:
                row.set_text(text)
            if row is self._streaming:
                self._finish_stream()
            else:
                row.render_markdown()
        elif item.kind == "function_call":
            self._add_function_call(item)
        elif item.kind == "function_call_output":
            call_id = str(data.get("call_id", item.id))
            output = data.get("output", "")
            self.set_tool_output(call_id, output if isinstance(output, str) else json.dumps(output))
        elif item.kind == "reasoning":
            text = _data_text(data) or str(data.get("summary", "") or "")
            if text.strip():
                self._add(ReasoningRow(text))

    def _add_function_call(self, item: p.TurnItem) -> None:
        data = item.data
        self.add_tool_call(
            str(data.get("call_id", item.id)),
            str(data.get("name", "tool")),
            str(data.get("arguments", "")),
        )

    def _on_agent_message_delta(self, event: p.AgentMessageDelta) -> None:
        self.append_delta(event.item_id, event.delta)

    def _on_agent_message(self, event: p.AgentMessage) -> None:
        row = self._messages.get(event.item_id)
        if row is None:
            self.add_message("assistant", event.text, event.item_id)
            return
        row.set_text(event.text)
        if row is self._streaming:
            self._finish_stream()
        else:
            row.render_markdown()

    def _on_context_compacted(self, event: p.ContextCompacted) -> None:
        self.complete_compaction(
            event.item_id,
            trigger=event.trigger,
            strategy=event.strategy,
            tokens_before=event.tokens_before,
            tokens_after=event.tokens_after,
            duration_ms=event.duration_ms,
            summary=event.summary,
            kept_user_messages=event.kept_user_messages,
            kept_truncated=event.kept_truncated,
            trimmed_items=event.trimmed_items,
            focus=event.focus,
            style=event.style,
            undoable=event.undoable,
        )

    def _on_compaction_progress(self, event: p.CompactionProgress) -> None:
        if event.stage == "summary_delta":
            return
        text = event.message or STAGE_TEXT.get(event.stage, "")
        for row in self._compactions.values():
            row.set_stage(text)

    def _on_compaction_undone(self, event: p.CompactionUndone) -> None:
        row = self._compactions.get(event.item_id)
        if row is not None:
            row.mark_undone()

    def _on_background(self, event: p.Background) -> None:
        self.add_notice("background", event.message)

    def _on_warning(self, event: p.Warning) -> None:
        self.add_notice("warning", event.message)

    def _on_error(self, event: p.Error) -> None:
        self.add_notice("error", event.message)

    def _on_stream_error(self, event: p.StreamError) -> None:
        # One line per turn that updates in place: "Reconnecting... 2/5".
        count = f"{event.attempt}/{event.max_attempts}"
        text = event.message if count in event.message else f"{event.message} ({count})"
        if self._reconnect is not None and self._reconnect in self.rows:
            self._reconnect.set_message(text)
        else:
            self._reconnect = self.add_notice("stream_error", text)

    def _on_turn_complete(self, event: p.TurnComplete) -> None:
        aborted = event.status == "aborted"
        self._finish_stream(interrupted=aborted)
        if aborted:
            for row in self.tool_rows():
                row.set_stopped()
            self._drop_running_compactions("Compaction stopped · nothing changed")
        else:
            self._drop_running_compactions("Compaction failed · nothing changed")
        self._reconnect = None

    # -- resume -----------------------------------------------------------------------------

    def load_entries(self, entries: Iterable[Mapping[str, Any]]) -> None:
        """Render a resumed session from ``session.transcript()`` entries."""
        self.clear()
        for entry in entries:
            kind = entry.get("kind")
            row: TranscriptRow | None = None
            if kind == "item":
                row = self._row_for_item(entry.get("item") or {}, bool(entry.get("interrupted")))
            elif kind == "compaction":
                item_id = str(entry.get("item_id", f"compaction-{len(self.rows)}"))
                row = self.begin_compaction(item_id, entry.get("trigger") != "manual")
                figures = {
                    key: entry[key]
                    for key in (
                        "trigger", "strategy", "tokens_before", "tokens_after", "duration_ms",
                        "summary", "kept_user_messages", "kept_truncated", "trimmed_items",
                        "focus", "style", "undoable",
                    )
                    if key in entry and entry[key] is not None
                }
                for other in self._compactions.values():
                    other.set_undoable(False)
                assert isinstance(row, CompactionRow)
                row.complete(**figures, undone=bool(entry.get("undone")))
            elif kind in ("error", "warning", "background"):
                row = self.add_notice(str(kind), str(entry.get("message", "")))
            if row is not None and entry.get("in_context") is False:
                row.set_in_context(False)
        # The latest compaction's marker is the boundary itself, not history the model lost.
        done = [r for r in self.compaction_rows() if r.state == "done"]
        if done:
            done[-1].set_in_context(True)
        self.scroll_to_bottom()

    def _row_for_item(self, item: Mapping[str, Any], interrupted: bool) -> TranscriptRow | None:
        data = dict(item)
        kind = item_type(data)
        if kind == "message":
            if is_injected_context(data) or data.get("role") not in ("user", "assistant"):
                return None
            row = self.add_message(str(data["role"]), message_text(data), str(data.get("id", "")))
            if interrupted:
                row.set_interrupted()
            return row
        if kind == "function_call":
            return self.add_tool_call(
                str(data.get("call_id", "")), str(data.get("name", "tool")),
                str(data.get("arguments", "")),
            )
        if kind == "function_call_output":
            output = data.get("output", "")
            self.set_tool_output(
                str(data.get("call_id", "")),
                output if isinstance(output, str) else json.dumps(output),
            )
            return None
        if kind == "reasoning":
            summary = data.get("summary") or []
            text = "".join(str(s.get("text", "")) for s in summary if isinstance(s, dict))
            return self._add(ReasoningRow(text)) if text.strip() else None
        if is_compaction_item(data):
            return None
        return None

    # -- palette ----------------------------------------------------------------------------

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self.renderer = MarkdownRenderer(colors(), pygments_style_name())
            for row in self.rows:
                row.restyle(self.renderer)
