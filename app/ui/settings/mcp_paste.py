"""The dialog a copied MCP config is pasted into (Claude Desktop's or Cursor's
``{"mcpServers": …}``, VS Code's ``{"servers": …}`` or a bare object of servers): Import adds
its servers to the settings page, or says in words why it could not, and stays open to fix."""

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

from ..style.theme import colors

EXAMPLE = '{"mcpServers": {"files": {"command": "npx", "args": ["-y", "…"]}}}'


class McpPasteDialog(QDialog):
    """``on_import(text)`` adds the servers and returns why it could not ("" when it did)."""

    def __init__(self, on_import: Callable[[str], str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Paste an MCP config")
        self.setAccessibleName("Paste an MCP config")
        self.resize(560, 380)
        self._on_import = on_import
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Paste the JSON of an mcp.json or Claude Desktop config:"))
        self.text = QPlainTextEdit()
        self.text.setPlaceholderText(EXAMPLE)
        self.text.setAccessibleName("MCP config text")
        layout.addWidget(self.text, 1)
        self.problem = QLabel("")
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet(f"color: {colors().error};")
        self.problem.setAccessibleName("Import problem")
        self.problem.hide()
        layout.addWidget(self.problem)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.import_button = self.buttons.addButton(
            "Import", QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.import_button.setAccessibleName("Import")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.text.textChanged.connect(
            lambda: self.import_button.setEnabled(bool(self.text.toPlainText().strip()))
        )
        self.import_button.setEnabled(False)
        layout.addWidget(self.buttons)

    def accept(self) -> None:
        problem = self._on_import(self.text.toPlainText())
        if problem:
            self.problem.setText(problem)
            self.problem.show()
            return
        super().accept()
