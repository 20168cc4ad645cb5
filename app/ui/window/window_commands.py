"""What the user asks of the window: send, compact, undo, stop, find and slash commands; the
settings panel; exporting the session; the help dialogs; problems shown in the transcript.

A layer of ``MainWindow`` (``main_window``), over ``SessionView``: the actions, toolbar,
menus and panels that ``WindowLayout`` builds call these.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..runtime.qt_namespace import Qt
from .session_view import SessionView

if TYPE_CHECKING:
    from PySide6.QtWidgets import QDialog

    from app.core import protocol as p
    from app.core.settings import AppSettings

    from ..controller.commands import Command
    from ..runtime.gil_handover import HandoverWhile
    from ..settings.dialog import SettingsDialog
    from ..tree.branch_view import BranchView


class WindowCommands(SessionView):
    """The window's commands (see the module docstring)."""

    _settings_dialog: SettingsDialog | None
    branch_view: BranchView
    handover: HandoverWhile

    # ================================================================ user actions

    def send_message(self, text: str) -> None:
        """Send a user message (the composer already refused it while busy), with the files
        attached to it."""
        files = self.composer.attachments.take()
        if files:  # read, stored and encoded in worker threads until the turn ends
            self.handover.begin("turn")
        self.controller.send_message(text, files)

    def inspect_attachments(self, paths: list[str]) -> None:
        """Ask the core what files just attached cost (the answer fills their chips); worker
        threads read them meanwhile, and the window's thread gets the interpreter back at
        once whenever it needs it."""
        from app.core import ops

        self.handover.begin("reading")
        self.controller.submit(ops.InspectAttachments(paths=paths))
        self.transcript.images.start()  # their thumbnails' decoder, ready before the send

    def _attachments_changed(self) -> None:
        if not self.composer.attachments.reading():  # answered, removed, or sent
            self.handover.end("reading")

    def compact(self, focus: str | None = None) -> bool:
        """Submit a compaction unless a turn runs (then say why next to the composer)."""
        return self.controller.compact(focus)

    def undo_compaction(self) -> None:
        self.controller.undo_compaction()

    def find_in_conversation(self, query: str) -> None:
        """Ask the core to search the whole conversation (the answer comes as an event)."""
        from app.core import ops

        self.controller.submit(ops.FindInConversation(query=query))

    def transcript_show_match(self, match: p.ConversationMatch, query: str = "") -> None:
        # One on another branch: switched to first; the searched words are highlighted.
        self.branch_view.show_match(match, query)

    def stop(self) -> None:
        """Interrupt the streaming reply or the running compaction (Esc, Stop)."""
        self.controller.stop()

    def run_command(self, command: Command) -> None:
        """Run a slash command from the composer."""
        if command.name == "export":
            self.export(None)
        else:
            self.controller.run_command(command)

    # ================================================================ settings

    def open_settings(self) -> SettingsDialog:
        """Show the settings panel (non-blocking); Save applies to the open session."""
        from ..settings.dialog import SettingsDialog

        if self._settings_dialog is not None and self._settings_dialog.isVisible():
            self._settings_dialog.raise_()
            return self._settings_dialog
        dialog = SettingsDialog(
            self.context.settings,
            key_lookup=self.context.lookup_key,
            key_backend=getattr(self.context.secrets, "backend_name", "secret store"),
            config_builder=self.context.test_config,
            mcp_states=self.controller.state.mcp_servers,
            secret_lookup=self.context.secrets.get_secret,
            parent=self,
        )
        dialog.saved.connect(self.apply_settings)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.finished.connect(lambda _r: setattr(self, "_settings_dialog", None))
        self._settings_dialog = dialog
        dialog.open()
        return dialog

    def apply_settings(self, settings: AppSettings, api_key: str | None) -> bool:
        """Persist ``settings`` (and the key), then apply them to the open session; the theme
        changes at once."""
        applied = self.controller.apply_settings(settings, api_key)
        if applied:
            self._use_theme(settings.theme)
            if self._settings_dialog is not None:  # Apply: it edits what was saved from now on
                self._settings_dialog.mcp_applied(self.context.settings.mcp_servers)
        return applied

    def remember_always_allowed(self, server: str, tool: str) -> None:
        """The approval card's Always allow written into the server's ``alwaysAllow`` in
        settings.json, so it holds after a restart (Settings shows it and can revoke it)."""
        from app.core.mcp_config import McpConfigError, with_always_allowed

        settings = self.context.settings
        try:
            servers = with_always_allowed(settings.mcp_servers, server, tool, True)
        except McpConfigError:
            return  # a server the settings do not hold: allowed for this session only
        if servers == settings.mcp_servers:
            return
        if self.controller.apply_settings(
            settings.model_copy(update={"mcp_servers": servers}), None
        ) and self._settings_dialog is not None:
            self._settings_dialog.note_always_allowed(server, tool)

    # ================================================================ export

    def choose_export_path(self, kind: str | None) -> tuple[Path, str] | None:
        """Ask where to save; (path, "markdown" | "json"), or None when cancelled."""
        filters = "Markdown (*.md);;JSON (*.json)"
        initial = "Markdown (*.md)" if kind != "json" else "JSON (*.json)"
        from ..sessions.export import export_file_name

        title = self.windowTitle().split(" — ")[0]
        fmt_name = "json" if kind == "json" else "markdown"
        suggested = str(Path.home() / export_file_name(title, fmt_name))
        from PySide6.QtWidgets import QFileDialog  # dialogs load when first wanted

        path, chosen = QFileDialog.getSaveFileName(self, "Export session", suggested, filters,
                                                   initial)
        if not path:
            return None
        fmt = "json" if chosen.startswith("JSON") or path.lower().endswith(".json") else "markdown"
        return Path(path), fmt

    def export(self, kind: str | None) -> Path | None:
        """Write the transcript to a file the user picks (Markdown or JSON)."""
        if self.session is None:
            return None
        choice = self.choose_export_path(kind)
        if choice is None:
            return None
        path, fmt = choice
        from ..sessions.export import (
            attachments_folder,
            copy_attachments,
            transcript_to_json,
            transcript_to_markdown,
        )

        title = self.windowTitle().split(" — ")[0]
        session_id, model = self.session.id, self.session.config.model
        folder = attachments_folder(path)
        try:
            # The attached files beside it, both formats; the export links each copy.
            copy_attachments(self.session.replay_events(), folder)
            copied = frozenset(f.name for f in folder.iterdir()) if folder.is_dir() else frozenset()
            if fmt == "json":  # the record as the core keeps it
                text = transcript_to_json(
                    self.session.transcript(), title=title, session_id=session_id, model=model,
                    # Every branch, each turn with its items; the transcript is the active one.
                    tree=self.session.tree(), turn_items=self.session.turn_items(),
                    files=folder.name, copied=copied,
                )
            else:  # what the window shows, from the events that draw it
                text = transcript_to_markdown(
                    self.session.replay_events(), title=title, session_id=session_id,
                    model=model, files=folder.name,
                )
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            self.show_problem(f"Could not export to {path}: {exc.strerror or exc}")
            return None
        self.statusBar().showMessage(f"Exported to {path}", 6000)
        return path

    # ================================================================ help

    def show_shortcuts(self) -> QDialog:
        """Help → Keyboard shortcuts (read from this window's actions)."""
        from .help_dialogs import ShortcutsDialog

        dialog = ShortcutsDialog(self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def show_about(self) -> QDialog:
        """Help → About: version and this profile's folders."""
        from .help_dialogs import AboutDialog

        dialog = AboutDialog(self.context.paths, self.context.log_file, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    # ================================================================ problems

    def show_problem(self, message: str) -> None:
        """A problem the user should see, inline in the transcript (never a traceback)."""
        self.transcript.add_notice("error", message)
