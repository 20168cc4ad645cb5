"""The settings panel: inline validation, saving (settings file + secret store), applying to the
open session, and the connection test."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import Qt

from app.core.settings import SettingsStore

from ..conftest import TEST_KEY, run


def test_invalid_fields_show_why_and_block_save_until_fixed(
    qtbot: Any, make_window: Any
) -> None:
    window = make_window()
    dialog = window.open_settings()
    assert dialog.save_button.isEnabled()

    dialog.base_url.setText("ftp://example.com/v1")
    assert not dialog.save_button.isEnabled()
    assert "http:// or https://" in dialog._error_labels["base_url"].text()
    assert dialog._error_labels["base_url"].isVisibleTo(dialog)

    dialog.context_window.setText("-5")
    assert "positive" in dialog._error_labels["context_window"].text()
    assert not dialog.save_button.isEnabled()

    dialog.base_url.setText("https://example.com/v1")
    assert not dialog.save_button.isEnabled()  # the window is still wrong
    dialog.context_window.setText("32000")
    assert dialog.save_button.isEnabled()
    assert not dialog._error_labels["base_url"].isVisibleTo(dialog)
    dialog.reject()


def test_saved_settings_persist_and_apply_to_the_open_session(
    qtbot: Any, make_window: Any, server: Any, tmp_path: Any
) -> None:
    window = make_window()
    dialog = window.open_settings()
    dialog.model.setText("another-model")
    dialog.context_window.setText("64000")
    dialog.threshold.setValue(75)
    dialog.api_key.setText("sk-new-key-123")
    dialog.summary_style.setCurrentIndex(dialog.summary_style.findData("checkpoint"))
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)

    saved, warnings = SettingsStore(tmp_path / "config").load()
    assert warnings == []
    assert saved.model == "another-model"
    assert saved.context_window == 64000
    assert saved.auto_compact_percent == 75
    assert saved.summary_style == "checkpoint"
    assert saved.compact_prompt == ""  # the default prompt is not copied into the file
    raw = (tmp_path / "config" / "settings.json").read_text(encoding="utf-8")
    assert "sk-new-key-123" not in raw
    assert window.context.secrets.get_api_key(server.url) == "sk-new-key-123"
    # Applied without a restart: the session now runs with the new config.
    qtbot.waitUntil(lambda: window.session.config.model == "another-model", timeout=5000)
    assert window.session.config.context_window == 64000
    assert window.session.config.auto_compact_token_limit == 48000
    assert window.session.config.summary_style == "checkpoint"
    assert window.session.config.api_key.get_secret_value() == "sk-new-key-123"
    qtbot.waitUntil(lambda: "auto-compact at 75 %" in window.indicator.text(), timeout=5000)


def test_remote_compaction_options_are_disabled_for_chat_completions(
    qtbot: Any, make_window: Any
) -> None:
    window = make_window()
    dialog = window.open_settings()
    dialog.wire_api.setCurrentIndex(dialog.wire_api.findData("responses"))
    assert dialog.remote.isEnabled()
    dialog.wire_api.setCurrentIndex(dialog.wire_api.findData("chat"))
    assert not dialog.remote.isEnabled()
    assert not dialog.fallback.isEnabled()
    assert "no remote compaction endpoint" in dialog.remote_reason.text()
    assert dialog.remote.toolTip() == dialog.remote_reason.text()
    dialog.reject()


def test_reset_prompt_restores_the_default(qtbot: Any, make_window: Any) -> None:
    from app.core.settings import default_compact_prompt as default_prompt

    window = make_window()
    dialog = window.open_settings()
    assert dialog.prompt.toPlainText() == default_prompt("handoff")
    dialog.prompt.setPlainText("Summarise in three bullet points.")
    assert dialog.settings().compact_prompt == "Summarise in three bullet points."
    qtbot.mouseClick(dialog.reset_prompt, Qt.MouseButton.LeftButton)
    assert dialog.prompt.toPlainText() == default_prompt("handoff")
    assert dialog.settings().compact_prompt == ""
    dialog.reject()


def test_connection_test_reports_success_and_failure_in_words(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    dialog = window.open_settings()
    assert dialog.api_key.text() == TEST_KEY  # loaded from the secret store, masked
    run(qtbot, dialog.start_test())
    assert dialog.test_result.text().startswith("Connected")
    models = [r for r in server.requests if r.endpoint == "models"]
    assert models and models[-1].headers.get("authorization") == f"Bearer {TEST_KEY}"

    dialog.base_url.setText("http://127.0.0.1:9/v1")  # nothing listens on the discard port
    run(qtbot, dialog.start_test(), timeout=30)
    assert dialog.test_result.text().startswith("Connection failed")
    assert TEST_KEY not in dialog.test_result.text()
    dialog.reject()
    # Testing saved nothing.
    assert json.loads((window.context.store.path).read_text())["base_url"] == server.url


def test_a_local_servers_window_comes_from_the_cores_test_and_probe(
    qtbot: Any, make_window: Any
) -> None:
    from tests.local_server import LLAMA_PROPS, LocalServer

    window = make_window()
    with LocalServer(LLAMA_PROPS, ["gemma-3"]) as llama:
        dialog = window.open_settings()
        dialog.provider.setCurrentIndex(dialog.provider.findData("llamacpp"))
        dialog.base_url.setText(llama.url)
        dialog.model.setText("gemma-3")
        run(qtbot, dialog.start_probe())
        assert dialog.context_window.placeholderText() == "4096 (reported by the server)"
        assert dialog.window_note.text().startswith("llama.cpp reports a window of 4,096")
        assert dialog.settings().detected_context_window == 4096

        dialog.base_url.setText(llama.url.replace("/v1", "/v1/"))  # the same server
        run(qtbot, dialog.start_test())
        text = dialog.test_result.text()
        assert text.startswith("Connected. 1 model(s) available, including gemma-3.")
        assert "llama.cpp reports a context window of 4,096 tokens" in text
        assert "no tool support" in text
        # Which features need tool calls, and that this model has none.
        assert "so it has no tool calls: recall (the model searching the whole conversation)" in (
            text
        )
        assert "MCP tools need them and are not offered to it" in text
        dialog.reject()


def test_compaction_paths_are_set_in_the_panel_and_reach_the_session(
    qtbot: Any, make_window: Any, server: Any, tmp_path: Any
) -> None:
    window = make_window()
    dialog = window.open_settings()
    assert dialog.prune.isChecked()  # on by default
    assert dialog.remote.isEnabled()  # the demo's server answers every remote form too
    assert not dialog.server_side.isEnabled()  # only with remote compaction on
    dialog.prune.setChecked(False)
    dialog.remote.setChecked(True)
    assert dialog.server_side.isEnabled()
    dialog.server_side.setChecked(True)
    assert dialog.request_timeout.value() == 600
    dialog.request_timeout.setValue(90)
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)

    saved, _ = SettingsStore(tmp_path / "config").load()
    assert (saved.prune_tool_outputs, saved.remote_compaction, saved.server_side_compaction) == (
        False, True, True
    )
    qtbot.waitUntil(lambda: window.session.config.server_side_compaction, timeout=5000)
    assert window.session.config.prune_tool_outputs is False
    assert saved.request_timeout == 90 and window.session.config.request_timeout == 90


def test_openai_without_a_key_is_refused_with_the_reason(
    qtbot: Any, make_window: Any, monkeypatch: Any
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    window = make_window()
    dialog = window.open_settings()
    dialog.provider.setCurrentIndex(dialog.provider.findData("openai"))
    dialog.api_key.setText("")
    assert not dialog.validate()
    assert not dialog.save_button.isEnabled()
    assert "needs an API key" in dialog._error_labels["api_key"].text()
    dialog.api_key.setText("sk-typed-key-123")
    assert dialog.validate() and dialog.save_button.isEnabled()
    dialog.reject()


def test_the_theme_switch_applies_at_once_and_follows_the_system_again(
    qtbot: Any, make_window: Any, tmp_path: Any
) -> None:
    from PySide6.QtGui import QGuiApplication

    from app.ui.style.theme import colors, is_dark, pygments_style_name

    window = make_window()
    system_dark = is_dark()
    for theme, dark in (("dark", True), ("light", False)):
        dialog = window.open_settings()
        dialog.theme.setCurrentIndex(dialog.theme.findData(theme))
        qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
        assert is_dark() is dark and colors().dark is dark
        assert pygments_style_name() == ("monokai" if dark else "default")
    saved, _ = SettingsStore(tmp_path / "config").load()
    assert saved.theme == "light"
    dialog = window.open_settings()
    dialog.theme.setCurrentIndex(dialog.theme.findData("system"))
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert is_dark(QGuiApplication.palette()) is system_dark


def test_switching_from_the_demo_to_a_real_provider_keeps_the_conversation(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    from app.demo import Reply

    from ..helpers import type_and_send, wait_idle

    window = make_window(configure=False)  # nothing configured: the demo (here, the server)
    assert window.session.config.demo_hints
    server.enqueue(Reply(text="demo answer"))
    type_and_send(qtbot, window, "a question on the demo")
    wait_idle(qtbot, window)
    session_id = window.session.id
    dialog = window.open_settings()
    dialog.provider.setCurrentIndex(dialog.provider.findData("custom"))
    dialog.base_url.setText(server.url)
    dialog.model.setText("scripted-model")
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    # The core applies the settings and says so; the window shows the line when it arrives.
    qtbot.waitUntil(lambda: any(
        "continues with scripted-model" in row.message
        for row in window.transcript.notice_rows("background")
    ), timeout=5000)
    assert not window.session.config.demo_hints
    assert window.session.id == session_id  # the same conversation goes on
    server.enqueue(Reply(text="real answer"))
    type_and_send(qtbot, window, "and now?")
    wait_idle(qtbot, window)
    body = server.requests_to("responses")[-1].body
    assert "a question on the demo" in json.dumps(body["input"])
    # The core said it, so the line is kept with the conversation and shown when reopened.
    new_session = window.start_new_session()
    qtbot.waitUntil(new_session.done, timeout=5000)
    reopened = window._schedule_open(session_id)
    qtbot.waitUntil(reopened.done, timeout=5000)
    notices = [row.message for row in window.transcript.notice_rows("background")]
    assert any("continues with scripted-model" in n for n in notices)


def test_the_window_paints_in_the_theme_it_last_used_before_the_settings_load(
    qtbot: Any, make_window: Any, tmp_path: Any, server: Any
) -> None:
    """The settings (pydantic) load after the first paint; the window must not paint in the
    wrong colours until then: it takes the theme it last used from window.ini."""
    from app.ui.style.theme import apply_theme, is_dark
    from app.ui.window.main_window import MainWindow

    from ..conftest import build_context, close_window

    window = make_window(settings={"theme": "dark"})
    assert is_dark()  # the settings' theme, applied once they loaded
    close_window(qtbot, window)
    apply_theme("system")
    assert not is_dark()  # offscreen's system palette is light

    context = build_context(server, tmp_path, settings={"theme": "dark"})
    again = MainWindow(context)
    try:
        assert context._settings is None  # nothing has read the settings yet…
        assert is_dark()  # …and the window is already dark
    finally:
        again.show()
        run(qtbot, again.open_session(None))
        close_window(qtbot, again)
        apply_theme("system")


def test_the_images_checkbox_sets_accepts_images_and_a_model_without_them_refuses_one(
    qtbot: Any, make_window: Any, server: Any, tmp_path: Any
) -> None:
    from app.ui.transcript.row_models import NoticeRow
    from tests.attachment_files import write_png

    window = make_window()
    dialog = window.open_settings()
    assert dialog.accepts_images.isChecked()  # the default: the model sees images
    dialog.accepts_images.setChecked(False)
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    saved, _ = SettingsStore(tmp_path / "config").load()
    assert saved.accepts_images is False
    qtbot.waitUntil(lambda: window.session.config.accepts_images is False, timeout=5000)
    assert window.open_settings().accepts_images.isChecked() is False  # loaded back

    shot = write_png(tmp_path / "shot.png", 64, 64)
    window.composer.attachments.add_paths([str(shot)])
    qtbot.waitUntil(lambda: window.composer.attachments.chips[0].ready, timeout=5000)
    window.composer.edit.setPlainText("what is this")
    window.composer.submit()
    qtbot.waitUntil(lambda: not window.busy and any(
        isinstance(r, NoticeRow) and "cannot see images" in r.message
        for r in window.transcript.rows
    ), timeout=5000)
    assert server.requests_to("responses") == []
    assert window.composer.attachments.paths() == [str(shot)]  # given back, nothing lost
