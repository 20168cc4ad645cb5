"""The find-in-conversation bar (Ctrl+F): the user runs the recall search over the whole
conversation, also what compaction removed from the model's view, and steps through the matches.

The bar only asks (``search_requested``) and shows the core's ``ConversationMatches`` answer;
stepping to a match asks the window to bring its row into view (``match_chosen``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QLineEdit, QSizePolicy, QToolButton, QWidget

from ..style.widgets import ElidedLabel

if TYPE_CHECKING:
    from app.core import protocol as p

QUERY_WIDTH = 320  # the query field's width, in pixels (it never shrinks as the result grows)

ROLE_WORDS = {
    "user": "your message",
    "assistant": "the assistant",
    "tool": "tool output",
    "summary": "a compaction summary",
}


def describe_match(match: p.ConversationMatch) -> str:
    """Where a match is, in words: "turn 3 · tool output (read_file) · not in the model's view"."""
    what = ROLE_WORDS.get(match.role, match.role)
    if match.tool:
        what = f"{what} ({match.tool})" if match.role == "tool" else f"call to {match.tool}"
    turn = f"turn {match.turn}" if match.turn else "before the first message"
    view = "in the model's view" if match.in_view else "not in the model's view"
    if not match.on_branch:
        view = "on another branch"
    return f"{turn} · {what} · {view}"


class _QueryEdit(QLineEdit):
    """The query field: Esc closes the bar (not the window's Stop), Enter/Shift+Enter step."""

    closed = Signal()
    step = Signal(int)

    def event(self, event: QEvent) -> bool:
        if (
            event.type() == QEvent.Type.ShortcutOverride
            and isinstance(event, QKeyEvent)
            and event.key() == Qt.Key.Key_Escape
        ):
            event.accept()  # ours, before the window's Esc (Stop)
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.closed.emit()
            return
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            shift = event.modifiers() & Qt.KeyboardModifier.ShiftModifier
            self.step.emit(-1 if shift else 1)
            return
        super().keyPressEvent(event)


class FindBar(QWidget):
    """A query field, where the current match is, previous/next, close."""

    search_requested = Signal(str)
    match_chosen = Signal(object)  # a ConversationMatch
    closed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Find in conversation")
        row = QHBoxLayout(self)
        row.setContentsMargins(8, 4, 8, 4)
        self.query = _QueryEdit(self)
        self.query.setPlaceholderText("Find in the whole conversation (also what was compacted)")
        self.query.setAccessibleName("Find in conversation")
        self.query.setClearButtonEnabled(True)
        self.query.step.connect(self._step_or_search)
        self.query.closed.connect(self.close_bar)
        self.query.textEdited.connect(lambda _text: self._forget())
        # The field keeps its width whatever the result says: the label beside it takes the
        # room left and shortens its text with "…" (the whole of it in its tooltip).
        self.query.setMinimumWidth(QUERY_WIDTH)
        self.query.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        row.addWidget(self.query)
        self.status = ElidedLabel("", self)
        self.status.setAccessibleName("Find result")
        self.status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        row.addWidget(self.status, 1)
        self.previous_button = self._button("↑", "Previous match (Shift+Enter)", -1)
        self.next_button = self._button("↓", "Next match (Enter)", 1)
        row.addWidget(self.previous_button)
        row.addWidget(self.next_button)
        self.close_button = QToolButton(self)
        self.close_button.setText("✕")
        self.close_button.setToolTip("Close (Esc)")
        self.close_button.setAccessibleName("Close find")
        self.close_button.clicked.connect(self.close_bar)
        row.addWidget(self.close_button)
        self.matches: list[p.ConversationMatch] = []
        self.current = -1
        self._searched = ""  # the query the matches answer
        self._forget()

    def _button(self, text: str, tip: str, step: int) -> QToolButton:
        button = QToolButton(self)
        button.setText(text)
        button.setToolTip(tip)
        button.setAccessibleName(tip)
        button.clicked.connect(lambda: self.step(step))
        return button

    @property
    def searched(self) -> str:
        """The query the matches shown answer ("" before any)."""
        return self._searched

    def open_bar(self) -> None:
        self.show()
        self.query.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.query.selectAll()

    def close_bar(self) -> None:
        self.hide()
        self.closed.emit()

    def _forget(self) -> None:
        self.matches, self.current, self._searched = [], -1, ""
        self.previous_button.setEnabled(False)
        self.next_button.setEnabled(False)

    def _step_or_search(self, step: int) -> None:
        text = self.query.text().strip()
        if text and text == self._searched and self.matches:
            self.step(step)
        elif text:
            self._searched = text
            self.status.setText("Searching…")
            self.search_requested.emit(text)

    def show_matches(self, event: p.ConversationMatches) -> None:
        """The core's answer: say how many, and go to the best match."""
        if event.query.strip() != self._searched:
            return  # the answer to an older query
        self.matches = list(event.matches)
        self.current = -1
        many = len(self.matches) > 1
        self.previous_button.setEnabled(many)
        self.next_button.setEnabled(many)
        if not self.matches:
            self.status.setText(event.message or "No match.")
            return
        self.step(1)

    def step(self, step: int) -> None:
        if not self.matches:
            return
        self.current = (self.current + step) % len(self.matches)
        match = self.matches[self.current]
        self.status.setText(
            f"{self.current + 1} of {len(self.matches)}: {describe_match(match)}"
        )
        self.status.setToolTip(match.excerpt)
        self.match_chosen.emit(match)
