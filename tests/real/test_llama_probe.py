"""Reading the window and tool support from a real llama.cpp server, and showing it in the
settings panel."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from app.core.providers.probe import probe_server, tools_warning
from app.core.settings import AppSettings
from app.ui.settings.dialog import SettingsDialog
from tests.real.conftest import MODEL, LlamaServer
from tests.ui.conftest import qloop, run  # noqa: F401 - qloop is a fixture used here

pytestmark = pytest.mark.real


@pytest.mark.parametrize("template", ["lenient", "strict"])
async def test_probe_reads_the_window_and_the_missing_tool_support(
    template: str, llama: Callable[..., LlamaServer]
) -> None:
    server = llama(template=template)
    info = await probe_server(server.url, MODEL, prefer="ollama")  # finds llama.cpp anyway
    assert info.kind == "llama.cpp"
    assert info.context_window == server.context
    # Neither template renders tool definitions: the model would never see the tools.
    assert info.supports_tools is False
    warning = tools_warning(info, server.url)
    assert warning is not None and server.url in warning


def test_settings_panel_shows_the_reported_window_and_a_typed_one_wins(
    qtbot: Any, qloop: Any, llama: Callable[..., LlamaServer]  # noqa: F811
) -> None:
    server = llama()
    settings = AppSettings(provider="llamacpp", base_url=server.url, model=MODEL)
    dialog = SettingsDialog(
        settings,
        key_lookup=lambda url: "",
        key_backend="test store",
        config_builder=lambda s, key: None,  # type: ignore[arg-type,return-value]
    )
    qtbot.addWidget(dialog)
    assert dialog.provider.currentText().startswith("llama.cpp")
    task = dialog.start_probe()
    assert task is not None
    run(qtbot, task, timeout=30)
    assert dialog.context_window.placeholderText().startswith(str(server.context))
    assert dialog.window_note.isVisibleTo(dialog)
    assert dialog.window_note.text().startswith(f"llama.cpp reports a window of {server.context:,}")
    saved = dialog.settings()
    assert saved.context_window is None
    assert saved.detected_context_window == server.context

    dialog.context_window.setText("3000")
    assert dialog.settings().context_window == 3000
    assert "typed above is used" in dialog.window_note.text()

    dialog.base_url.setText("http://127.0.0.1:9/v1")  # another server: its window is unknown
    assert dialog.settings().detected_context_window is None
    dialog.reject()
