"""The settings panel's compaction page: automatic compaction and its threshold, pruning, recall,
carried notes, remote and server-side compaction with their fallback, the compaction model,
the summary style and the compaction prompt (the core's default, or the user's own)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
)

from app.core.settings import (
    MAX_AUTO_COMPACT_PERCENT,
    MIN_AUTO_COMPACT_PERCENT,
    default_compact_prompt,
)

from ..style.theme import colors
from .form import SettingsForm

STYLES: tuple[tuple[str, str], ...] = (
    ("handoff", "Handoff (like Codex: a note for the next model)"),
    ("checkpoint", "Checkpoint (structured; merges earlier summaries)"),
)
BRANCH_SUMMARY: tuple[tuple[str, str], ...] = (
    ("never", "Never carry a summary of the branch left behind"),
    ("ask", "Ask each time (a checkbox in the edit box)"),
    ("always", "Always carry it (the checkbox starts checked)"),
)
NO_REMOTE_REASON = (
    "Chat Completions has no remote compaction endpoint: compaction always runs locally."
)


class CompactionPage(SettingsForm):
    """The compaction rows of the settings form."""

    def _build_compaction_page(self) -> None:
        form = self._form
        form.addRow(self._heading("Compaction"))
        self.auto_compact = QCheckBox("Compact automatically when the context is nearly full")
        self._describe(self.auto_compact, "Automatic compaction",
                       "Off: Coco never compacts on its own, not even on overflow")
        form.addRow("", self.auto_compact)
        self.threshold = QSpinBox()
        self.threshold.setRange(MIN_AUTO_COMPACT_PERCENT, MAX_AUTO_COMPACT_PERCENT)
        self.threshold.setSuffix(" %")
        self._describe(self.threshold, "Auto-compact threshold",
                       "Compact when this share of the context window is used (at most 90 %)")
        form.addRow("Threshold", self.threshold)
        self.prune = QCheckBox("Remove old tool outputs first when that makes enough room")
        self._describe(self.prune, "Prune old tool outputs",
                       "Automatic compaction replaces tool outputs older than the last two turns "
                       "with a short note, without asking the model, when that is enough")
        form.addRow("", self.prune)
        self.recall = QCheckBox("Let the model search the whole conversation (recall)")
        self._describe(self.recall, "Recall",
                       "Offer the model a tool that searches earlier messages, tool outputs and "
                       "summaries, also what compaction removed from its view")
        form.addRow("", self.recall)
        self.carry_notes = QCheckBox("Carry my facts, files and commands over every compaction")
        self._describe(self.carry_notes, "Carry notes over compactions",
                       "Each compaction keeps, in your own words, the statements that hold facts "
                       "(names, paths, numbers, dates, rules), and the files and commands of the "
                       "earlier work, in a labelled block the model reads; no model is asked")
        form.addRow("", self.carry_notes)
        self.remote = QCheckBox("Use the server's remote compaction")
        self._describe(self.remote, "Remote compaction",
                       "Let the server compact the history: the compaction trigger, then "
                       "/responses/compact; falls back as set below")
        form.addRow("", self.remote)
        self.server_side = QCheckBox("Let the server compact inside a turn when the limit is passed")
        self._describe(self.server_side, "Server-side compaction",
                       "Every request asks the server to compact during its reply once the "
                       "auto-compact limit is passed (context_management)")
        form.addRow("", self.server_side)
        self.fallback = QCheckBox("Fall back to a local summary when remote compaction fails")
        self._describe(self.fallback, "Fall back to local",
                       "On failure (404, server error, network) summarise locally instead")
        form.addRow("", self.fallback)
        self.remote_reason = QLabel("")
        self.remote_reason.setWordWrap(True)
        self.remote_reason.setStyleSheet(f"color: {colors().muted};")
        self.remote_reason.setAccessibleName("Why remote compaction is unavailable")
        form.addRow("", self.remote_reason)
        self.compaction_model = QLineEdit()
        self.compaction_model.setPlaceholderText("same as the chat model")
        self._describe(self.compaction_model, "Compaction model",
                       "A cheaper model for local summaries; empty: the chat model")
        form.addRow("Compaction model", self.compaction_model)
        self.summary_style = QComboBox()
        for key, label in STYLES:
            self.summary_style.addItem(label, key)
        self._describe(self.summary_style, "Summary style", "How summaries are written")
        form.addRow("Summary style", self.summary_style)
        self.branch_summary = QComboBox()
        for key, label in BRANCH_SUMMARY:
            self.branch_summary.addItem(label, key)
        self._describe(self.branch_summary, "Branch summary",
                       "When you edit an earlier message or switch branch, the model can get a "
                       "short summary of what was tried on the branch you leave")
        form.addRow("Branch summary", self.branch_summary)
        self.prompt = QPlainTextEdit()
        self.prompt.setMinimumHeight(120)
        self._describe(self.prompt, "Compaction prompt",
                       "The instruction the summarising model gets; edit it or reset it")
        self.reset_prompt = QPushButton("Reset to default")
        self._describe(self.reset_prompt, "Reset prompt to default",
                       "Replace the text with the built-in prompt for the summary style")
        self.reset_prompt.clicked.connect(self._reset_prompt)
        prompt_box = QVBoxLayout()
        prompt_box.addWidget(self.prompt)
        prompt_box.addWidget(self.reset_prompt, 0, Qt.AlignmentFlag.AlignLeft)
        form.addRow("Compaction prompt", prompt_box)

    def _on_style_changed(self) -> None:
        # Follow the style's default unless the user wrote their own prompt.
        defaults = {default_compact_prompt(key) for key, _ in STYLES}
        if self.prompt.toPlainText().strip() in defaults:
            self._reset_prompt()

    def _reset_prompt(self) -> None:
        self.prompt.setPlainText(default_compact_prompt(str(self.summary_style.currentData())))

