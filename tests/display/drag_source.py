"""A window that starts a drag of files when pressed, as a file manager does: the source of a
real drag and drop (XDND) between two programs on the test's X server.

Run as ``python -m tests.display.drag_source <marker> <path>...``; its window is titled "Drag
source". It writes "ready" to the file ``marker`` once its window is up, then "dragging" once a
press has started the drag: the test moves the pointer only then (on a loaded machine the press
reached it after the pointer had already gone, and no drag took place)."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QMimeData, Qt, QTimer, QUrl
from PySide6.QtGui import QDrag, QMouseEvent
from PySide6.QtWidgets import QApplication, QLabel


class DragSource(QLabel):
    def __init__(self, marker: Path, paths: list[str]) -> None:
        super().__init__("Drag these files")
        self.marker = marker
        self.paths = paths
        self.setWindowTitle("Drag source")
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.resize(200, 200)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        data = QMimeData()
        data.setUrls([QUrl.fromLocalFile(path) for path in self.paths])
        drag = QDrag(self)
        drag.setMimeData(data)
        QTimer.singleShot(0, lambda: self.marker.write_text("dragging", encoding="utf-8"))
        drag.exec(Qt.DropAction.CopyAction)


def main(marker: Path, paths: list[str]) -> None:
    app = QApplication([])
    source = DragSource(marker, paths)
    source.show()
    QTimer.singleShot(0, lambda: marker.write_text("ready", encoding="utf-8"))
    app.exec()


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2:])
