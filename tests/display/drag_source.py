"""A window that starts a drag of files when pressed, as a file manager does: the source of a
real drag and drop (XDND) between two programs on the test's X server.

Run as ``python -m tests.display.drag_source <path>...``; its window is titled "Drag source"."""

from __future__ import annotations

import sys

from PySide6.QtCore import QMimeData, Qt, QUrl
from PySide6.QtGui import QDrag, QMouseEvent
from PySide6.QtWidgets import QApplication, QLabel


class DragSource(QLabel):
    def __init__(self, paths: list[str]) -> None:
        super().__init__("Drag these files")
        self.paths = paths
        self.setWindowTitle("Drag source")
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.resize(200, 200)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        data = QMimeData()
        data.setUrls([QUrl.fromLocalFile(path) for path in self.paths])
        drag = QDrag(self)
        drag.setMimeData(data)
        drag.exec(Qt.DropAction.CopyAction)


def main(paths: list[str]) -> None:
    app = QApplication([])
    source = DragSource(paths)
    source.show()
    app.exec()


if __name__ == "__main__":
    main(sys.argv[1:])
