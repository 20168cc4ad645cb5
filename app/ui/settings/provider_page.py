"""The settings panel's model provider page: provider, base URL, API key (from the secret
store, per server), model, wire API, context window, request timeout and instructions, with the
provider's presets and the demo's own fields."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QSpinBox,
)

from app.core.settings import (
    MAX_REQUEST_TIMEOUT,
    MIN_REQUEST_TIMEOUT,
    preset_base_url,
    preset_model,
)

from ..style.theme import colors
from .form import SettingsForm

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
WINDOW_PLACEHOLDER = "known for the model, or enter tokens"


class ProviderPage(SettingsForm):
    """The provider's rows of the settings form and the values derived from them."""

    _key_lookup: Callable[[str], str]
    _key_loaded_for: str
    _set_aside: tuple[str, str] | None

    def _build_provider_page(self, key_backend: str) -> None:
        form = self._form
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

        self.accepts_images = QCheckBox("The model can see images")
        self._describe(self.accepts_images, "The model can see images",
                       "Whether attached images are sent to this model. Servers that say "
                       "which models see images (llama.cpp, LM Studio, Ollama) are believed "
                       "over this; off: a message with an image is refused before sending")
        form.addRow("Images", self.accepts_images)

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

    def _provider_key(self) -> str:
        return str(self.provider.currentData())

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

    def _load_key_if_url_changed(self) -> None:
        # A different server means a different stored key; typed keys are not overwritten.
        url = self._effective_base_url()
        if url and url != self._key_loaded_for and not self.api_key.isModified():
            self._load_key()

