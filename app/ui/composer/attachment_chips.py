"""Files attached to the message being written: a chip each (name, size, what it costs the
model, or why it cannot be sent) that opens the file or removes it, and how files arrive (the
paperclip's dialog, a drop, a paste of files or of an image)."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

from ..runtime.qt_namespace import set_enum_property
from ..style.theme import colors
from ..style.widgets import tool_button
from ..text.file_sizes import size_words

# QUrl, QImage and the desktop services load when a file is first attached, not before the
# window's first paint.
if TYPE_CHECKING:
    from PySide6.QtCore import QMimeData

    from app.core import protocol as p

READING = "reading…"


def mime_files(source: QMimeData, paste_dir: Path | None = None) -> list[str]:
    """The files a drop or a paste carries: local files by path, or an image (a screenshot
    copied) saved as a PNG to attach. Empty when it carries neither (text is typed)."""
    if source.hasUrls():
        paths = [url.toLocalFile() for url in source.urls() if url.isLocalFile()]
        if paths:
            return paths
    if source.hasImage():
        from PySide6.QtGui import QImage

        image = source.imageData()
        if isinstance(image, QImage) and not image.isNull():
            folder = paste_dir or Path(tempfile.gettempdir()) / "coco-pasted"
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"pasted-{time.strftime('%Y%m%d-%H%M%S')}-{time.monotonic_ns()}.png"
            if image.save(str(path)):  # PNG, from the suffix
                return [str(path)]
    return []


class AttachmentChip(QFrame):
    """One attached file: what it is and costs, Open and Remove."""

    removed = Signal(str)

    def __init__(self, path: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.path = path
        self.error = ""
        self.ready = False
        self.setObjectName("attachmentChip")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        row = QHBoxLayout(self)
        row.setContentsMargins(6, 2, 2, 2)
        row.setSpacing(2)
        self.label = QLabel(f"{Path(path).name} · {READING}", self)
        set_enum_property(self.label, "textFormat", "PlainText")
        row.addWidget(self.label)
        self.open_button: QToolButton = tool_button(
            "search", f"Open {Path(path).name}", "Open attachment", self
        )
        self.open_button.clicked.connect(self.open)
        row.addWidget(self.open_button)
        self.remove_button: QToolButton = tool_button(
            "delete", f"Remove {Path(path).name}", "Remove attachment", self
        )
        self.remove_button.clicked.connect(lambda: self.removed.emit(self.path))
        row.addWidget(self.remove_button)
        self.setAccessibleName(f"Attachment {Path(path).name}")

    def show_info(self, info: p.AttachmentInfo) -> None:
        """What the core said of this file: its size and cost, or why it cannot be sent."""
        self.error = info.error
        self.ready = not info.error
        if info.error:
            self.label.setText(f"{info.name} · cannot be sent")
            self.label.setStyleSheet(f"color: {colors().error};")
            self.setToolTip(info.error)
        else:
            self.label.setText(
                f"{info.name} · {size_words(info.size)} · {info.tokens:,} tokens"
            )
            self.label.setStyleSheet("")
            self.setToolTip(info.description)
        self.setAccessibleDescription(self.toolTip())

    def open(self) -> None:
        from PySide6.QtCore import QUrl
        from PySide6.QtGui import QDesktopServices

        QDesktopServices.openUrl(QUrl.fromLocalFile(self.path))


class AttachmentTray(QWidget):
    """The chips of the message being written. ``inspect_requested`` asks the core what new
    files cost; its answer comes back through :meth:`show_inspected`."""

    inspect_requested = Signal(list)
    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(4)
        self._layout.addStretch(1)
        self.chips: list[AttachmentChip] = []
        self.setAccessibleName("Attachments")
        self.hide()

    def add_paths(self, paths: list[str]) -> None:
        """Attach ``paths`` (each once) and ask what they cost."""
        known = {chip.path for chip in self.chips}
        new = [path for path in dict.fromkeys(paths) if path and path not in known]
        for path in new:
            chip = AttachmentChip(path, self)
            chip.removed.connect(self.remove)
            self._layout.insertWidget(self._layout.count() - 1, chip)
            self.chips.append(chip)
        if new:
            self.setVisible(True)
            self.inspect_requested.emit(new)
            self.changed.emit()

    def show_inspected(self, event: p.AttachmentsInspected) -> None:
        by_path = {chip.path: chip for chip in self.chips}
        for info in event.files:
            chip = by_path.get(info.path)
            if chip is not None:
                chip.show_info(info)
        self.changed.emit()

    def remove(self, path: str) -> None:
        for chip in list(self.chips):
            if chip.path == path:
                self.chips.remove(chip)
                chip.hide()
                chip.deleteLater()
        self.setVisible(bool(self.chips))
        self.changed.emit()

    def paths(self) -> list[str]:
        return [chip.path for chip in self.chips]

    def reading(self) -> bool:
        """Some chip still waits for the core to say what its file costs."""
        return any(not (chip.ready or chip.error) for chip in self.chips)

    def problem(self) -> str:
        """Why the message cannot be sent with these files now ("" when it can)."""
        broken = [chip for chip in self.chips if chip.error]
        if broken:
            return broken[0].error + " Remove it to send the message."
        return ""  # files still being read are read again, from the core's cache, on send

    def take(self) -> list[str]:
        """The paths to send, and the tray emptied."""
        paths = self.paths()
        for path in paths:
            self.remove(path)
        return paths
