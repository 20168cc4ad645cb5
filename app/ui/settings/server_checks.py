"""The settings panel's checks of the server: "Test connection" runs the core's connection test
(``app.core.connection.check_connection``: the server's model list through the core's provider,
a real request) and shows what happened in words. For a local server the panel also asks the
core what the server reports as its context window (``detect_server``, in the background like
the connection test) and shows it as the field's placeholder, so the user need not type it; a
typed value still wins."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton

from app.core.config import CoreConfig
from app.core.connection import (
    LOCAL_SERVER_KINDS,
    ConnectionReport,
    check_connection,
    detect_server,
)
from app.core.settings import AppSettings

from ..style.theme import colors
from .provider_page import WINDOW_PLACEHOLDER, ProviderPage

ConfigBuilder = Callable[[AppSettings, str], CoreConfig]
# Providers whose server may say its context window through its own API (the core's probe).
PROBED_PROVIDERS = frozenset(LOCAL_SERVER_KINDS)


class ServerChecks(ProviderPage):
    """The connection test and the local server's context window, over the provider page."""

    _config_builder: ConfigBuilder
    _test_task: asyncio.Future[Any] | None
    _probe_task: asyncio.Future[Any] | None
    _detected: tuple[str, str, int, str] | None

    def _build_test_row(self) -> None:
        form = self._form
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
