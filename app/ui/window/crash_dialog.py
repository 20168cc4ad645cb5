"""The dialog shown after an unhandled exception: what happened, that the sessions are safe,
and where the log is (with a button to open its folder)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QMessageBox, QWidget


def crash_dialog(message: str, log_file: Path | None, parent: QWidget | None = None) -> QMessageBox:
    """The message box for ``message`` (from ``app.applog.crash_message``); not yet shown."""
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Critical)
    box.setWindowTitle("Coco — unexpected problem")
    box.setText(message)
    box.setStandardButtons(QMessageBox.StandardButton.Ok)
    if log_file is not None:
        button = box.addButton("Open log folder", QMessageBox.ButtonRole.ActionRole)
        button.clicked.connect(
            lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(log_file.parent)))
        )
    return box


class CrashReporter:
    """The ``show_dialog`` callback for ``install_excepthook``: opens the dialog window-modal
    without a nested event loop (the app keeps running under it), one at a time."""

    def __init__(self, log_file: Path | None, parent: QWidget | None = None) -> None:
        self.log_file = log_file
        self.parent = parent
        self.box: QMessageBox | None = None

    def __call__(self, message: str) -> None:
        if self.box is not None and self.box.isVisible():
            return  # one dialog is enough; every exception is in the log
        box = crash_dialog(message, self.log_file, self.parent)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.destroyed.connect(self._forget)
        self.box = box
        box.open()

    def _forget(self) -> None:
        self.box = None


_reporter = CrashReporter(None)


def show_crash_dialog(message: str, log_file: Path | None, parent: QWidget | None = None) -> None:
    """Show the crash dialog for ``message`` (non-blocking; while one is open, later ones are
    only logged)."""
    _reporter.log_file = log_file
    _reporter.parent = parent
    _reporter(message)
