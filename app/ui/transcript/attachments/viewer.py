"""What a click on a sent attachment opens: an image at full size (fitted to the screen) in a
dialog, a text file's text read-only, anything else (a PDF) in the system's viewer. The image
is decoded off the window's thread (``thumbnails.ImageLoader``): the dialog shows the thumbnail
enlarged until the picture is ready."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication, QImage, QPixmap, QTextOption
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from ...runtime.qt_namespace import Qt
from .thumbnails import ImageLoader

TEXT_SHOWN = 2 * 2**20  # characters of a text file the viewer shows (the rest: system viewer)


def open_externally(path: str) -> bool:
    """Open ``path`` with the system's default application."""
    return bool(QDesktopServices.openUrl(QUrl.fromLocalFile(path)))


def _system_button(path: str, parent: QWidget) -> QPushButton:
    button = QPushButton("Open in system viewer", parent)
    button.setToolTip(path)
    button.setAutoDefault(False)
    button.clicked.connect(lambda: open_externally(path))
    return button


class ImageViewer(QDialog):
    """An attached image at full size, scaled down to fit the screen when larger."""

    def __init__(self, shown: dict[str, Any], loader: ImageLoader, parent: QWidget) -> None:
        super().__init__(parent)
        self.path = str(shown.get("path", ""))
        name = str(shown.get("name", "image"))
        self.setWindowTitle(name)
        self.setAccessibleName(f"Image {name}")
        screen = (parent.screen() or QGuiApplication.primaryScreen()).availableGeometry()
        self.box = (max(320, screen.width() - 80), max(240, screen.height() - 140))
        layout = QVBoxLayout(self)
        self.caption = QLabel(str(shown.get("description", name)), self)
        self.caption.setTextFormat(Qt.TextFormat.PlainText)
        layout.addWidget(self.caption)
        self.picture = QLabel("Loading…", self)
        self.picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.picture.setAccessibleName(f"Image {name} at full size")
        scroll = QScrollArea(self)
        scroll.setWidget(self.picture)
        scroll.setWidgetResizable(True)
        layout.addWidget(scroll, 1)
        buttons = QDialogButtonBox(self)
        buttons.addButton(_system_button(self.path, self), QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(QDialogButtonBox.StandardButton.Close).clicked.connect(self.reject)
        layout.addWidget(buttons)
        width, height = int(shown.get("width") or 640), int(shown.get("height") or 480)
        from .sizes import fit

        fitted = fit(width, height, *self.box)
        self.resize(min(fitted[0] + 40, self.box[0]), min(fitted[1] + 110, self.box[1] + 110))
        self._loader = loader
        self.loaded = False
        loader.loaded.connect(self._on_loaded)
        image = loader.image(self.path, *self.box)
        if image is not None:
            self._show(image)
        elif loader.failed(self.path, *self.box):
            self._show_failure()

    def _on_loaded(self, path: str, box_width: int, box_height: int) -> None:
        if (path, box_width, box_height) != (self.path, *self.box) or self.loaded:
            return
        image = self._loader.image(self.path, *self.box)
        if image is not None:
            self._show(image)
        else:
            self._show_failure()

    def _show(self, image: QImage) -> None:
        self.loaded = True
        self.picture.setText("")
        self.picture.setPixmap(QPixmap.fromImage(image))

    def _show_failure(self) -> None:
        self.picture.setText("The image file is missing or damaged.")


class TextViewer(QDialog):
    """An attached text file's text, read-only (its first ``TEXT_SHOWN`` characters)."""

    def __init__(self, shown: dict[str, Any], parent: QWidget) -> None:
        super().__init__(parent)
        path = str(shown.get("path", ""))
        name = str(shown.get("name", "file"))
        self.setWindowTitle(name)
        self.setAccessibleName(f"File {name}")
        self.resize(760, 520)
        layout = QVBoxLayout(self)
        caption = QLabel(str(shown.get("description", name)), self)
        caption.setTextFormat(Qt.TextFormat.PlainText)
        layout.addWidget(caption)
        self.view = QPlainTextEdit(self)
        self.view.setReadOnly(True)
        self.view.setAccessibleName(f"Text of {name}")
        self.view.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.view.setPlainText(read_text(path, str(shown.get("encoding") or "utf-8")))
        layout.addWidget(self.view, 1)
        buttons = QDialogButtonBox(self)
        buttons.addButton(_system_button(path, self), QDialogButtonBox.ButtonRole.ActionRole)
        close = buttons.addButton(QDialogButtonBox.StandardButton.Close)
        close.clicked.connect(self.reject)
        close.setDefault(True)
        layout.addWidget(buttons)


def read_text(path: str, encoding: str) -> str:
    """The stored file's text in the encoding the core found, shortened past ``TEXT_SHOWN``
    characters (said at its end); the reason in words when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(TEXT_SHOWN * 4 + 4)
    except OSError as exc:
        return f"{Path(path).name} could not be read: {exc.strerror or exc}."
    try:
        text = data.decode(encoding, errors="replace")
    except LookupError:
        text = data.decode("utf-8", errors="replace")
    if len(text) > TEXT_SHOWN:
        return text[:TEXT_SHOWN] + "\n\n[… shortened here: Open in system viewer shows it all]"
    return text
