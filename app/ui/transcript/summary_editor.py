"""The dialog that edits a compaction's summary (a marker's Edit button opens it); loaded when
first opened."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)


class SummaryEditDialog(QDialog):
    """What the model reads in place of the history this compaction replaced, editable: Save
    passes the edit to ``save`` (the marker sends it to the core, which replaces the summary
    and says so on the marker)."""

    def __init__(
        self, summary: str, save: Callable[[str], None], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self._save = save
        self.setWindowTitle("Summary the model reads")
        self.setAccessibleName("Edit the compaction summary")
        layout = QVBoxLayout(self)
        note = QLabel(
            "The model reads this in place of the conversation this compaction replaced. "
            "Correct it or add what it missed; Undo edit on the marker puts it back."
        )
        note.setWordWrap(True)
        layout.addWidget(note)
        self.text_edit = QPlainTextEdit(self)
        self.text_edit.setAccessibleName("Summary text")
        self.text_edit.setPlainText(summary)
        layout.addWidget(self.text_edit, 1)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(640, 420)

    def accept(self) -> None:
        self._save(self.text_edit.toPlainText())
        super().accept()
