"""Where the window was and how its panes were split: ``config_dir/window.ini``.

Kept apart from the app settings (``settings.json``, validated with pydantic) because the window
needs it before its first paint, when nothing but Qt is loaded yet. ``QSettings`` reads and
writes the file; the values are Qt's own opaque ``saveGeometry()``/``saveState()`` blobs, so a
damaged or foreign file only means the default layout.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings
from PySide6.QtWidgets import QSplitter, QWidget

log = logging.getLogger(__name__)

WINDOW_STATE_FILE = "window.ini"


class WindowState:
    """Saves and restores one window's geometry and its splitter's pane sizes."""

    def __init__(self, config_dir: Path) -> None:
        self.path = config_dir / WINDOW_STATE_FILE

    def _settings(self) -> QSettings:
        return QSettings(str(self.path), QSettings.Format.IniFormat)

    def restore(self, window: QWidget, splitter: QSplitter | None = None) -> bool:
        """Apply the saved geometry (and pane sizes); False when none was saved or usable."""
        if not self.path.exists():
            return False
        settings = self._settings()
        geometry = settings.value("window/geometry")
        restored = isinstance(geometry, QByteArray) and window.restoreGeometry(geometry)
        panes = settings.value("window/splitter")
        if splitter is not None and isinstance(panes, QByteArray):
            splitter.restoreState(panes)
        return bool(restored)

    def save(self, window: QWidget, splitter: QSplitter | None = None) -> None:
        """Write the window's geometry (and pane sizes); a failure is logged, never raised."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            log.warning("Could not save the window position: %s", exc)
            return
        settings = self._settings()
        settings.setValue("window/geometry", window.saveGeometry())
        if splitter is not None:
            settings.setValue("window/splitter", splitter.saveState())
        settings.sync()
        if settings.status() != QSettings.Status.NoError:
            log.warning("Could not save the window position to %s", self.path)
