"""The launcher: command line, first run on the offline demo model, clean shutdown."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from app.main import main, parse_args


def test_command_line_options() -> None:
    args = parse_args(["--data-dir", "/tmp/x", "--offline", "--session", "abc",
                       "--log-level", "debug"])
    assert args.data_dir == Path("/tmp/x")
    assert args.offline and args.session == "abc" and args.log_level == "DEBUG"
    assert main(["--version"]) == 0


@pytest.fixture
def restore_logging() -> Iterator[None]:
    """main() installs Coco's log handlers; put the test run's own back afterwards."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in [h for h in root.handlers if h not in handlers]:
        root.removeHandler(handler)
        handler.close()
    root.setLevel(level)
    logging.captureWarnings(False)


def test_first_run_starts_the_demo_model_and_closes_cleanly(
    qapp: Any, tmp_path: Path, monkeypatch: Any, restore_logging: None
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "")
    seen: dict[str, Any] = {}

    def close_when_shown() -> None:
        from app.ui.window.main_window import MainWindow

        windows = [w for w in QApplication.topLevelWidgets()
                   if isinstance(w, MainWindow) and w.isVisible()]
        if not windows or windows[0].session is None:
            QTimer.singleShot(50, close_when_shown)
            return
        window = windows[0]
        seen["banner"] = window.banner.isVisible()
        seen["model"] = window.session.config.model
        seen["session"] = window.session.id
        window.close()

    QTimer.singleShot(50, close_when_shown)
    assert main(["--data-dir", str(tmp_path), "--log-level", "ERROR"]) == 0
    assert seen["banner"] is True
    assert seen["model"] == "coco-demo"
    settings = json.loads((tmp_path / "config" / "settings.json").read_text(encoding="utf-8"))
    assert settings["last_session_id"] == seen["session"]
    assert (tmp_path / "config" / "window.ini").read_text(encoding="utf-8").count("geometry")
    assert (tmp_path / "logs" / "coco.log").exists()  # the profile's own log
