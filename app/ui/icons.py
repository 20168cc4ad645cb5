"""SVG icons from ``resources/icons``, tinted with the palette's text colour.

The SVGs draw with ``currentColor``; replacing it before rendering makes one file serve light and
dark themes. Rendered icons are cached per (name, colour).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from PySide6.QtCore import QByteArray, QRectF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer

from app.core.resources import resources_dir


def icon_path(name: str) -> Path:
    """Where the SVG of icon ``name`` lives."""
    try:
        return resources_dir() / "icons" / f"{name}.svg"
    except FileNotFoundError:
        return Path(__file__).resolve().parents[2] / "resources" / "icons" / f"{name}.svg"


@lru_cache(maxsize=256)
def _pixmap(name: str, color: str, size: int) -> QPixmap:
    path = icon_path(name)
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    try:
        svg = path.read_text(encoding="utf-8").replace("currentColor", color)
    except OSError:
        return pixmap  # a missing icon must never stop the window from opening
    renderer = QSvgRenderer(QByteArray(svg.encode("utf-8")))
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter, QRectF(0, 0, size, size))
    painter.end()
    return pixmap


def icon(name: str, color: QColor | str | None = None) -> QIcon:
    """The icon ``name`` drawn in ``color`` (default: the palette's button text colour)."""
    pal = QGuiApplication.palette()
    if color is None:
        color = pal.color(QPalette.ColorRole.ButtonText)
    normal = color.name() if isinstance(color, QColor) else color
    disabled = pal.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText).name()
    result = QIcon()
    for size in (16, 24, 32, 48):
        result.addPixmap(_pixmap(name, normal, size), QIcon.Mode.Normal)
        result.addPixmap(_pixmap(name, disabled, size), QIcon.Mode.Disabled)
    return result


def app_icon() -> QIcon:
    """Coco's application icon (a full-colour SVG)."""
    result = QIcon()
    for size in (16, 32, 48, 64, 128, 256):
        result.addPixmap(_pixmap("coco", "#000000", size))
    return result
