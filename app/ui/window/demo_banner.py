"""The first-run banner above the transcript: the offline demo model is in use, with a button
to the settings."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from ..style.icons import icon
from ..style.theme import colors

DEMO_BANNER = "You are chatting with Coco's offline demo model — no key or network needed."


class DemoBanner(QFrame):
    """The first-run banner: says the demo model is in use, offers the settings."""

    open_settings = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("demoBanner")
        self.setAccessibleName("Offline demo notice")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 6, 8, 6)
        self.icon_label = QLabel()
        layout.addWidget(self.icon_label)
        self.label = QLabel(DEMO_BANNER)
        self.label.setWordWrap(True)
        layout.addWidget(self.label, 1)
        self.button = QPushButton("Open settings")
        self.button.setAccessibleName("Open settings")
        self.button.setToolTip("Choose a model provider and enter an API key")
        self.button.clicked.connect(self.open_settings)
        layout.addWidget(self.button)
        self._styled = False  # styled when shown: most windows never show it

    def restyle(self) -> None:
        """Take the theme's colours (at once when shown, else when next shown)."""
        self._styled = False
        if not self.isVisible():
            return
        c = colors()
        self.setStyleSheet(
            f"QFrame#demoBanner {{ background: {c.banner_bg}; border-bottom: 1px solid {c.border}; }}"
        )
        self.icon_label.setPixmap(icon("info", c.accent).pixmap(16, 16))
        self._styled = True

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._styled:
            self.restyle()
