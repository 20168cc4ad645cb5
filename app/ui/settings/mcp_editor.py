"""The dialog that adds or edits one MCP server: a local command (command, arguments, working
folder, environment) or an HTTP address (url, headers), and its timeout. Environment and header
values are secrets: shown masked (a switch shows them), and a value kept in the key store reads
as an empty box that keeps it unless something is typed. The entry is checked by the core's own
reading of ``mcpServers``, so what this dialog accepts is what the session runs."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from typing import Any, Literal

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.core.mcp_config import (
    DEFAULT_TIMEOUT,
    MAX_TIMEOUT,
    MIN_TIMEOUT,
    SECRET_PLACEHOLDER,
    parse_server,
    secret_key,
)

from ..style.theme import colors

# The keys this dialog edits; every other key of the entry (disabled, disabledTools,
# alwaysAllow, a newer client's own) is kept as it was.
CONNECTION_KEYS = ("type", "transport", "command", "args", "env", "cwd", "url", "serverUrl",
                   "headers", "timeout")
KEPT_HINT = "kept in the key store: leave empty to keep it"


class SecretPairs(QWidget):
    """Names and secret values (environment variables or HTTP headers), values masked."""

    def __init__(self, what: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._what = what
        self._rows: list[tuple[QLineEdit, QLineEdit, QPushButton, bool]] = []
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self._grid = QGridLayout()
        layout.addLayout(self._grid)
        buttons = QHBoxLayout()
        self.add_button = QPushButton(f"Add {what}")
        self.add_button.setAccessibleName(f"Add {what}")
        self.add_button.clicked.connect(lambda: self.add_row("", "", kept=False))
        self.show_values = QCheckBox("Show values")
        self.show_values.setAccessibleName(f"Show {what} values")
        self.show_values.toggled.connect(self._show)
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.show_values)
        buttons.addStretch(1)
        layout.addLayout(buttons)

    def set_pairs(self, pairs: Mapping[str, Any]) -> None:
        for name, value in pairs.items():
            text = value if isinstance(value, str) else str(value)
            kept = text == SECRET_PLACEHOLDER
            self.add_row(str(name), "" if kept else text, kept=kept)

    def add_row(self, name: str, value: str, *, kept: bool) -> None:
        key_edit = QLineEdit(name)
        key_edit.setPlaceholderText("NAME")
        key_edit.setAccessibleName(f"{self._what} name")
        value_edit = QLineEdit(value)
        value_edit.setEchoMode(self._echo())
        value_edit.setAccessibleName(f"{self._what} value")
        if kept:
            value_edit.setPlaceholderText(KEPT_HINT)
        remove = QPushButton("Remove")
        remove.setAccessibleName(f"Remove {self._what}")
        row = len(self._rows)
        self._grid.addWidget(key_edit, row, 0)
        self._grid.addWidget(value_edit, row, 1)
        self._grid.addWidget(remove, row, 2)
        entry = (key_edit, value_edit, remove, kept)
        self._rows.append(entry)
        remove.clicked.connect(lambda: self._remove(entry))

    def _remove(self, entry: tuple[QLineEdit, QLineEdit, QPushButton, bool]) -> None:
        self._rows.remove(entry)
        for widget in entry[:3]:
            widget.deleteLater()

    def _echo(self) -> QLineEdit.EchoMode:
        shown = self.show_values.isChecked()
        return QLineEdit.EchoMode.Normal if shown else QLineEdit.EchoMode.Password

    def _show(self) -> None:
        for _key, value, _remove, _kept in self._rows:
            value.setEchoMode(self._echo())

    @property
    def rows(self) -> list[tuple[QLineEdit, QLineEdit]]:
        return [(key, value) for key, value, _remove, _kept in self._rows]

    def pairs(self, kept_value: Callable[[str], str]) -> dict[str, str]:
        """The pairs typed; an untouched kept value is ``kept_value(name)``."""
        out: dict[str, str] = {}
        for key, value, _remove, kept in self._rows:
            name = key.text().strip()
            if name:
                text = value.text()
                out[name] = kept_value(name) if kept and not text else text
        return out


class McpServerEditor(QDialog):
    """Adds a server (``entry`` empty) or edits one; ``result_entry()`` after OK."""

    def __init__(
        self,
        name: str,
        entry: Mapping[str, Any],
        *,
        taken: set[str],
        secret: Callable[[str], str],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"MCP server {name}" if name else "Add an MCP server")
        self.setAccessibleName("MCP server")
        self.setMinimumWidth(520)
        self._original_name = name
        self._entry = dict(entry)
        self._taken = taken
        self._secret = secret
        form = QFormLayout(self)
        self.name = QLineEdit(name)
        self.name.setPlaceholderText("e.g. files")
        self.name.setAccessibleName("Server name")
        form.addRow("Name", self.name)
        self.kind = QComboBox()
        self.kind.addItem("Local command (stdio)", "stdio")
        self.kind.addItem("HTTP address (streamable HTTP)", "http")
        self.kind.setAccessibleName("Transport")
        form.addRow("Runs as", self.kind)
        self.command = QLineEdit(_text(entry.get("command")))
        self.command.setPlaceholderText("e.g. npx, uvx, python")
        self.command.setAccessibleName("Command")
        self.args = QLineEdit(shlex.join(str(a) for a in _list(entry.get("args"))))
        self.args.setPlaceholderText("e.g. -y @modelcontextprotocol/server-filesystem ~/notes")
        self.args.setAccessibleName("Arguments")
        self.cwd = QLineEdit(_text(entry.get("cwd")))
        self.cwd.setPlaceholderText("Coco's own when empty")
        self.cwd.setAccessibleName("Working folder")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        cwd_row = QWidget()
        cwd_layout = QHBoxLayout(cwd_row)
        cwd_layout.setContentsMargins(0, 0, 0, 0)
        cwd_layout.addWidget(self.cwd, 1)
        cwd_layout.addWidget(browse)
        self.env = SecretPairs("variable")
        self.env.set_pairs(_map(entry.get("env")))
        self.url = QLineEdit(_text(entry.get("url") or entry.get("serverUrl")))
        self.url.setPlaceholderText("https://…/mcp")
        self.url.setAccessibleName("URL")
        self.headers = SecretPairs("header")
        self.headers.set_pairs(_map(entry.get("headers")))
        self.timeout = QSpinBox()
        self.timeout.setRange(int(MIN_TIMEOUT), int(MAX_TIMEOUT))
        self.timeout.setSuffix(" s")
        timeout = entry.get("timeout", DEFAULT_TIMEOUT)
        self.timeout.setValue(int(timeout) if isinstance(timeout, int | float) else 60)
        self.timeout.setAccessibleName("Timeout")
        self.timeout.setToolTip("How long the server may take to start or answer one call")
        self._stdio_rows: list[tuple[str, QWidget]] = [("Command", self.command), ("Arguments", self.args),
                            ("Working folder", cwd_row), ("Environment", self.env)]
        self._http_rows: list[tuple[str, QWidget]] = [("URL", self.url), ("Headers", self.headers)]
        for label, field in (*self._stdio_rows, *self._http_rows):
            form.addRow(label, field)
        form.addRow("Timeout", self.timeout)
        self.problem = QLabel("")
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet(f"color: {colors().error};")
        self.problem.setAccessibleName("Server problem")
        form.addRow(self.problem)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.ok_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form.addRow(self.buttons)
        self._form = form
        http = bool(self.url.text()) and not self.command.text()
        self.kind.setCurrentIndex(1 if http else 0)
        self.kind.currentIndexChanged.connect(self._show_kind)
        for line in (self.name, self.command, self.args, self.url):
            line.textChanged.connect(self.validate)
        self._show_kind()

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Working folder", self.cwd.text())
        if folder:
            self.cwd.setText(folder)

    def _transport(self) -> Literal["stdio", "http"]:
        return "http" if self.kind.currentData() == "http" else "stdio"

    def _show_kind(self) -> None:
        http = self._transport() == "http"
        for _label, field in self._stdio_rows:
            self._form.setRowVisible(field, not http)
        for _label, field in self._http_rows:
            self._form.setRowVisible(field, http)
        self.validate()

    def validate(self) -> bool:
        """Check the entry as the core reads it; OK only when it reads."""
        problem = ""
        name = self.name.text().strip()
        if not name:
            problem = "Give the server a name."
        elif name != self._original_name and name in self._taken:
            problem = f"A server named {name!r} is already configured."
        else:
            try:
                parse_server(name, self.result_entry())
            except ValueError as exc:
                problem = str(exc)
        self.problem.setText(problem)
        self.problem.setVisible(bool(problem))
        self.ok_button.setEnabled(not problem)
        return not problem

    def accept(self) -> None:
        if self.validate():
            super().accept()

    def result_name(self) -> str:
        return self.name.text().strip()

    def result_entry(self) -> dict[str, Any]:
        """The server's entry as typed, with the keys this dialog does not edit kept."""
        entry = {k: v for k, v in self._entry.items() if k not in CONNECTION_KEYS}
        if self._transport() == "http":
            entry["url"] = self.url.text().strip()
            entry["headers"] = self.headers.pairs(lambda key: self._kept("headers", key))
        else:
            try:
                args = shlex.split(self.args.text())
            except ValueError:
                args = [self.args.text()]  # an open quote: read as one argument
            entry["command"] = self.command.text().strip()
            entry["args"] = args
            entry["env"] = self.env.pairs(lambda key: self._kept("env", key))
            if self.cwd.text().strip():
                entry["cwd"] = self.cwd.text().strip()
        entry = {k: v for k, v in entry.items() if v not in ({}, [])}
        if self.timeout.value() != int(DEFAULT_TIMEOUT):
            entry["timeout"] = self.timeout.value()
        return entry

    def _kept(self, part: Literal["env", "headers"], key: str) -> str:
        """A value left as the key store keeps it: under the same server name it stays the
        placeholder; a renamed server takes the value itself (saved again under the new name)."""
        name = self.result_name()
        if not self._original_name or name == self._original_name:
            return SECRET_PLACEHOLDER
        return self._secret(secret_key(self._original_name, part, key))


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
