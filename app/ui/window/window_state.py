"""Where the window was, how its panes were split, and the unsent draft: ``config_dir/window.ini``.

The draft (text typed in the composer but not sent) is the window's state like its size: the
composer is one per window and keeps its text when another session is opened, so the draft is
kept the same way, and never goes into a session's files (the core only sees what is sent).

Kept apart from the app settings (``settings.json``, validated with pydantic) because the window
needs it before its first paint, when nothing but Qt is loaded yet. ``QSettings`` reads and
writes the file; the values are Qt's own opaque ``saveGeometry()``/``saveState()`` blobs, so a
damaged or foreign file only means the default layout.

Coco 0.1 kept the geometry in ``settings.json`` as ``window_geometry`` (base64); while no
``window.ini`` exists yet, that value is still honoured, so an upgrade keeps the window where it
was.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings
from PySide6.QtWidgets import QSplitter, QWidget

log = logging.getLogger(__name__)

WINDOW_STATE_FILE = "window.ini"
LEGACY_SETTINGS_FILE = "settings.json"
LEGACY_GEOMETRY_KEY = "window_geometry"


class WindowState:
    """Saves and restores one window's geometry and its splitter's pane sizes."""

    def __init__(self, config_dir: Path) -> None:
        self.path = config_dir / WINDOW_STATE_FILE

    def _settings(self) -> QSettings:
        return QSettings(str(self.path), QSettings.Format.IniFormat)

    def restore(self, window: QWidget, splitter: QSplitter | None = None) -> bool:
        """Apply the saved geometry (and pane sizes); False when none was saved or usable."""
        if not self.path.exists():
            legacy = self._legacy_geometry()
            return legacy is not None and bool(window.restoreGeometry(legacy))
        settings = self._settings()
        geometry = settings.value("window/geometry")
        restored = isinstance(geometry, QByteArray) and window.restoreGeometry(geometry)
        panes = settings.value("window/splitter")
        if splitter is not None and isinstance(panes, QByteArray):
            splitter.restoreState(panes)
        return bool(restored)

    def draft(self) -> str:
        """The text left in the composer when the window last closed ("" when none)."""
        if not self.path.exists():
            return ""
        value = self._settings().value("composer/draft")
        return value if isinstance(value, str) else ""

    def _legacy_geometry(self) -> QByteArray | None:
        """The geometry an older Coco kept in settings.json, if it is there and readable."""
        legacy = self.path.with_name(LEGACY_SETTINGS_FILE)
        try:
            text = legacy.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        if LEGACY_GEOMETRY_KEY not in text:  # the usual case: no json import before first paint
            return None
        import json

        try:
            value = json.loads(text).get(LEGACY_GEOMETRY_KEY)
        except (ValueError, AttributeError):
            return None
        if not isinstance(value, str) or not value:
            return None
        return QByteArray.fromBase64(value.encode("ascii", "replace"))

    def theme(self) -> str:
        """The theme the window last used ("system" before any): the window takes its colours
        before its first paint, when the settings (pydantic) are not loaded yet."""
        value = self._settings().value("window/theme", "system")
        return value if value in ("system", "light", "dark") else "system"

    def save_theme(self, theme: str) -> None:
        """Remember ``theme`` for the next start; a failure is logged, never raised."""
        settings = self._writable("the theme for the next start")
        if settings is not None:
            settings.setValue("window/theme", theme)
            settings.sync()

    def _writable(self, what: str) -> QSettings | None:
        """The settings file, its folder made; None (logged, naming ``what``) if it cannot be."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            log.warning("Could not save %s: %s", what, exc)
            return None
        return self._settings()

    def save(
        self, window: QWidget, splitter: QSplitter | None = None, draft: str | None = None
    ) -> None:
        """Write the window's geometry (and pane sizes, and the composer's unsent ``draft``);
        a failure is logged, never raised."""
        settings = self._writable("the window position")
        if settings is None:
            return
        settings.setValue("window/geometry", window.saveGeometry())
        if splitter is not None:
            settings.setValue("window/splitter", splitter.saveState())
        if draft is not None:
            if draft.strip():
                settings.setValue("composer/draft", draft)
            else:
                settings.remove("composer/draft")
        settings.sync()
        if settings.status() != QSettings.Status.NoError:
            log.warning("Could not save the window position to %s", self.path)
