"""The boxes of a sent message's attachments: an image's thumbnail and a file's chip, each a
button that opens what it shows.

They draw their own frame, picture and text rather than being styled by a style sheet: with
one, each of a message's eleven boxes went through the style-sheet engine as its row was
built (2 ms of the 4 the row took, three times that while the request's workers held the
interpreter), in the block that showed the message just sent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QRect, QRectF, QSize
from PySide6.QtGui import QColor, QFontMetrics, QImage, QPainter, QPainterPath, QPaintEvent, QPixmap
from PySide6.QtWidgets import QToolButton, QWidget

from ...runtime.qt_namespace import Qt
from ...style.icons import icon
from ...style.theme import colors
from ...text.file_sizes import size_words
from .sizes import THUMB_HEIGHT, THUMB_MAX_WIDTH, is_image, thumb_size
from .thumbnails import ImageLoader

MISSING_TIP = "The stored copy of this file is gone (moved, deleted or damaged)."
CHIP_ICON = 16  # a chip's paper-clip icon, in pixels
CHIP_PADDING = 8  # left and right, inside a chip's frame
CHIP_GAP = 4  # between its icon and its text


def chip_text(shown: dict[str, Any]) -> str:
    """What a file's chip says: its name, and its size or that it is missing."""
    missing = bool(shown.get("missing"))
    state = "missing" if missing else size_words(int(shown.get("size") or 0))
    return f"{shown.get('name', 'file')} · {state}"


def chip_size(metrics: QFontMetrics, text: str) -> QSize:
    """The size of a chip saying ``text`` in the font of ``metrics``."""
    width = 2 * CHIP_PADDING + CHIP_ICON + CHIP_GAP + metrics.horizontalAdvance(text)
    return QSize(width + 2, max(CHIP_ICON, metrics.height()) + 8)


def box_size(shown: dict[str, Any], metrics: QFontMetrics) -> QSize:
    """The size of an attachment's box, known before the box is made."""
    return QSize(*thumb_size(shown)) if is_image(shown) else chip_size(metrics, chip_text(shown))


class AttachmentBox(QToolButton):
    """A box of the strip: a rounded frame (its border in the accent colour while the pointer
    is over it or it has the keyboard's focus), its content drawn by the subclass."""

    radius = 4.0

    def __init__(self, shown: dict[str, Any], parent: QWidget) -> None:
        super().__init__(parent)
        self.shown = shown
        self.missing = bool(shown.get("missing"))
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setAttribute(Qt.WidgetAttribute.WA_Hover)  # drawn again as the pointer comes and goes

    def _frame(self, painter: QPainter) -> QPainterPath:
        """Draw the frame; the path inside it (the content is clipped to it)."""
        c = colors()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        path = QPainterPath()
        path.addRoundedRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5),
                            self.radius, self.radius)
        active = self.underMouse() or self.hasFocus()
        painter.setPen(QColor(c.accent if active else self._border()))
        fill = self._fill()
        painter.setBrush(QColor(fill) if fill else Qt.BrushStyle.NoBrush)
        painter.drawPath(path)
        return path

    def _border(self) -> str:
        return colors().border

    def _fill(self) -> str | None:
        """The colour inside the frame (None: the row's shows through)."""
        return colors().code_bg


class Thumbnail(AttachmentBox):
    """An image's thumbnail: the box at its final size at once, the picture when decoded;
    a click opens it at full size."""

    def __init__(self, shown: dict[str, Any], loader: ImageLoader, parent: QWidget) -> None:
        super().__init__(shown, parent)
        self.path = str(shown.get("path", ""))
        sent = shown.get("sent_file")  # the scaled copy the model was sent: quicker to decode
        self.source = str(Path(self.path).with_name(str(sent))) if sent else self.path
        width, height = thumb_size(shown)
        self.setFixedSize(width, height)
        self.setIconSize(QSize(width, height))
        name = str(shown.get("name", "image"))
        self.setAccessibleName(f"Image {name}")
        self.setToolTip(MISSING_TIP if self.missing else f"{shown.get('description', name)}"
                        "\nClick to view it at full size")
        self.loaded = False
        self._picture: QPixmap | None = None
        self._loader = loader
        if self.missing:
            self.setText(f"{name}\nmissing")
            return
        image = loader.image(self.source, THUMB_MAX_WIDTH, THUMB_HEIGHT)
        if image is not None:
            self._show(image)

    def picture_loaded(self) -> None:
        """The loader has decoded this thumbnail's picture (or found it cannot)."""
        if self.loaded:
            return
        image = self._loader.image(self.source, THUMB_MAX_WIDTH, THUMB_HEIGHT)
        if image is None:  # damaged: said so, still clickable for the system viewer
            self.setText(f"{self.shown.get('name', 'image')}\ncannot be shown")
        else:
            self._show(image)

    def _show(self, image: QImage) -> None:
        self.loaded = True
        self._picture = QPixmap.fromImage(image)
        self.setIcon(self._picture)

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        path = self._frame(painter)
        if self._picture is not None:
            painter.setClipPath(path)
            target = QRect(0, 0, *self._picture.size().scaled(
                self.size(), Qt.AspectRatioMode.KeepAspectRatio).toTuple())
            target.moveCenter(self.rect().center())
            painter.drawPixmap(target, self._picture)
            painter.setClipping(False)  # the frame drawn again over the picture's edge
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawPath(path)
        else:
            painter.setPen(QColor(colors().muted))
            painter.drawText(self.rect().adjusted(4, 4, -4, -4),
                             Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, self.text())
        painter.end()


class FileChip(AttachmentBox):
    """A file's chip: its name and size; a click opens its text ("missing" when its stored
    copy is gone)."""

    radius = 10.0

    def __init__(self, shown: dict[str, Any], parent: QWidget) -> None:
        super().__init__(shown, parent)
        name = str(shown.get("name", "file"))
        self.setText(chip_text(shown))
        self.setIcon(icon("attach", colors().muted))
        self.setIconSize(QSize(CHIP_ICON, CHIP_ICON))
        self.setAccessibleName(f"File {name}{', missing' if self.missing else ''}")
        self.setToolTip(MISSING_TIP if self.missing else
                        f"{shown.get('description', name)}\nClick to open it")

    def sizeHint(self) -> QSize:
        return chip_size(QFontMetrics(self.font()), self.text())

    def minimumSizeHint(self) -> QSize:
        return self.sizeHint()

    def _border(self) -> str:
        return colors().error if self.missing else colors().border

    def _fill(self) -> str | None:
        return None

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        self._frame(painter)
        top = (self.height() - CHIP_ICON) // 2
        self.icon().paint(painter, QRect(1 + CHIP_PADDING, top, CHIP_ICON, CHIP_ICON))
        text = self.rect().adjusted(1 + CHIP_PADDING + CHIP_ICON + CHIP_GAP, 0, -CHIP_PADDING, 0)
        painter.setPen(QColor(colors().text))
        painter.drawText(text, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
                         self.text())
        painter.end()
