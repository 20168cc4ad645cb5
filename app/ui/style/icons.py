"""SVG icons from ``resources/icons``, tinted with the palette's text colour.

The SVGs draw with ``currentColor``; replacing it before rendering makes one file serve light and
dark themes. Rendered icons are cached per (name, colour).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from PySide6.QtCore import QByteArray, QRect, QRectF, QSize
from PySide6.QtGui import (
    QColor,
    QGuiApplication,
    QIcon,
    QIconEngine,
    QPainter,
    QPalette,
    QPixmap,
)
from PySide6.QtSvg import QSvgRenderer

from app.core.system.resources import resources_dir


def icon_path(name: str) -> Path:
    """Where the SVG of icon ``name`` lives."""
    try:
        return resources_dir() / "icons" / f"{name}.svg"
    except FileNotFoundError:
        return Path(__file__).resolve().parents[3] / "resources" / "icons" / f"{name}.svg"


@lru_cache(maxsize=256)
def _pixmap(name: str, color: str, size: int) -> QPixmap:
    path = icon_path(name)
    pixmap = QPixmap(size, size)
    pixmap.fill(QColor(0, 0, 0, 0))  # transparent (Qt.* is not read in the first frame)
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


class _SvgIconEngine(QIconEngine):
    """Draws one tinted SVG icon at whatever size and mode Qt asks for, when it asks.

    Rendering every size of every icon up front cost tens of milliseconds before the window
    could first paint; most sizes are never shown.
    """

    def __init__(self, name: str, normal: str, disabled: str) -> None:
        super().__init__()
        self._name = name
        self._normal = normal
        self._disabled = disabled

    def pixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State) -> QPixmap:
        color = self._disabled if mode == QIcon.Mode.Disabled else self._normal
        return _pixmap(self._name, color, max(1, min(size.width(), size.height())))

    def scaledPixmap(
        self, size: QSize, mode: QIcon.Mode, state: QIcon.State, scale: float
    ) -> QPixmap:
        pixmap = self.pixmap(size * scale, mode, state)
        pixmap.setDevicePixelRatio(scale)
        return pixmap

    def paint(self, painter: QPainter, rect: QRect, mode: QIcon.Mode, state: QIcon.State) -> None:
        scale = painter.device().devicePixelRatioF() if painter.device() is not None else 1.0
        painter.drawPixmap(rect, self.scaledPixmap(rect.size(), mode, state, scale))

    def availableSizes(
        self, mode: QIcon.Mode = QIcon.Mode.Normal, state: QIcon.State = QIcon.State.Off
    ) -> list[QSize]:
        return [QSize(side, side) for side in (16, 24, 32, 48)]

    def actualSize(self, size: QSize, mode: QIcon.Mode, state: QIcon.State) -> QSize:
        side = min(size.width(), size.height())
        return QSize(side, side)

    def clone(self) -> QIconEngine:
        return _SvgIconEngine(self._name, self._normal, self._disabled)


def icon(name: str, color: QColor | str | None = None) -> QIcon:
    """The icon ``name`` drawn in ``color`` (default: the palette's button text colour)."""
    pal = QGuiApplication.palette()
    if color is None:
        color = pal.color(QPalette.ColorRole.ButtonText)
    normal = color.name() if isinstance(color, QColor) else color
    disabled = pal.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText).name()
    return QIcon(_SvgIconEngine(name, normal, disabled))


def app_icon() -> QIcon:
    """Coco's application icon (a full-colour SVG), drawn at the sizes asked for."""
    return QIcon(_SvgIconEngine("coco", "#000000", "#000000"))
