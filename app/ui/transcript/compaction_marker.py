"""The compaction marker's widget: what a compaction did, in the transcript where it happened.

Trigger, strategy, tokens before → after, duration, the summary (expandable), and Undo while
the core still allows it. ``CompactionRowWidget`` shows the state of a ``CompactionRow``
(``compaction_row``) and hands the user's clicks back to it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

from ..runtime.qt_namespace import Qt
from ..style.icons import icon
from ..style.theme import colors
from ..style.widgets import RichTextView, Spinner, tool_button
from .compaction_row import CompactionRow
from .row_widget_base import RowWidget, muted_label

if TYPE_CHECKING:
    from ..richtext.markdown import MarkdownRenderer
    from .summary_editor import SummaryEditDialog


REMOTE_SUMMARY_TEXT = "Summary held by the server (encrypted; Coco cannot show it)."


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
        self.title_label.setWordWrap(True)  # a long title wraps instead of being cut
        # The title takes all the room the buttons leave (no stretch beside it to share it
        # with): a narrow window wraps it as late as possible.
        header.addWidget(self.title_label, 1)
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
        self.retry_button = tool_button(
            "retry", "Run this compaction again", "Retry compaction", text="Retry"
        )
        self.retry_button.clicked.connect(row.request_compact)
        header.addWidget(self.retry_button)
        self._outer.addLayout(header)
        edits = QHBoxLayout()
        edits.setSpacing(6)
        self.edited_label = muted_label("· summary edited by you")
        self.edited_label.setAccessibleName("Summary edited")
        edits.addWidget(self.edited_label)
        edits.addStretch(1)
        self.edit_button = tool_button(
            "rename", "See and edit the summary the model reads in place of the old history",
            "Edit summary", text="Edit summary…",
        )
        self.edit_button.clicked.connect(self.open_editor)
        edits.addWidget(self.edit_button)
        self.undo_edit_button = tool_button(
            "undo", "Put back the summary as it was before your last edit", "Undo summary edit",
            text="Undo edit",
        )
        self.undo_edit_button.clicked.connect(row.request_undo_edit)
        edits.addWidget(self.undo_edit_button)
        self._edits = QWidget(self)
        self._edits.setLayout(edits)
        edits.setContentsMargins(0, 0, 0, 0)
        self._outer.addWidget(self._edits)
        self.editor: SummaryEditDialog | None = None

        self.figures_label = QLabel()
        self.figures_label.setTextFormat(Qt.TextFormat.PlainText)
        self.figures_label.setWordWrap(True)
        self.figures_label.setAccessibleName("Compaction figures")
        # "not in the model's context" goes beside the figures, where it leaves the title room.
        figures = QHBoxLayout()
        figures.setSpacing(6)
        figures.addWidget(self.figures_label, 1)
        figures.addWidget(self.context_tag, 0, Qt.AlignmentFlag.AlignTop)
        self._outer.addLayout(figures)
        self.info_label = muted_label("")
        self.info_label.setWordWrap(True)
        self._outer.addWidget(self.info_label)
        self.undo_note_label = muted_label("")
        self.undo_note_label.setWordWrap(True)
        self.undo_note_label.setAccessibleName("Undo availability")
        self._outer.addWidget(self.undo_note_label)
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
        import html  # its entity table is not needed before the window's first paint

        self.title_label.setText(f"<b>{html.escape(row.title)}</b>")
        self.figures_label.setText(row.figures)
        self.figures_label.setToolTip(row.figures_tip)
        # Little freed is a warning, in its colour; never a success.
        tone = colors().warning if row.freed_little and row.state == "done" else ""
        self.figures_label.setStyleSheet(f"color: {tone};" if tone else "")
        self.info_label.setText(row.info)
        self.info_label.setVisible(bool(row.info))
        self.undo_note_label.setText(row.undo_note)
        self.undo_note_label.setVisible(bool(row.undo_note))
        # A prune has no summary to show; its info line says what it did.
        self.summary_button.setVisible(
            row.state in ("done", "undone") and row.strategy != "prune"
        )
        self.undo_button.setVisible(row.undoable)
        self.retry_button.setVisible(row.retryable)
        editing = row.editable and row.state == "done"
        self.edited_label.setVisible(row.edited)
        self.edit_button.setVisible(editing)
        self.undo_edit_button.setVisible(editing and row.edit_undoable)
        self._edits.setVisible(row.edited or editing)
        expanded = row.expanded
        if expanded and self._summary_shown != row.summary + row.carried:
            # The summary (and what was carried beside it) is rendered the first time it is
            # shown.
            if row.summary:
                shown = self._renderer.render(row.summary).html
            else:
                text = REMOTE_SUMMARY_TEXT if row.strategy == "remote" else "No summary text."
                shown = f"<p><i>{text}</i></p>"
            if row.carried:
                shown += self._renderer.render(row.carried).html
            self.summary_view.setHtml(shown)
            self._summary_shown = row.summary + row.carried
            self.summary_view.updateGeometry()
        self.summary_view.setVisible(expanded)
        self.summary_button.setIcon(icon("chevron-down" if expanded else "chevron-right"))
        if self.summary_button.isChecked() != expanded:
            self.summary_button.setChecked(expanded)


    def open_editor(self) -> SummaryEditDialog:
        """Open (or bring back) the dialog editing this marker's summary."""
        if self.editor is None:
            from .summary_editor import SummaryEditDialog

            marker = self.marker
            self.editor = SummaryEditDialog(marker.summary, marker.request_edit, self.window())
            self.editor.finished.connect(self._editor_closed)
        self.editor.open()
        return self.editor

    def _editor_closed(self) -> None:
        self.editor = None
