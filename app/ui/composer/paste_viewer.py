"""The text a pasted-text chip holds (``paste_chips``), shown read-only with what can be done
with the chip: edit it as text in the box, remove it, or close. Built when first asked for."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextOption
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from .paste_chips import describe


class PastedTextDialog(QDialog):
    """The text a chip holds, read-only, with what can be done with the chip."""

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Pasted text")
        self.setAccessibleName("Pasted text")
        self.resize(720, 480)
        layout = QVBoxLayout(self)
        self.summary = QLabel(describe(text), self)
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        layout.addWidget(self.summary)
        self.view = QPlainTextEdit(self)
        self.view.setReadOnly(True)
        self.view.setAccessibleName("Pasted text")
        self.view.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.view.setWordWrapMode(QTextOption.WrapMode.WrapAnywhere)
        self.view.setPlainText(text)
        layout.addWidget(self.view, 1)
        buttons = QDialogButtonBox(self)
        self.edit_button = QPushButton("Edit as text", self)
        self.edit_button.setToolTip("Put the text itself in the message box, to edit it")
        self.remove_button = QPushButton("Remove", self)
        self.remove_button.setToolTip("Take the pasted text out of the message (Ctrl+Z undoes)")
        buttons.addButton(self.edit_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.remove_button, QDialogButtonBox.ButtonRole.DestructiveRole)
        close = buttons.addButton(QDialogButtonBox.StandardButton.Close)
        close.clicked.connect(self.reject)
        # Enter closes; removing or editing is always a choice of its own.
        for button in (self.edit_button, self.remove_button):
            button.setAutoDefault(False)
        close.setDefault(True)
        layout.addWidget(buttons)
        self.view.setFocus()
