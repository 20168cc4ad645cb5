"""The window against a real llama.cpp server (Gemma 3 270M, 4 096 tokens, the chat wire), set
up as a user does (the llama.cpp provider): a conversation long enough to compact itself, the
gauge and the Model view, and a reopened session drawn as it was live."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from tests.real.conftest import MODEL, LlamaServer
from tests.ui.conftest import close_window, qloop, run  # noqa: F401  (qloop: a fixture)
from tests.ui.transcript.test_resume_replay import snapshot

pytestmark = pytest.mark.real

TURN_MS = 300_000  # a 2-core machine shared with other work; this bounds a hang, not speed


def open_window(qtbot: Any, root: Path, server: LlamaServer, session_id: str | None = None) -> Any:
    from app.core.settings import AppSettings, SettingsStore
    from app.core.system.secrets import SecretStore
    from app.ui.window.app_context import AppContext
    from app.ui.window.main_window import MainWindow

    config_dir = root / "config"
    SettingsStore(config_dir).save(
        AppSettings(provider="llamacpp", base_url=server.url, model=MODEL,
                    context_window=server.context, theme="light")
    )
    context = AppContext(
        config_dir=config_dir, data_dir=root / "data",
        secrets=SecretStore(config_dir, use_keyring=False), env={},
        start_demo=lambda: "http://127.0.0.1:9/v1",  # never used: a real server is set up
        config_overrides={"tokenizer_download": False, "retry_base_delay": 0.01},
    )
    window = MainWindow(context)
    window.resize(1100, 760)
    window.show()
    run(qtbot, window.open_session(session_id), timeout=60)
    return window


def send(qtbot: Any, window: Any, text: str) -> None:
    """Paste ``text`` into the composer and press Enter; wait for the turn to end."""
    QGuiApplication.clipboard().setText(text)
    edit = window.composer.edit
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.busy, timeout=5_000)
    qtbot.waitUntil(lambda: not window.busy, timeout=TURN_MS)


def test_a_long_conversation_in_the_window_compacts_and_reopens_as_it_was(
    qtbot: Any, qloop: Any, tmp_path: Path, llama: Callable[..., LlamaServer]  # noqa: F811
) -> None:
    server = llama()
    window = open_window(qtbot, tmp_path, server)
    try:
        assert "llama.cpp" in window.model_label.text() and MODEL in window.model_label.text()
        # Long messages (about 1 200 tokens each) fill the 4 096-token window in a few turns.
        for topic in ["the sea", "rivers", "mountains", "deserts", "forests"]:
            send(qtbot, window, f"Write about {topic}. " + "Be vivid and detailed. " * 240)
            if window.transcript.compaction_rows():
                break
        markers = window.transcript.compaction_rows()
        assert markers, "five long turns on a 4 096-token window compacted nothing"
        assert markers[0].state == "done" and markers[0].automatic
        # Every turn ended with an answer on screen, and none is an error.
        replies = window.transcript.message_rows("assistant")
        assert replies and all(row.text.strip() for row in replies)
        assert not [r for r in window.transcript.rows if getattr(r, "kind", "") == "error"]
        # The request right after the compaction held at most half the auto-compact limit.
        limit = window.session.token_usage().auto_compact_limit
        compacted = [e for e in window.session.transcript() if e["kind"] == "compaction"]
        assert limit and 0 < compacted[0]["tokens_after"] <= limit // 2
        # The Model view lists what the next request carries, the summary marked as such; a
        # summary the small model wrote as junk (issue 39) was not installed, and the marker
        # says why instead.
        window.model_view_action.trigger()
        qtbot.waitUntil(lambda: bool(window.model_view.rows))
        if compacted[0].get("summary_unusable"):
            assert not any(row["summary"] for row in window.model_view.rows)
        else:
            qtbot.waitUntil(lambda: any(row["summary"] for row in window.model_view.rows))
        live = snapshot(window)
        session_id = window.session.id
    finally:
        close_window(qtbot, window)

    reopened = open_window(qtbot, tmp_path, server, session_id)
    try:
        assert snapshot(reopened) == live
    finally:
        close_window(qtbot, reopened)
