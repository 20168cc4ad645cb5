"""The settings panel's MCP page: each configured server with its live state (from the core's
``mcp_servers`` events: starting, ready with its tools, failed with the last lines of its
stderr), servers and single tools turned on and off, the tools always allowed and their
revocation, a server added, edited or removed, and an existing ``mcp.json`` / Claude Desktop
config imported from a file or a paste.

The page edits a copy of the ``mcpServers`` object with the core's own edits
(``app.core.mcp_config``); Apply or Save hands it to the window with the other settings, and
the open session starts, restarts or stops just the servers that changed."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
)

from app.core.mcp_config import (
    McpConfigError,
    import_config,
    parse_server,
    with_always_allowed,
    with_server_enabled,
    with_tool_enabled,
)

from ..style.theme import colors
from .form import SettingsForm
from .mcp_editor import McpServerEditor
from .mcp_paste import McpPasteDialog

if TYPE_CHECKING:
    from collections.abc import Callable

    from app.core.protocol import McpServerInfo

ROLE = Qt.ItemDataRole.UserRole  # an item's (server, tool or "")
STATE_WORDS = {"starting": "starting…", "stopped": "stopped", "disabled": "off"}


class McpPage(SettingsForm):
    """The MCP rows of the settings form."""

    _mcp_secret: Callable[[str], str]

    def _build_mcp_page(self, servers: dict[str, Any], states: list[McpServerInfo]) -> None:
        form = self._form
        form.addRow(self._heading("MCP servers"))
        self.mcp_servers = dict(servers)  # the edited copy of mcpServers
        self._mcp_saved = dict(servers)  # as last applied: what differs says "on Apply"
        self._mcp_states: dict[str, McpServerInfo] = {s.name: s for s in states}
        self.mcp_tree = QTreeWidget()
        self.mcp_tree.setColumnCount(2)
        self.mcp_tree.setHeaderLabels(["Server / tool", "State"])
        self.mcp_tree.setMinimumHeight(180)
        self.mcp_tree.setColumnWidth(0, 240)
        self._describe(self.mcp_tree, "MCP servers",
                       "Tick a server or a tool to offer it to the model; select one for details")
        self.mcp_tree.itemChanged.connect(self._mcp_item_changed)
        self.mcp_tree.currentItemChanged.connect(lambda *_a: self._mcp_selected())
        form.addRow(self.mcp_tree)
        self.mcp_details = QLabel("")
        self.mcp_details.setWordWrap(True)
        self.mcp_details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.mcp_details.setAccessibleName("MCP server details")
        form.addRow(self.mcp_details)
        row = QHBoxLayout()
        self.mcp_add = QPushButton("Add…")
        self.mcp_edit = QPushButton("Edit…")
        self.mcp_remove = QPushButton("Remove")
        self.mcp_revoke = QPushButton("Ask every time")
        self.mcp_import_file = QPushButton("Import file…")
        self.mcp_import_paste = QPushButton("Paste config…")
        for button, name, tip in (
            (self.mcp_add, "Add MCP server", "A local command or an HTTP address"),
            (self.mcp_edit, "Edit MCP server", "Change the selected server"),
            (self.mcp_remove, "Remove MCP server", "Remove the selected server"),
            (self.mcp_revoke, "Ask every time",
             "The selected tool asks before each call again (no longer always allowed)"),
            (self.mcp_import_file, "Import MCP config file",
             "Add the servers of an mcp.json or Claude Desktop config file"),
            (self.mcp_import_paste, "Paste MCP config",
             "Add the servers of a config pasted as text"),
        ):
            self._describe(button, name, tip)
            row.addWidget(button)
        row.addStretch(1)
        self.mcp_add.clicked.connect(lambda: self._mcp_open_editor(""))
        self.mcp_edit.clicked.connect(lambda: self._mcp_open_editor(self._mcp_current()[0]))
        self.mcp_remove.clicked.connect(self._mcp_remove_selected)
        self.mcp_revoke.clicked.connect(self._mcp_revoke_selected)
        self.mcp_import_file.clicked.connect(self._mcp_import_from_file)
        self.mcp_import_paste.clicked.connect(self._mcp_import_from_paste)
        form.addRow(row)
        self.mcp_message = QLabel("")
        self.mcp_message.setWordWrap(True)
        self.mcp_message.setAccessibleName("MCP message")
        form.addRow(self.mcp_message)
        self.mcp_read_only = QCheckBox("Run tools that declare themselves read-only without asking")
        self._describe(self.mcp_read_only, "Allow read-only MCP tools",
                       "Other tools ask before each call until you allow them always")
        form.addRow("", self.mcp_read_only)
        self._mcp_fill()

    # -- what the core says -----------------------------------------------------------------

    def show_mcp_states(self, states: list[McpServerInfo]) -> None:
        """The servers' live states, from the core's ``mcp_servers`` event."""
        self._mcp_states = {s.name: s for s in states}
        self._mcp_fill()

    def mcp_applied(self, servers: dict[str, Any]) -> None:
        """``servers`` were saved and handed to the session (Apply, or an approval card's
        Always allow): they are what the page edits from now on."""
        self.mcp_servers = dict(servers)
        self._mcp_saved = dict(servers)
        self._mcp_fill()

    def note_always_allowed(self, server: str, tool: str) -> None:
        """The approval card's Always allow, saved by the window: kept in the edited copy too
        (a later Save must not take it back)."""
        for copy in (self.mcp_servers, self._mcp_saved):
            if isinstance(copy.get(server), dict):
                copy.update(with_always_allowed(copy, server, tool, True))
        self._mcp_fill()

    # -- the list ---------------------------------------------------------------------------

    def _mcp_fill(self) -> None:
        tree = self.mcp_tree
        selected = self._mcp_current()
        rows = (tree.topLevelItem(i) for i in range(tree.topLevelItemCount()))
        expanded = {row.text(0) for row in rows if row is not None and row.isExpanded()}
        tree.blockSignals(True)
        tree.clear()
        for name, entry in self.mcp_servers.items():
            item = QTreeWidgetItem([name, self._mcp_state_text(name)])
            item.setData(0, ROLE, (name, ""))
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            enabled = not (isinstance(entry, dict) and entry.get("disabled"))
            item.setCheckState(0, Qt.CheckState.Checked if enabled else Qt.CheckState.Unchecked)
            tree.addTopLevelItem(item)
            for tool, words, on in self._mcp_tools(name, entry):
                child = QTreeWidgetItem([tool, words])
                child.setData(0, ROLE, (name, tool))
                child.setFlags(child.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                child.setCheckState(0, Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
                item.addChild(child)
                if (name, tool) == selected:
                    tree.setCurrentItem(child)
            item.setExpanded(name in expanded)  # a new event keeps what the user opened
            if (name, "") == selected:
                tree.setCurrentItem(item)
        tree.blockSignals(False)
        self._mcp_selected()

    def _mcp_state_text(self, name: str) -> str:
        info = self._mcp_states.get(name)
        if info is None:
            words = "not started yet"
        elif info.state == "ready":
            count = len(info.tools)
            words = f"ready · {count} tool{'s' if count != 1 else ''}"
        elif info.state in ("failed", "invalid"):
            words = f"{'failed' if info.state == 'failed' else 'not valid'}: {info.error}"
        else:
            words = STATE_WORDS.get(info.state, info.state)
        if self.mcp_servers.get(name) != self._mcp_saved.get(name):
            words += " · changed: applies on Apply or Save"
        return words

    def _mcp_tools(self, name: str, entry: Any) -> list[tuple[str, str, bool]]:
        """(tool, words, offered) for the server's tools: those it lists now, and those the
        settings name (always allowed, turned off) while it does not run."""
        try:
            spec = parse_server(name, entry)
        except ValueError:
            return []
        info = self._mcp_states.get(name)
        listed = {t.name: t for t in (info.tools if info is not None else [])}
        names = [*listed, *sorted((spec.always_allow | spec.disabled_tools) - set(listed))]
        rows = []
        for tool in names:
            said = []
            if tool in spec.always_allow:
                said.append("always allowed")
            elif (t := listed.get(tool)) is not None:
                said.append("read-only" if t.read_only else
                            "asks first" + (" (may change things)" if t.destructive else ""))
            rows.append((tool, ", ".join(said), tool not in spec.disabled_tools))
        return rows

    def _mcp_current(self) -> tuple[str, str]:
        item = self.mcp_tree.currentItem()
        data = item.data(0, ROLE) if item is not None else None
        return (str(data[0]), str(data[1])) if data else ("", "")

    def _mcp_selected(self) -> None:
        server, tool = self._mcp_current()
        entry = self.mcp_servers.get(server)
        self.mcp_edit.setEnabled(bool(server))
        self.mcp_remove.setEnabled(bool(server) and not tool)
        self.mcp_revoke.setEnabled(bool(tool) and isinstance(entry, dict)
                                   and tool in (entry.get("alwaysAllow") or []))
        self.mcp_details.setText(self._mcp_describe(server, entry) if server else "")

    def _mcp_describe(self, name: str, entry: Any) -> str:
        """The selected server in words: how it runs (secrets masked), why it failed and the
        last lines it wrote to stderr."""
        entry = entry if isinstance(entry, dict) else {}
        lines = []
        if entry.get("command"):
            args = " ".join(str(a) for a in entry.get("args") or [])
            lines.append(f"Runs: {entry['command']} {args}".rstrip())
        elif entry.get("url"):
            lines.append(f"Address: {entry['url']}")
        for part in ("env", "headers"):
            values = entry.get(part)
            if isinstance(values, dict) and values:
                lines.append(f"{part}: " + ", ".join(f"{k}=••••" for k in values))
        info = self._mcp_states.get(name)
        if info is not None and info.error:
            lines.append(f"Problem: {info.error}")
        if info is not None and info.stderr:
            lines.append("Last lines of its stderr:")
            lines += [f"  {line}" for line in info.stderr[-8:]]
        return "\n".join(lines)

    # -- changes ----------------------------------------------------------------------------

    def _mcp_item_changed(self, item: QTreeWidgetItem, column: int) -> None:
        if column != 0:
            return
        server, tool = item.data(0, ROLE)
        on = item.checkState(0) == Qt.CheckState.Checked
        if tool:
            self.mcp_servers = with_tool_enabled(self.mcp_servers, server, tool, on)
        else:
            self.mcp_servers = with_server_enabled(self.mcp_servers, server, on)
        self._mcp_restate()

    def _mcp_restate(self) -> None:
        """The servers' state words again, in their rows: not a new list (``_mcp_fill``), which
        deleted the item whose check was being changed while Qt was still in its ``setData``
        (a crash, now and then, when a box was ticked)."""
        tree = self.mcp_tree
        tree.blockSignals(True)
        for index in range(tree.topLevelItemCount()):
            item = tree.topLevelItem(index)
            if item is not None:
                item.setText(1, self._mcp_state_text(str(item.data(0, ROLE)[0])))
        tree.blockSignals(False)
        self._mcp_selected()

    def _mcp_revoke_selected(self) -> None:
        server, tool = self._mcp_current()
        if tool:
            self.mcp_servers = with_always_allowed(self.mcp_servers, server, tool, False)
            self._mcp_say(f"{tool} asks before each call again once applied.")
            self._mcp_fill()

    def _mcp_remove_selected(self) -> None:
        server, _tool = self._mcp_current()
        if server:
            self.mcp_servers = {k: v for k, v in self.mcp_servers.items() if k != server}
            self._mcp_say(f"Removed {server!r}: it stops once applied.")
            self._mcp_fill()

    def _mcp_open_editor(self, name: str) -> McpServerEditor:
        entry = self.mcp_servers.get(name, {}) if name else {}
        editor = McpServerEditor(name, entry if isinstance(entry, dict) else {},
                                 taken=set(self.mcp_servers), secret=self._mcp_secret, parent=self)
        editor.accepted.connect(lambda: self._mcp_edited(name, editor))
        editor.open()
        self.mcp_editor = editor
        return editor

    def _mcp_edited(self, old: str, editor: McpServerEditor) -> None:
        new, entry = editor.result_name(), editor.result_entry()
        if old and old != new:  # renamed: in the same place
            self.mcp_servers = {(new if k == old else k): v for k, v in self.mcp_servers.items()}
        self.mcp_servers = {**self.mcp_servers, new: entry}
        self._mcp_say(f"{new!r} starts with these settings once applied.")
        self._mcp_fill()

    def _mcp_import_from_file(self) -> None:
        path, _filter = QFileDialog.getOpenFileName(
            self, "Import MCP servers", str(Path.home()), "MCP config (*.json);;All files (*)"
        )
        if not path:
            return
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
            self._mcp_say(f"Could not read {Path(path).name}: {reason}", error=True)
            return
        self.mcp_import_text(text)

    def _mcp_import_from_paste(self) -> McpPasteDialog:
        dialog = McpPasteDialog(self.mcp_import_text, parent=self)
        dialog.open()
        self.mcp_paste = dialog
        return dialog

    def mcp_import_text(self, text: str) -> str:
        """Add the servers of a config's text, what happened said under the list; why nothing
        was imported, in words ("" when something was)."""
        try:
            self.mcp_servers, said = import_config(self.mcp_servers, text)
        except McpConfigError as exc:
            self._mcp_say(str(exc), error=True)
            return str(exc)
        self._mcp_say(said + " They start once applied.")
        self._mcp_fill()
        return ""

    def _mcp_say(self, text: str, *, error: bool = False) -> None:
        self.mcp_message.setText(text)
        self.mcp_message.setStyleSheet(f"color: {colors().error};" if error else "")
