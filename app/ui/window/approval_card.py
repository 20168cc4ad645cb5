"""The approval card: an MCP tool call waiting for the user, shown above the composer with the
server, the tool and its arguments, and Allow once / Always allow this tool / Deny. The card
answers with ``ApproveToolCall``; it goes when the core says the call was answered or cancelled
(Stop), so it never outlives the call. Calls waiting together are shown one after another."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ..runtime.qt_namespace import set_enum_property

if TYPE_CHECKING:
    from app.core import protocol as p

MAX_ARGUMENT_CHARS = 4000  # what the card shows of very long arguments


class ApprovalCard(QFrame):
    """Shows the first waiting call; ``answer(call_id, decision)`` submits the user's answer."""

    def __init__(self, answer: Callable[[str, str], object], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("approvalCard")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self._answer = answer
        self._waiting: list[p.ToolApprovalRequested] = []
        layout = QVBoxLayout(self)
        self.title = QLabel(self)
        # Built before the first paint (no Qt.* member); names from a server are plain text.
        set_enum_property(self.title, "textFormat", "PlainText")
        self.title.setWordWrap(True)
        self.warning = QLabel(self)
        self.warning.setWordWrap(True)
        self.arguments = QPlainTextEdit(self)
        self.arguments.setReadOnly(True)
        self.arguments.setMaximumHeight(120)
        buttons = QHBoxLayout()
        self.allow_once = QPushButton("Allow once", self)
        self.allow_always = QPushButton("Always allow this tool", self)
        self.deny = QPushButton("Deny", self)
        for button, decision in (
            (self.allow_once, "once"), (self.allow_always, "always"), (self.deny, "deny")
        ):
            button.clicked.connect(lambda _=False, d=decision: self._decide(d))
            buttons.addWidget(button)
        buttons.addStretch(1)
        for widget in (self.title, self.warning, self.arguments):
            layout.addWidget(widget)
        layout.addLayout(buttons)
        self.hide()

    @property
    def call_id(self) -> str:
        """The call shown now ("" when none waits)."""
        return self._waiting[0].call_id if self._waiting else ""

    def handle_event(self, event: p.Event) -> None:
        if event.type == "tool_approval_requested":
            self._waiting.append(event)
        elif event.type == "tool_approval_resolved":
            self._waiting = [w for w in self._waiting if w.call_id != event.call_id]
        elif event.type in ("turn_complete", "shutdown_complete"):
            self._waiting.clear()  # a turn's calls end with it
        else:
            return
        self._show_first()

    def clear(self) -> None:
        """Another session is shown: its calls are not this one's."""
        self._waiting.clear()
        self._show_first()

    def _decide(self, decision: str) -> None:
        if self._waiting:
            self._answer(self._waiting[0].call_id, decision)
            for button in (self.allow_once, self.allow_always, self.deny):
                button.setEnabled(False)  # until the core says it was answered

    def _show_first(self) -> None:
        if not self._waiting:
            self.hide()
            return
        call = self._waiting[0]
        more = f" ({len(self._waiting) - 1} more waiting)" if len(self._waiting) > 1 else ""
        self.title.setText(
            f"The model wants to run {call.tool!r} of the MCP server {call.server!r}{more}."
        )
        self.title.setToolTip(call.description)
        self.warning.setText(
            "This tool says it may change or delete things." if call.destructive else ""
        )
        self.warning.setVisible(call.destructive)
        import json  # not before the first paint

        text = json.dumps(call.arguments, ensure_ascii=False, indent=2)
        if len(text) > MAX_ARGUMENT_CHARS:
            text = text[:MAX_ARGUMENT_CHARS] + f"\n… ({len(text) - MAX_ARGUMENT_CHARS:,} more)"
        self.arguments.setPlainText(text)
        for button in (self.allow_once, self.allow_always, self.deny):
            button.setEnabled(True)
        self.show()
