"""A sent message's attachments under its text (and the images a tool returned, under the tool's
title): a thumbnail per image and a chip per file (name and size), flowed in lines; a click
opens the image at full size or the file's text. A stored file that is gone shows as missing.
Drawn from the event only (``attachments`` of a user message, ``images`` of a tool output:
name, kind, size, dimensions, path, missing), live and on resume alike.

Thumbnails are decoded in a worker (``thumbnails.ImageLoader``), only for rows on screen (a
row's widget exists only then), and cached; each box has its final size from the start, so
nothing moves when the picture arrives."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from PySide6.QtCore import QPoint, QRect, QSize
from PySide6.QtGui import QMouseEvent, QPixmap
from PySide6.QtWidgets import QLayout, QLayoutItem, QToolButton, QVBoxLayout, QWidget

from ...runtime.qt_namespace import Qt
from ...style.icons import icon
from ...style.theme import colors
from ...text.file_sizes import size_words
from .sizes import SPACING, THUMB_HEIGHT, THUMB_MAX_WIDTH, is_image, thumb_size
from .thumbnails import ImageLoader

MISSING_TIP = "The stored copy of this file is gone (moved, deleted or damaged)."


class FlowLayout(QLayout):
    """Items left to right, wrapping to a new line when the width runs out."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self.setContentsMargins(0, 4, 0, 0)

    def addItem(self, item: QLayoutItem) -> None:
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._place(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:
        super().setGeometry(rect)
        self._place(rect, move=True)

    def sizeHint(self) -> QSize:
        return self.minimumSize()

    def minimumSize(self) -> QSize:
        size = QSize()
        for item in self._items:
            size = size.expandedTo(item.minimumSize())
        margins = self.contentsMargins()
        return size + QSize(margins.left() + margins.right(), margins.top() + margins.bottom())

    def _place(self, rect: QRect, move: bool) -> int:
        margins = self.contentsMargins()
        left, top = rect.x() + margins.left(), rect.y() + margins.top()
        right = rect.right() - margins.right()
        x, y, line = left, top, 0
        for item in self._items:
            hint = item.sizeHint()
            if x > left and x + hint.width() - 1 > right:
                x, y, line = left, y + line + SPACING, 0
            if move:
                item.setGeometry(QRect(QPoint(x, y), hint))
            x += hint.width() + SPACING
            line = max(line, hint.height())
        return y + line - rect.y() + margins.bottom()


class Thumbnail(QToolButton):
    """An image's thumbnail: the box at its final size at once, the picture when decoded;
    a click opens it at full size."""

    def __init__(self, shown: dict[str, Any], loader: ImageLoader, parent: QWidget) -> None:
        super().__init__(parent)
        self.shown = shown
        self.missing = bool(shown.get("missing"))
        self.path = str(shown.get("path", ""))
        sent = shown.get("sent_file")  # the scaled copy the model was sent: quicker to decode
        self.source = str(Path(self.path).with_name(str(sent))) if sent else self.path
        width, height = thumb_size(shown)
        self.setFixedSize(width, height)
        self.setIconSize(QSize(width, height))
        self.setAutoRaise(True)
        name = str(shown.get("name", "image"))
        self.setAccessibleName(f"Image {name}")
        self.setToolTip(MISSING_TIP if self.missing else f"{shown.get('description', name)}"
                        "\nClick to view it at full size")
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setObjectName("thumbnail")  # styled by the strip's one style sheet
        self.loaded = False
        self._loader = loader
        if self.missing:
            self.setText(f"{name}\nmissing")
            return
        self.setText("")
        loader.loaded.connect(self._on_loaded)
        image = loader.image(self.source, THUMB_MAX_WIDTH, THUMB_HEIGHT)
        if image is not None:
            self._show(image)

    def _on_loaded(self, path: str, box_width: int, box_height: int) -> None:
        if self.loaded or (path, box_width, box_height) != (
            self.source, THUMB_MAX_WIDTH, THUMB_HEIGHT
        ):
            return
        image = self._loader.image(self.source, THUMB_MAX_WIDTH, THUMB_HEIGHT)
        if image is None:  # damaged: said so, still clickable for the system viewer
            self.setText(f"{self.shown.get('name', 'image')}\ncannot be shown")
        else:
            self._show(image)

    def _show(self, image: Any) -> None:
        self.loaded = True
        self.setIcon(QPixmap.fromImage(image))


class FileChip(QToolButton):
    """A file's chip: its name and size; a click opens its text ("missing" when its stored
    copy is gone)."""

    def __init__(self, shown: dict[str, Any], parent: QWidget) -> None:
        super().__init__(parent)
        self.shown = shown
        self.missing = bool(shown.get("missing"))
        name = str(shown.get("name", "file"))
        state = "missing" if self.missing else size_words(int(shown.get("size") or 0))
        self.setText(f"{name} · {state}")
        self.setIcon(icon("attach", colors().muted))
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.setAccessibleName(f"File {name}{', missing' if self.missing else ''}")
        self.setToolTip(MISSING_TIP if self.missing else
                        f"{shown.get('description', name)}\nClick to open it")
        self.setObjectName("missingChip" if self.missing else "fileChip")
        self.setCursor(Qt.CursorShape.PointingHandCursor)


class AttachmentStrip(QWidget):
    """The thumbnails and file chips of one sent message."""

    def __init__(
        self, attachments: list[dict[str, Any]], loader: ImageLoader, parent: QWidget
    ) -> None:
        super().__init__(parent)
        self.setAccessibleName("Attachments")
        self.attachments = attachments  # the row's list, as the event gave it
        self._loader = loader
        c = colors()  # one style sheet for all its boxes: one parse, not one a box
        self.setStyleSheet(
            f"QToolButton#thumbnail {{ border: 1px solid {c.border}; border-radius: 4px; "
            f"background: {c.code_bg}; color: {c.muted}; padding: 0; }}"
            f"QToolButton#fileChip, QToolButton#missingChip {{ border: 1px solid {c.border}; "
            "border-radius: 10px; padding: 2px 8px; }"
            f"QToolButton#missingChip {{ border-color: {c.error}; }}"
        )
        self.flow = layout = FlowLayout(self)
        self.thumbnails: list[Thumbnail] = []
        self.chips: list[FileChip] = []
        self.viewer: QWidget | None = None  # the last viewer opened
        for shown in (a for a in attachments if is_image(a)):
            thumb = Thumbnail(shown, loader, self)
            thumb.clicked.connect(lambda _=False, s=shown: self.open(s))
            layout.addWidget(thumb)
            self.thumbnails.append(thumb)
        for shown in (a for a in attachments if not is_image(a)):
            chip = FileChip(shown, self)
            chip.clicked.connect(lambda _=False, s=shown: self.open(s))
            layout.addWidget(chip)
            self.chips.append(chip)

    def open(self, shown: dict[str, Any]) -> QWidget | None:
        """Open an attachment: an image in the viewer, a text file's text, another file (a
        PDF) in the system's viewer; a missing one only says so."""
        from . import viewer

        if shown.get("missing"):
            return None  # nothing to open: its box says missing
        dialog: QWidget | None = None
        if is_image(shown):
            dialog = viewer.ImageViewer(shown, self._loader, self.window())
        elif shown.get("kind") == "text":
            dialog = viewer.TextViewer(shown, self.window())
        else:
            viewer.open_externally(str(shown.get("path", "")))
            return None
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        self.viewer = dialog
        return dialog

    def mousePressEvent(self, event: QMouseEvent) -> None:
        event.ignore()  # a click between the chips is the row's


class ShowsAttachments(Protocol):
    """A row that shows attachments: a sent message's, or the images a tool returned."""

    attachments: list[dict[str, Any]]

    @property
    def images(self) -> ImageLoader: ...


def sync_strip(
    owner: QWidget, layout: QVBoxLayout, at: int, row: ShowsAttachments, indent: int = 0
) -> AttachmentStrip | None:
    """The strip a row's widget shows for ``row.attachments``, at index ``at`` of ``layout``
    (``indent`` pixels in from the left): the one it has when they are unchanged, else a new
    one in its place (None when there are none)."""
    current = owner.findChild(AttachmentStrip, "", Qt.FindChildOption.FindDirectChildrenOnly)
    if current is not None and current.attachments is row.attachments:
        return current
    if current is not None:
        layout.removeWidget(current)
        current.deleteLater()
    if not row.attachments:
        return None
    strip = AttachmentStrip(row.attachments, row.images, owner)
    if indent:
        strip.flow.setContentsMargins(indent, 4, 0, 0)
    layout.insertWidget(at, strip)
    # Shown now, not when the layout gets to it: a row already on screen (a tool's images
    # arrive after its call) is measured again at once, with the strip's height in it.
    strip.show()
    return strip
