"""The settings panel's tools and desktop page: the workspace folder the model may read, desktop
notifications and the theme."""

from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QComboBox, QFileDialog, QHBoxLayout, QLineEdit, QPushButton

from .form import SettingsForm


class WorkspacePage(SettingsForm):
    """The Tools and Desktop rows of the settings form."""

    def _build_workspace_page(self) -> None:
        form = self._form
        form.addRow(self._heading("Tools"))
        self.workspace = QLineEdit()
        self.workspace.setPlaceholderText("no folder: tools off")
        self._describe(self.workspace, "Workspace folder",
                       "A folder the model may list and read (read-only); empty: no tools")
        browse = QPushButton("Browse…")
        self._describe(browse, "Choose workspace folder", "Pick the folder in a file dialog")
        browse.clicked.connect(self._browse_workspace)
        ws_row = QHBoxLayout()
        ws_row.addWidget(self.workspace, 1)
        ws_row.addWidget(browse)
        self._add_field("Workspace folder", "workspace", ws_row)

        form.addRow(self._heading("Desktop"))
        self.notify = QCheckBox("Notify when a long reply or a compaction finishes")
        self._describe(self.notify, "Notifications",
                       "A system notification while Coco is in the background; it names what "
                       "finished, never the contents")
        form.addRow("", self.notify)
        self.theme = QComboBox()
        for key, label in (("system", "Follow the system"), ("light", "Light"), ("dark", "Dark")):
            self.theme.addItem(label, key)
        self._describe(self.theme, "Theme", "The window's colours, code highlighting included")
        form.addRow("Theme", self.theme)

    def _browse_workspace(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Workspace folder", self.workspace.text())
        if folder:
            self.workspace.setText(folder)

