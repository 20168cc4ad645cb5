"""The settings panel: provider, model, compaction options, prompt, workspace.

Validation is inline: each field with a problem shows why right under it and Save stays disabled
until every problem is fixed. The panel's pages build its rows: ``provider_page``,
``server_checks`` (the connection test and the server's own context window),
``compaction_page``, ``workspace_page`` and ``mcp_page`` (the MCP servers), on the form of
``form``. The default compaction prompt comes from the core's settings. The dialog only
collects and checks values; the window saves them (settings file + secret store) and applies
them to the open session, on Apply (the panel stays open) or Save.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from app.core.settings import AppSettings, default_compact_prompt, preset_wire_api

from ..runtime.wheel_guard import WheelOnlyWhenFocused
from .compaction_page import NO_REMOTE_REASON, STYLES, CompactionPage
from .mcp_page import McpPage
from .server_checks import PROBED_PROVIDERS, ConfigBuilder, ServerChecks
from .workspace_page import WorkspacePage

if TYPE_CHECKING:
    from app.core.protocol import McpServerInfo

log = logging.getLogger(__name__)


class SettingsDialog(ServerChecks, CompactionPage, WorkspacePage, McpPage):
    """Edits an ``AppSettings`` and the API key; ``saved(settings, api_key)`` on Apply and
    on Save (which also closes it)."""

    saved = Signal(object, str)

    def __init__(
        self,
        settings: AppSettings,
        *,
        key_lookup: Callable[[str], str],
        key_backend: str,
        config_builder: ConfigBuilder,
        mcp_states: list[McpServerInfo] | None = None,
        secret_lookup: Callable[[str], str] = lambda _name: "",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Coco settings")
        self.setAccessibleName("Settings")
        self.setMinimumWidth(560)
        self.resize(700, 760)
        self._original = settings
        self._key_lookup = key_lookup
        self._config_builder = config_builder
        self._mcp_secret = secret_lookup
        self._errors: dict[str, str] = {}
        self._test_task: asyncio.Future[Any] | None = None
        self._probe_task: asyncio.Future[Any] | None = None
        # (base URL, model, window, server name) the server reported; saved with the settings
        # while the base URL and model still match.
        self._detected: tuple[str, str, int, str] | None = None
        self._key_loaded_for = ""
        # The base URL and model typed for another provider, while the demo is chosen.
        self._set_aside: tuple[str, str] | None = None

        outer = QVBoxLayout(self)
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        body = QWidget()
        form = QFormLayout(body)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        scroll.setWidget(body)
        outer.addWidget(scroll, 1)
        self._form = form
        self._error_labels: dict[str, QLabel] = {}

        self._build_provider_page(key_backend)
        self._build_test_row()
        self._build_compaction_page()
        self._build_workspace_page()
        self._build_mcp_page(settings.mcp_servers, mcp_states or [])

        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Apply
            | QDialogButtonBox.StandardButton.Cancel
        )
        self.save_button = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        self._describe(self.save_button, "Save settings", "Save and apply to the open session")
        self.apply_button = self.buttons.button(QDialogButtonBox.StandardButton.Apply)
        self._describe(self.apply_button, "Apply settings",
                       "Save and apply to the open session, and keep the panel open")
        self.apply_button.clicked.connect(self.apply)
        cancel = self.buttons.button(QDialogButtonBox.StandardButton.Cancel)
        self._describe(cancel, "Cancel", "Close without saving")
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        outer.addWidget(self.buttons)
        # Scrolling the panel over a combo or spin box scrolls the panel, never sets a value.
        self._wheel_guard = WheelOnlyWhenFocused(body)

        self._load(settings)
        for line in (self.base_url, self.api_key, self.model, self.context_window, self.workspace):
            line.textChanged.connect(self.validate)
        self.provider.currentIndexChanged.connect(self._on_provider_changed)
        self.wire_api.currentIndexChanged.connect(self._update_enabled)
        self.remote.toggled.connect(self._update_enabled)
        self.auto_compact.toggled.connect(self._update_enabled)
        self.summary_style.currentIndexChanged.connect(self._on_style_changed)
        self.base_url.editingFinished.connect(self.start_probe)
        self.model.editingFinished.connect(self.start_probe)
        self.context_window.textChanged.connect(self._show_detected)
        self._update_enabled()
        self.validate()
        if settings.detected_context_window and settings.provider in PROBED_PROVIDERS:
            self._detected = (
                self._effective_base_url(),
                self._effective_model(),
                settings.detected_context_window,
                "The server",
            )
            self._show_detected()
        self.start_probe()

    # -- values -----------------------------------------------------------------------------

    def _load(self, s: AppSettings) -> None:
        self.provider.setCurrentIndex(max(0, self.provider.findData(s.provider)))
        self.base_url.setText(s.base_url)
        self.model.setText(s.model)
        self.wire_api.setCurrentIndex(max(0, self.wire_api.findData(s.wire_api)))
        self.context_window.setText(str(s.context_window) if s.context_window else "")
        self.instructions.setPlainText(s.instructions)
        self.accepts_images.setChecked(s.accepts_images)
        self.auto_compact.setChecked(s.auto_compact)
        self.threshold.setValue(s.auto_compact_percent)
        self.remote.setChecked(s.remote_compaction)
        self.fallback.setChecked(s.remote_fallback_to_local)
        self.prune.setChecked(s.prune_tool_outputs)
        self.recall.setChecked(s.recall)
        self.carry_notes.setChecked(s.carry_notes)
        self.request_timeout.setValue(s.request_timeout)
        self.server_side.setChecked(s.server_side_compaction)
        self.compaction_model.setText(s.compaction_model)
        self.summary_style.setCurrentIndex(max(0, self.summary_style.findData(s.summary_style)))
        self.branch_summary.setCurrentIndex(
            max(0, self.branch_summary.findData(s.branch_summary))
        )
        self.prompt.setPlainText(s.compact_prompt or default_compact_prompt(s.summary_style))
        self.workspace.setText(s.workspace)
        self.notify.setChecked(s.notifications)
        self.theme.setCurrentIndex(max(0, self.theme.findData(s.theme)))
        self.mcp_read_only.setChecked(s.mcp_allow_read_only)
        self._apply_presets(load_key=True)

    def _on_provider_changed(self) -> None:
        self._apply_presets(load_key=True)
        self._update_enabled()
        self.validate()
        self.start_probe()

    def _update_enabled(self) -> None:
        provider = self._provider_key()
        demo = provider == "demo"
        for widget in (self.base_url, self.api_key, self.show_key, self.model, self.test_button):
            widget.setEnabled(not demo or widget is self.test_button)
        fixed_wire = provider != "custom"
        if fixed_wire:
            wire = preset_wire_api(provider, str(self.wire_api.currentData()))
            self.wire_api.setCurrentIndex(max(0, self.wire_api.findData(wire)))
        self.wire_api.setEnabled(not fixed_wire)
        self.wire_api.setToolTip(
            "Set by the provider preset" if fixed_wire else "The protocol the server speaks"
        )
        self.threshold.setEnabled(self.auto_compact.isChecked())
        # The demo server answers every remote form, so the demo can show them.
        no_remote = str(self.wire_api.currentData()) == "chat"
        reason = NO_REMOTE_REASON
        self.remote.setEnabled(not no_remote)
        self.fallback.setEnabled(not no_remote and self.remote.isChecked())
        self.server_side.setEnabled(
            not no_remote and self.remote.isChecked() and self.auto_compact.isChecked()
        )
        if no_remote:
            self.remote.setToolTip(reason)
            self.fallback.setToolTip(reason)
            self.server_side.setToolTip(reason)
            self.remote_reason.setText(reason)
            self.remote_reason.show()
        else:
            self.remote.setToolTip("Let the server compact the history (OpenAI)")
            self.fallback.setToolTip(
                "On failure (404, server error, network) summarise locally instead"
                if self.remote.isChecked()
                else "Only used with remote compaction on"
            )
            self.remote_reason.hide()

    # -- validation -------------------------------------------------------------------------

    def validate(self) -> bool:
        """Check every field, show problems inline, enable Save only when all are fine."""
        errors: dict[str, str] = {}
        provider = self._provider_key()
        url = self.base_url.text().strip()
        if url and not url.lower().startswith(("http://", "https://")):
            errors["base_url"] = "The base URL must start with http:// or https://."
        elif provider == "custom" and not url:
            errors["base_url"] = "A custom provider needs a base URL."
        if provider == "custom" and not self.model.text().strip():
            errors["model"] = "Enter the model name the server expects."
        if (
            provider == "openai"
            and not self.api_key.text().strip()
            and not os.environ.get("OPENAI_API_KEY", "").strip()
        ):
            # Without a key OpenAI cannot answer: refused here rather than Coco silently
            # staying on the demo model after "Settings saved".
            errors["api_key"] = "OpenAI needs an API key: paste yours here (or set OPENAI_API_KEY)."
        window = self.context_window.text().strip().replace("_", "").replace(",", "")
        if window:
            try:
                value = int(window)
            except ValueError:
                errors["context_window"] = "Enter a whole number of tokens, or leave it empty."
            else:
                if value <= 0:
                    errors["context_window"] = "The context window must be a positive number."
                elif value < 1000:
                    errors["context_window"] = "That is too small for any chat model (≥ 1000)."
        workspace = self.workspace.text().strip()
        if workspace and not Path(workspace).expanduser().is_dir():
            errors["workspace"] = "This folder does not exist."
        for key, label in self._error_labels.items():
            message = errors.get(key, "")
            label.setText(message)
            label.setVisible(bool(message))
        self._errors = errors
        self.save_button.setEnabled(not errors)
        self.apply_button.setEnabled(not errors)
        self.save_button.setToolTip(
            "Fix the fields marked in red first" if errors else "Save and apply to the open session"
        )
        self.test_button.setEnabled(not errors)
        self._load_key_if_url_changed()
        return not errors

    @property
    def errors(self) -> dict[str, str]:
        return dict(self._errors)

    def settings(self) -> AppSettings:
        """The edited settings (call only when ``validate()`` is True)."""
        window = self.context_window.text().strip().replace("_", "").replace(",", "")
        prompt = self.prompt.toPlainText().strip()
        if prompt in {default_compact_prompt(key) for key, _ in STYLES}:
            prompt = ""  # the default: keep following it when Coco's prompt improves
        return AppSettings.model_validate(
            {
                **self._original.model_dump(),
                "provider": self._provider_key(),
                "base_url": self.base_url.text().strip(),
                "model": self.model.text().strip(),
                "wire_api": str(self.wire_api.currentData()),
                "context_window": int(window) if window else None,
                "detected_context_window": self.detected_window(),
                "instructions": self.instructions.toPlainText().strip(),
                "accepts_images": self.accepts_images.isChecked(),
                "auto_compact": self.auto_compact.isChecked(),
                "auto_compact_percent": self.threshold.value(),
                "remote_compaction": self.remote.isChecked() and self.remote.isEnabled(),
                "remote_fallback_to_local": self.fallback.isChecked(),
                "prune_tool_outputs": self.prune.isChecked(),
                "recall": self.recall.isChecked(),
                "carry_notes": self.carry_notes.isChecked(),
                "request_timeout": self.request_timeout.value(),
                "server_side_compaction": self.server_side.isChecked()
                and self.server_side.isEnabled(),
                "compaction_model": self.compaction_model.text().strip(),
                "summary_style": str(self.summary_style.currentData()),
                "branch_summary": str(self.branch_summary.currentData()),
                "compact_prompt": prompt,
                "workspace": self.workspace.text().strip(),
                "notifications": self.notify.isChecked(),
                "theme": str(self.theme.currentData()),
                "mcp_servers": dict(self.mcp_servers),
                "mcp_allow_read_only": self.mcp_read_only.isChecked(),
            }
        )

    def key(self) -> str:
        return self.api_key.text().strip()

    def apply(self) -> bool:
        """Hand the settings to the window (saved, applied to the open session); the panel
        stays open and edits from them on (the MCP page then shows the servers' new states)."""
        if not self.validate():
            return False
        try:
            settings = self.settings()
        except ValidationError as exc:
            message = "; ".join(str(e["msg"]) for e in exc.errors())
            self.test_result.setText(f"Cannot save: {message}")
            return False
        self.saved.emit(settings, self.key())
        self._original = settings
        return True

    def save(self) -> None:
        if self.apply():
            self.accept()
