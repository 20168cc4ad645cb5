"""The settings panel's form: one scroll area holding one form, whose fields are described for
screen readers and show their problem right under them.

``SettingsForm`` is the base of the panel's pages (``provider_page``, ``server_checks``,
``compaction_page``, ``workspace_page``), which ``SettingsDialog`` (``dialog``) puts together
into one QDialog: it holds the helpers that build rows and what a page may ask of the dialog.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QDialog, QFormLayout, QLabel, QWidget

from ..style.theme import colors

if TYPE_CHECKING:
    from app.core.settings import AppSettings


class SettingsForm(QDialog):
    """The form the settings pages add their rows to (see the module docstring)."""

    _form: QFormLayout
    _error_labels: dict[str, QLabel]
    _errors: dict[str, str]

    if TYPE_CHECKING:  # SettingsDialog's, for the pages that check or read every field

        def validate(self) -> bool: ...

        def settings(self) -> AppSettings: ...

        def key(self) -> str: ...

    # -- building helpers -------------------------------------------------------------------

    @staticmethod
    def _describe(widget: QWidget, name: str, tip: str) -> None:
        widget.setAccessibleName(name)
        widget.setToolTip(tip)

    @staticmethod
    def _heading(text: str) -> QLabel:
        label = QLabel(f"<b>{text}</b>")
        label.setContentsMargins(0, 8, 0, 0)
        return label

    def _add_field(self, label: str, key: str, field: Any) -> None:
        self._form.addRow(label, field)
        error = QLabel("")
        error.setWordWrap(True)
        error.setStyleSheet(f"color: {colors().error};")
        error.setAccessibleName(f"{label} problem")
        error.hide()
        self._error_labels[key] = error
        self._form.addRow("", error)
