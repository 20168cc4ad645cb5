"""Keeps the mouse wheel from changing a combo box or spin box the user only scrolls past
(the settings panel's)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QWidget,
)


class WheelOnlyWhenFocused(QObject):
    """Keeps the mouse wheel from changing a combo box or spin box the user is only scrolling
    past: without the keyboard focus the control hands the wheel to the scroll area around it
    (which scrolls), and the wheel no longer gives it the focus; clicked or tabbed into, it
    takes the wheel as usual."""

    def __init__(self, container: QWidget) -> None:
        super().__init__(container)
        for control in (
            *container.findChildren(QComboBox),
            *container.findChildren(QAbstractSpinBox),
        ):
            control.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
            control.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            isinstance(event, QWheelEvent)
            and isinstance(watched, QWidget)
            and not watched.hasFocus()
        ):
            area = _scroll_area_of(watched)
            if area is not None:  # the panel scrolls as if the control were not there
                viewport = area.viewport()
                position = QPointF(viewport.mapFromGlobal(event.globalPosition().toPoint()))
                QApplication.sendEvent(viewport, QWheelEvent(
                    position, event.globalPosition(), event.pixelDelta(), event.angleDelta(),
                    event.buttons(), event.modifiers(), event.phase(), event.inverted(),
                ))
            return True
        return super().eventFilter(watched, event)


def _scroll_area_of(widget: QWidget) -> QAbstractScrollArea | None:
    parent = widget.parentWidget()
    while parent is not None and not isinstance(parent, QAbstractScrollArea):
        parent = parent.parentWidget()
    return parent
