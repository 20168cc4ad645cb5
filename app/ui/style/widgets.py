"""Small widgets shared by the window: a safe rich-text view, icon buttons, a spinner."""

from __future__ import annotations

import math
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar

from PySide6.QtCore import QEvent, QMimeData, QObject, QSize, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QDesktopServices,
    QGuiApplication,
    QPainter,
    QPaintEvent,
    QPalette,
    QPen,
    QResizeEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import (
    QFrame,
    QLabel,
    QSizePolicy,
    QTextBrowser,
    QToolButton,
    QWidget,
)

from ..runtime.qt_namespace import Qt, set_enum_property
from ..text.long_text import strip_breaks
from .icons import icon

if TYPE_CHECKING:
    from PySide6.QtCore import QUrl  # its enums are not needed before the first paint

# The scheme of the links Markdown rendering puts on code blocks (see ``markdown``).
COPY_SCHEME = "coco-copy"


def is_safe_link(url: QUrl) -> bool:
    """Only http(s) links are ever opened, and only on a click."""
    return url.scheme().lower() in ("http", "https") and bool(url.host())


def tint(widget: QWidget, color: str) -> None:
    """Draw ``widget``'s text in ``color`` (a label's foreground), through its palette.

    Not a style sheet: a widget with one of its own is polished by the style-sheet style, which
    parses it and matches its rules for the widget and every child. A message row's widget had
    four (its tags, its status, its body) and took 3-3.5 ms to build, 1.8-2 ms without them,
    and the window builds one whenever a message comes on screen."""
    palette = widget.palette()
    tone = QColor(color)
    palette.setColor(QPalette.ColorRole.WindowText, tone)
    palette.setColor(QPalette.ColorRole.Text, tone)  # what a selectable label draws with
    widget.setPalette(palette)


class RichTextView(QTextBrowser):
    """A read-only rich-text block as tall as its content (no inner scroll bar).

    Its height follows its width (``heightForWidth``): the layout it sits in asks for the
    height of the document laid out at that width. It never loads a resource (no remote
    images, no files), opens only http(s) links and only when clicked, and turns
    ``coco-copy:N`` links into ``copy_code_requested(N)``.
    """

    copy_code_requested = Signal(int)
    _warmed: ClassVar[bool] = False  # one has been built in this process

    @classmethod
    def warm_up(cls, parent: QWidget) -> None:
        """Build (and drop) a first view now, if none was built yet: the first one of a
        process costs 15-30 ms (PySide6 creates the Python types of its classes' enums when
        they are first used), which an empty session's first message otherwise pays while
        it is being sent."""
        if not cls._warmed:
            cls(parent).deleteLater()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        RichTextView._warmed = True
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        policy = QSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextBrowserInteraction
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        # Transparent (the row's own background shows through), by its palette: see ``tint``.
        self.viewport().setAutoFillBackground(False)
        # The viewport takes the whole view now that it has no frame (Qt would do it with the
        # first resize): a viewport still inset by the old frame made the first
        # ``heightForWidth`` lay the text out twice, and the second time at the view's default
        # width of 100 px, not the one asked for. A style sheet used to do this as it polished.
        self.setViewportMargins(0, 0, 0, 0)
        palette = self.palette()
        palette.setColor(QPalette.ColorRole.Base, QColor(0, 0, 0, 0))
        self.setPalette(palette)
        self.document().setDocumentMargin(2)
        self.document().setUndoRedoEnabled(False)
        # The height follows the content: a layout holding the view must ask again.
        self.document().documentLayout().documentSizeChanged.connect(self.updateGeometry)
        self.anchorClicked.connect(self._on_anchor)

    def createMimeDataFromSelection(self) -> QMimeData:
        """A selection copies the text shown without the break opportunities the display
        inserted in long runs (``long_text``)."""
        data = super().createMimeDataFromSelection()
        clean = QMimeData()
        if data.hasHtml():
            clean.setHtml(strip_breaks(data.html()))
        if data.hasText():
            clean.setText(strip_breaks(data.text()))
        return clean

    def loadResource(self, type: int, name: QUrl | str) -> Any:
        """Refuse every resource: model output must never trigger a fetch."""
        return None

    def _on_anchor(self, url: QUrl) -> None:
        if url.scheme() == COPY_SCHEME:
            try:
                self.copy_code_requested.emit(int(url.path() or url.toString().split(":", 1)[1]))
            except ValueError:
                pass
            return
        if is_safe_link(url):
            QDesktopServices.openUrl(url)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        doc = self.document()
        margins = self.contentsMargins()
        text_width = max(1, width - margins.left() - margins.right())
        # Setting the width, even unchanged, lays the whole document out again.
        if doc.textWidth() != text_width:
            doc.setTextWidth(text_width)
        return max(8, math.ceil(doc.size().height()) + margins.top() + margins.bottom())

    def resizeEvent(self, event: QResizeEvent) -> None:
        if (
            event.size().width() != event.oldSize().width()
            and self.document().textWidth() == self.viewport().width()
        ):
            # Laid out at this width already (``heightForWidth``, just before the view is
            # placed): Qt would lay the whole document out again (a 16 KB part of a long
            # message: 1.5 ms when it is first shown).
            return
        super().resizeEvent(event)

    def wheelEvent(self, event: QWheelEvent) -> None:
        # The transcript scrolls, not the block: hand the wheel on.
        event.ignore()

    def sizeHint(self) -> QSize:
        # The height at the width the document is laid out for: laying it out again at the
        # view's current width (100 px before its first layout) would cost a full layout of a
        # long text at a useless width.
        doc = self.document()
        if doc.textWidth() <= 0:
            return QSize(super().sizeHint().width(), 8)
        margins = self.contentsMargins()
        height = math.ceil(doc.size().height()) + margins.top() + margins.bottom()
        return QSize(super().sizeHint().width(), max(8, height))

    def minimumSizeHint(self) -> QSize:
        return QSize(super().minimumSizeHint().width(), 8)


class ElidedLabel(QLabel):
    """One line of plain text that ends in "…" where it does not fit, never cut mid-word; the
    whole text is its tooltip while it is shortened. ``text()`` is always the whole text.

    For a one-line preview or a status line beside other widgets: a layout may make it as
    narrow as a few characters (``minimumSizeHint``), it asks for its whole text
    (``sizeHint``)."""

    MIN_CHARS = 6

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        set_enum_property(self, "textFormat", "PlainText")  # may be before the first paint
        self.setWordWrap(False)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self._tip = ""
        self.setText(text)

    def setText(self, text: str) -> None:
        super().setText(text)
        self._update_tip()

    def setToolTip(self, tip: str) -> None:
        self._tip = tip
        self._update_tip()

    def shown_text(self) -> str:
        """The text as drawn at the current width ("…" at the end when shortened)."""
        text = self.text()
        if not text:
            return text  # (as the window's first paint has it: no Qt.* read, see qt_namespace)
        return self.fontMetrics().elidedText(
            text, Qt.TextElideMode.ElideRight, max(0, self.contentsRect().width())
        )

    @property
    def elided(self) -> bool:
        return self.shown_text() != self.text()

    def _update_tip(self) -> None:
        whole = self.text()
        if self.elided and whole:
            tip = f"{whole}\n\n{self._tip}" if self._tip else whole
        else:
            tip = self._tip
        super().setToolTip(tip)

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        margins = self.contentsMargins()
        room = self.fontMetrics().averageCharWidth() * self.MIN_CHARS
        return QSize(min(hint.width(), room + margins.left() + margins.right()), hint.height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._update_tip()

    def paintEvent(self, event: QPaintEvent) -> None:
        if not self.text():
            return  # nothing to draw (and the window's first paint need not load QStyle)
        painter = QPainter(self)
        self.style().drawItemText(
            painter,
            self.contentsRect(),
            int(self.alignment()),
            self.palette(),
            self.isEnabled(),
            self.shown_text(),
            self.foregroundRole(),
        )
        painter.end()


def tool_button(
    icon_name: str,
    tooltip: str,
    accessible_name: str,
    parent: QWidget | None = None,
    text: str = "",
) -> QToolButton:
    """A flat icon button with the accessible name and tooltip every control must have."""
    button = QToolButton(parent)
    button.setIcon(icon(icon_name))
    button.setIconSize(QSize(16, 16))
    button.setToolTip(tooltip)
    button.setAccessibleName(accessible_name)
    button.setAutoRaise(True)
    button.installEventFilter(_pointer_on_hover())
    if text:
        button.setText(text)
        set_enum_property(button, "toolButtonStyle", "ToolButtonTextBesideIcon")
    return button


class PointerOnHover(QObject):
    """Gives a widget the pointing-hand cursor when the pointer first enters it, then leaves it.

    A cursor shows only while the pointer is over its widget, and setting it takes a Qt.*
    enum: the buttons built before the window's first paint must not read one (see
    ``qt_namespace``), so theirs is set when it is first seen."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Enter and isinstance(watched, QWidget):
            watched.setCursor(Qt.CursorShape.PointingHandCursor)
            watched.removeEventFilter(self)
        return False


@cache
def _pointer_on_hover() -> PointerOnHover:
    """The one filter every button shares, made with the first."""
    return PointerOnHover()


class Spinner(QWidget):
    """A small rotating arc drawn in the palette's highlight colour."""

    def __init__(self, parent: QWidget | None = None, size: int = 14) -> None:
        super().__init__(parent)
        self._angle = 0
        self._timer = QTimer(self)
        self._timer.setInterval(50)
        self._timer.timeout.connect(self._advance)
        self.setFixedSize(size, size)
        self.setAccessibleName("Working")

    def start(self) -> None:
        self._timer.start()
        self.show()

    def stop(self) -> None:
        self._timer.stop()
        self.hide()

    @property
    def spinning(self) -> bool:
        return self._timer.isActive()

    def _advance(self) -> None:
        self._angle = (self._angle + 30) % 360
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        color = QColor(QGuiApplication.palette().color(QPalette.ColorRole.Highlight))
        pen = QPen(color, 2)
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        painter.setPen(pen)
        rect = self.rect().adjusted(2, 2, -2, -2)
        painter.drawArc(rect, -self._angle * 16, 270 * 16)
        painter.end()
