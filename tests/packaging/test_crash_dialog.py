"""The crash dialog: names the log, opens without blocking, one at a time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QMessageBox, QWidget

from app.applog import crash_message
from app.ui.window.crash_dialog import CrashReporter, crash_dialog


def test_dialog_text_and_log_button(qtbot: Any, tmp_path: Path) -> None:
    log_file = tmp_path / "logs" / "coco.log"
    box = crash_dialog(crash_message(ValueError("bad thing"), log_file), log_file)
    qtbot.addWidget(box)
    assert str(log_file) in box.text()
    assert box.icon() == QMessageBox.Icon.Critical
    assert any(b.text() == "Open log folder" for b in box.buttons())


def test_without_a_log_file_there_is_no_log_button(qtbot: Any) -> None:
    box = crash_dialog(crash_message(ValueError("bad thing"), None), None)
    qtbot.addWidget(box)
    assert "printed to the terminal" in box.text()
    assert not any(b.text() == "Open log folder" for b in box.buttons())


def test_reporter_opens_one_dialog_at_a_time(qtbot: Any, tmp_path: Path) -> None:
    window = QWidget()
    qtbot.addWidget(window)
    window.show()
    reporter = CrashReporter(tmp_path / "coco.log", window)
    reporter("first problem")  # returns at once: no nested event loop
    first = reporter.box
    assert first is not None and first.isVisible() and first.text() == "first problem"
    reporter("second problem")
    assert reporter.box is first and first.text() == "first problem"
    first.accept()
    qtbot.waitUntil(lambda: reporter.box is None, timeout=3000)  # deleted on close
    reporter("third problem")
    assert reporter.box is not None and reporter.box.text() == "third problem"
    reporter.box.accept()


def test_show_crash_dialog_returns_at_once_and_does_not_stack(qtbot: Any, tmp_path: Path) -> None:
    from app.ui.window import crash_dialog as module

    window = QWidget()
    qtbot.addWidget(window)
    window.show()
    module.show_crash_dialog("problem one", tmp_path / "coco.log", window)
    box = module._reporter.box
    assert box is not None and box.isVisible()
    module.show_crash_dialog("problem two", tmp_path / "coco.log", window)
    assert module._reporter.box is box and box.text() == "problem one"
    box.accept()
    qtbot.waitUntil(lambda: module._reporter.box is None, timeout=3000)
