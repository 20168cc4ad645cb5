"""Files dropped anywhere on the window attach to the message being written (the text box
takes its own drops and pastes through the same rule: files and images attach, text types)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent
from PySide6.QtWidgets import QWidget

from .widget import Composer


class AttachmentDrop(QObject):
    """An event filter on a window: a drag carrying files or an image is accepted, a drop
    attaches them to ``composer``."""

    def __init__(self, window: QWidget, composer: Composer) -> None:
        super().__init__(window)
        self._composer = composer
        window.setAcceptDrops(True)
        window.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind in (QEvent.Type.DragEnter, QEvent.Type.DragMove) and isinstance(
            event, (QDragEnterEvent, QDragMoveEvent)
        ):
            data = event.mimeData()
            if data.hasUrls() or data.hasImage():
                event.acceptProposedAction()
                return True
        elif (
            kind == QEvent.Type.Drop
            and isinstance(event, QDropEvent)
            and self._composer.attach_from_mime(event.mimeData())
        ):
            event.acceptProposedAction()
            return True
        return False
