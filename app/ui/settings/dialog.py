"""The settings panel: provider, model, compaction options, prompt, workspace.

Validation is inline: each field with a problem shows why right under it and Save stays disabled
until every problem is fixed. "Test connection" runs the core's connection test
(``app.core.connection.check_connection``: the server's model list through the core's provider,
a real request) and shows what happened in words. For a local server the panel also asks the
core what the server reports as its context window (``detect_server``, in the background like
the connection test) and shows it as the field's placeholder, so the user need not type it; a
typed value still wins. The default compaction prompt comes from the core's settings. The
dialog only collects and checks values; the window saves them (settings file + secret store)
and applies them to the open session.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.core.config import CoreConfig
from app.core.connection import (
    LOCAL_SERVER_KINDS,
    ConnectionReport,
    check_connection,
    detect_server,
)
from app.core.settings import (
    MAX_AUTO_COMPACT_PERCENT,
    MAX_REQUEST_TIMEOUT,
    MIN_AUTO_COMPACT_PERCENT,
    MIN_REQUEST_TIMEOUT,
    AppSettings,
    default_compact_prompt,
    preset_base_url,
    preset_model,
    preset_wire_api,
)

from ..runtime.wheel_guard import WheelOnlyWhenFocused
from ..style.theme import colors

log = logging.getLogger(__name__)

PROVIDERS: tuple[tuple[str, str], ...] = (
    ("demo", "Offline demo model (no key, no network)"),
    ("openai", "OpenAI"),
    ("ollama", "Ollama"),
    ("lmstudio", "LM Studio"),
    ("llamacpp", "llama.cpp (llama-server)"),
    ("custom", "Custom (OpenAI-compatible)"),
)
WIRE_APIS: tuple[tuple[str, str], ...] = (
    ("responses", "Responses API (/responses)"),
    ("chat", "Chat Completions (/chat/completions)"),
)
STYLES: tuple[tuple[str, str], ...] = (
    ("handoff", "Handoff (like Codex: a note for the next model)"),
    ("checkpoint", "Checkpoint (structured; merges earlier summaries)"),
)
NO_REMOTE_REASON = (
    "Chat Completions has no remote compaction endpoint: compaction always runs locally."
)

ConfigBuilder = Callable[[AppSettings, str], CoreConfig]
# Providers whose server may say its context window through its own API (the core's probe).
PROBED_PROVIDERS = frozenset(LOCAL_SERVER_KINDS)
WINDOW_PLACEHOLDER = "known for the model, or enter tokens"


class SettingsDialog(QDialog):
    """Edits an ``AppSettings`` and the API key; ``saved(settings, api_key)`` on Save."""

    saved = Signal(object, str)

    def __init__(
        self,
        settings: AppSettings,
        *,
        key_lookup: Callable[[str], str],
        key_backend: str,
        config_builder: ConfigBuilder,
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

        # -- provider ---------------------------------------------------------------------
        self.provider = QComboBox()
        for key, label in PROVIDERS:
            self.provider.addItem(label, key)
        self._describe(self.provider, "Provider", "Which kind of server Coco talks to")
        form.addRow(self._heading("Model provider"))
        form.addRow("Provider", self.provider)

        self.base_url = QLineEdit()
        self._describe(self.base_url, "Base URL",
                       "The server's API address, e.g. https://api.openai.com/v1")
        self._add_field("Base URL", "base_url", self.base_url)

        self.api_key = QLineEdit()
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        self._describe(self.api_key, "API key",
                       f"Stored in the {key_backend}, never in the settings file or logs")
        self.show_key = QCheckBox("Show")
        self._describe(self.show_key, "Show API key", "Show the key while typing it")
        self.show_key.toggled.connect(
            lambda on: self.api_key.setEchoMode(
                QLineEdit.EchoMode.Normal if on else QLineEdit.EchoMode.Password
            )
        )
        key_row = QHBoxLayout()
        key_row.addWidget(self.api_key, 1)
        key_row.addWidget(self.show_key)
        self._add_field("API key", "api_key", key_row)
        self.key_note = QLabel(f"Saved in the {key_backend}.")
        self.key_note.setStyleSheet(f"color: {colors().muted};")
        self.key_note.setWordWrap(True)
        form.addRow("", self.key_note)

        self.model = QLineEdit()
        self._describe(self.model, "Model", "The model name the server knows, e.g. gpt-4.1")
        self._add_field("Model", "model", self.model)

        self.wire_api = QComboBox()
        for key, label in WIRE_APIS:
            self.wire_api.addItem(label, key)
        self._describe(self.wire_api, "Wire API", "The protocol the server speaks")
        self._add_field("Wire API", "wire_api", self.wire_api)

        self.context_window = QLineEdit()
        self.context_window.setPlaceholderText(WINDOW_PLACEHOLDER)
        self._describe(self.context_window, "Context window",
                       "The model's context window in tokens; empty: what a local server "
                       "reports, else Coco's table for the model")
        self._add_field("Context window", "context_window", self.context_window)
        self.window_note = QLabel("")
        self.window_note.setWordWrap(True)
        self.window_note.setStyleSheet(f"color: {colors().muted};")
        self.window_note.setAccessibleName("Context window reported by the server")
        self.window_note.hide()
        form.addRow("", self.window_note)

        self.request_timeout = QSpinBox()
        self.request_timeout.setRange(MIN_REQUEST_TIMEOUT, MAX_REQUEST_TIMEOUT)
        self.request_timeout.setSuffix(" s")
        self._describe(self.request_timeout, "Request timeout",
                       "How long Coco waits for a server that has stopped answering before "
                       "it retries")
        form.addRow("Request timeout", self.request_timeout)

        self.instructions = QPlainTextEdit()
        self.instructions.setFixedHeight(70)
        self.instructions.setPlaceholderText("You are Coco, a helpful assistant.")
        self._describe(self.instructions, "Instructions",
                       "System instructions sent with every request")
        form.addRow("Instructions", self.instructions)

        test_row = QHBoxLayout()
        self.test_button = QPushButton("Test connection")
        self._describe(self.test_button, "Test connection",
                       "Ask the server for its models with these settings")
        self.test_button.clicked.connect(self.start_test)
        test_row.addWidget(self.test_button)
        self.test_result = QLabel("")
        self.test_result.setWordWrap(True)
        self.test_result.setTextFormat(Qt.TextFormat.PlainText)
        self.test_result.setAccessibleName("Connection test result")
        test_row.addWidget(self.test_result, 1)
        form.addRow("", test_row)

        # -- compaction -------------------------------------------------------------------
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

        # -- tools ------------------------------------------------------------------------
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

        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.save_button = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        self._describe(self.save_button, "Save settings", "Save and apply to the open session")
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

    # -- values -----------------------------------------------------------------------------

    def _provider_key(self) -> str:
        return str(self.provider.currentData())

    def _load(self, s: AppSettings) -> None:
        self.provider.setCurrentIndex(max(0, self.provider.findData(s.provider)))
        self.base_url.setText(s.base_url)
        self.model.setText(s.model)
        self.wire_api.setCurrentIndex(max(0, self.wire_api.findData(s.wire_api)))
        self.context_window.setText(str(s.context_window) if s.context_window else "")
        self.instructions.setPlainText(s.instructions)
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
        self.prompt.setPlainText(s.compact_prompt or default_compact_prompt(s.summary_style))
        self.workspace.setText(s.workspace)
        self.notify.setChecked(s.notifications)
        self.theme.setCurrentIndex(max(0, self.theme.findData(s.theme)))
        self._apply_presets(load_key=True)

    def _effective_base_url(self) -> str:
        return self.base_url.text().strip().rstrip("/") or preset_base_url(self._provider_key())

    def _effective_model(self) -> str:
        return self.model.text().strip() or preset_model(self._provider_key())

    def _apply_presets(self, load_key: bool) -> None:
        provider = self._provider_key()
        self._set_aside_for_demo(provider == "demo")
        self.base_url.setPlaceholderText(preset_base_url(provider) or "https://…/v1")
        self.model.setPlaceholderText(preset_model(provider) or "model name")
        if load_key:
            self._load_key()

    def _set_aside_for_demo(self, demo: bool) -> None:
        """The demo has its own model and server: its fields show them (empty, the demo's as
        placeholders), not the address and model typed for another provider, which come back
        when another provider is chosen again."""
        if demo and self._set_aside is None:
            self._set_aside = (self.base_url.text(), self.model.text())
            self.base_url.clear()
            self.model.clear()
        elif not demo and self._set_aside is not None:
            url, model = self._set_aside
            self._set_aside = None
            if not self.base_url.text():
                self.base_url.setText(url)
            if not self.model.text():
                self.model.setText(model)

    def _load_key(self) -> None:
        url = self._effective_base_url()
        if url and url != self._key_loaded_for:
            try:
                self.api_key.setText(self._key_lookup(url))
            except Exception:  # noqa: BLE001 - an unreadable store just leaves the field empty
                self.api_key.setText("")
            self._key_loaded_for = url

    def _on_provider_changed(self) -> None:
        self._apply_presets(load_key=True)
        self._update_enabled()
        self.validate()
        self.start_probe()

    def _on_style_changed(self) -> None:
        # Follow the style's default unless the user wrote their own prompt.
        defaults = {default_compact_prompt(key) for key, _ in STYLES}
        if self.prompt.toPlainText().strip() in defaults:
            self._reset_prompt()

    def _reset_prompt(self) -> None:
        self.prompt.setPlainText(default_compact_prompt(str(self.summary_style.currentData())))

    def _browse_workspace(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Workspace folder", self.workspace.text())
        if folder:
            self.workspace.setText(folder)

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
        self.save_button.setToolTip(
            "Fix the fields marked in red first" if errors else "Save and apply to the open session"
        )
        self.test_button.setEnabled(not errors)
        self._load_key_if_url_changed()
        return not errors

    def _load_key_if_url_changed(self) -> None:
        # A different server means a different stored key; typed keys are not overwritten.
        url = self._effective_base_url()
        if url and url != self._key_loaded_for and not self.api_key.isModified():
            self._load_key()

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
                "compact_prompt": prompt,
                "workspace": self.workspace.text().strip(),
                "notifications": self.notify.isChecked(),
                "theme": str(self.theme.currentData()),
            }
        )

    def key(self) -> str:
        return self.api_key.text().strip()

    def save(self) -> None:
        if not self.validate():
            return
        try:
            settings = self.settings()
        except ValidationError as exc:
            message = "; ".join(str(e["msg"]) for e in exc.errors())
            self.test_result.setText(f"Cannot save: {message}")
            return
        self.saved.emit(settings, self.key())
        self.accept()

    # -- the server's own window -------------------------------------------------------------

    def detected_window(self) -> int | None:
        """The window the server reported for the base URL and model now in the fields."""
        if self._detected is None or self._provider_key() not in PROBED_PROVIDERS:
            return None
        url, model, window, _ = self._detected
        if (url, model) != (self._effective_base_url(), self._effective_model()):
            return None
        return window

    def _show_detected(self) -> None:
        window = self.detected_window()
        if window is None or self._detected is None:
            self.context_window.setPlaceholderText(WINDOW_PLACEHOLDER)
            self.window_note.hide()
            return
        server = self._detected[3]
        self.context_window.setPlaceholderText(f"{window} (reported by the server)")
        typed = self.context_window.text().strip()
        self.window_note.setText(
            f"{server} reports a window of {window:,} tokens; the value typed above is used "
            "instead."
            if typed
            else f"{server} reports a window of {window:,} tokens; Coco uses it."
        )
        self.window_note.show()

    def start_probe(self) -> asyncio.Future[Any] | None:
        """Ask a local server for its context window in the background (``None``: not a local
        provider, or the fields are not valid yet). The answer lands in the placeholder."""
        provider = self._provider_key()
        self._show_detected()
        if provider not in PROBED_PROVIDERS or self._errors.get("base_url"):
            return None
        url = self._effective_base_url()
        if not url:
            return None
        if self._probe_task is not None and not self._probe_task.done():
            self._probe_task.cancel()
        self._probe_task = asyncio.ensure_future(
            self._run_probe(url, self._effective_model(), provider)
        )
        return self._probe_task

    async def _run_probe(self, url: str, model: str, provider: str) -> None:
        report = await detect_server(url, model, provider=provider, api_key=self.key())
        self._remember_detected(url, model, report.context_window, report.name)

    def _remember_detected(self, url: str, model: str, window: int | None, name: str) -> None:
        if window is not None:
            self._detected = (url, model, window, name)
        self._show_detected()

    # -- connection test --------------------------------------------------------------------

    def start_test(self) -> asyncio.Future[Any] | None:
        """Run the connection test in the background; the result appears beside the button."""
        if not self.validate():
            return None
        try:
            config = self._config_builder(self.settings(), self.key())
        except (ValueError, ValidationError) as exc:
            self._show_test(False, str(exc))
            return None
        self.test_button.setEnabled(False)
        self.test_result.setStyleSheet(f"color: {colors().muted};")
        self.test_result.setText("Testing…")
        self._test_task = asyncio.ensure_future(
            self._run_test(
                config, self._provider_key(), self._effective_base_url(), self._effective_model()
            )
        )
        return self._test_task

    async def _run_test(self, config: CoreConfig, provider: str, url: str, model: str) -> None:
        # The core's test: a failure comes back in words, never raised.
        report: ConnectionReport = await check_connection(config, provider=provider)
        self.test_button.setEnabled(not self._errors)
        self._show_test(report.ok, report.message)
        if report.ok and provider in PROBED_PROVIDERS:
            # The test asked the server for its window too: show it like the probe does.
            server = report.server
            self._remember_detected(url, model, server.context_window, server.name)

    def _show_test(self, ok: bool, message: str) -> None:
        c = colors()
        self.test_result.setStyleSheet(f"color: {c.ok if ok else c.error};")
        self.test_result.setText(message)

    def done(self, result: int) -> None:
        for task in (self._test_task, self._probe_task):
            if task is not None and not task.done():
                task.cancel()
        super().done(result)
