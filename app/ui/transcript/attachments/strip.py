"""A sent message's attachments under its text (and the images a tool returned, under the tool's
title): a thumbnail per image and a chip per file (name and size), flowed in lines; a click
opens the image at full size or the file's text. A stored file that is gone shows as missing.
Drawn from the event only (``attachments`` of a user message, ``images`` of a tool output:
name, kind, size, dimensions, path, missing), live and on resume alike.

Thumbnails are decoded in a worker (``thumbnails.ImageLoader``), only for rows on screen (a
row's widget exists only then), and cached; each box has its final size from the start, so
nothing moves when the picture arrives."""

from __future__ import annotations

from typing import Any, Protocol

from PySide6.QtCore import QPoint, QRect, QSize, QTimer
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import (
    QLayout,
    QLayoutItem,
    QSizePolicy,
    QSpacerItem,
    QVBoxLayout,
    QWidget,
    QWidgetItem,
)

from ...runtime.qt_namespace import Qt
from .boxes import FileChip, Thumbnail, box_size
from .sizes import SPACING, THUMB_HEIGHT, THUMB_MAX_WIDTH, is_image
from .thumbnails import ImageLoader

_FIXED = QSizePolicy.Policy.Fixed
BOXES_A_TURN = 3  # boxes made in one turn of the event loop (see ``AttachmentStrip``)


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

    def put_widget(self, index: int, widget: QWidget) -> None:
        """``widget`` in place of the item at ``index`` (a spacer of its size)."""
        self.addChildWidget(widget)
        self._items[index] = QWidgetItem(widget)

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


class AttachmentStrip(QWidget):
    """The thumbnails and file chips of one sent message.

    Its boxes are made a few in each of the event loop's next turns, the window drawing
    between them (or all at once when they are asked for): until then the layout holds a
    spacer of each box's size, so the row is measured and drawn at its final height at once
    and nothing moves when they come. Made with the row, the eleven boxes of a message with
    ten screenshots and a PDF took 1.5-2.5 ms of the interpreter, in the block that showed the
    message just sent, while the request's workers held the interpreter most of the time."""

    def __init__(
        self, attachments: list[dict[str, Any]], loader: ImageLoader, parent: QWidget
    ) -> None:
        super().__init__(parent)
        self.setAccessibleName("Attachments")
        self.attachments = attachments  # the row's list, as the event gave it
        self._loader = loader
        self.flow = FlowLayout(self)
        # Images first, then files: the order the boxes take in the layout.
        self._shown = [a for a in attachments if is_image(a)]
        self._shown += [a for a in attachments if not is_image(a)]
        metrics = self.fontMetrics()
        for shown in self._shown:
            size = box_size(shown, metrics)
            self.flow.addItem(QSpacerItem(size.width(), size.height(), _FIXED, _FIXED))
        self._thumbnails: list[Thumbnail] = []
        self._chips: list[FileChip] = []
        self.viewer: QWidget | None = None  # the last viewer opened
        # One connection for all its thumbnails (one each made every decoded picture call
        # every thumbnail on screen).
        loader.loaded.connect(self._picture_loaded)
        # A zero timer, not ``singleShot(0)``: that is a posted call, run in the same pass
        # of the event loop as the row's building, so the window would still not draw between.
        self._maker = QTimer(self)
        self._maker.setInterval(0)
        self._maker.timeout.connect(lambda: self.make_boxes(BOXES_A_TURN))
        self._maker.start()

    @property
    def thumbnails(self) -> list[Thumbnail]:
        self.make_boxes()
        return self._thumbnails

    @property
    def chips(self) -> list[FileChip]:
        self.make_boxes()
        return self._chips

    def make_boxes(self, most: int | None = None) -> None:
        """Make its boxes in the places kept for them: ``most`` more of them, or all."""
        made = len(self._thumbnails) + len(self._chips)
        end = len(self._shown) if most is None else min(len(self._shown), made + most)
        for index in range(made, end):
            shown = self._shown[index]
            box: Thumbnail | FileChip
            if is_image(shown):
                box = Thumbnail(shown, self._loader, self)
                self._thumbnails.append(box)
            else:
                box = FileChip(shown, self)
                self._chips.append(box)
            box.clicked.connect(lambda _=False, s=shown: self.open(s))
            self.flow.put_widget(index, box)
        if end == len(self._shown):
            self._maker.stop()
        if end > made:
            self.flow.setGeometry(self.flow.geometry())
            for new in (*self._thumbnails, *self._chips)[made:end]:
                new.show()

    def _picture_loaded(self, path: str, box_width: int, box_height: int) -> None:
        if (box_width, box_height) != (THUMB_MAX_WIDTH, THUMB_HEIGHT):
            return  # a size for the viewer
        for thumb in self._thumbnails:
            if thumb.source == path:
                thumb.picture_loaded()

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
