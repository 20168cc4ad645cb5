"""The composer's completion list of slash commands: it shows while a command word is typed,
lists the commands that match (a refused one disabled, with the reason), moves with ↑/↓ over
the enabled ones, completes with Tab and runs with Enter or a click.

``SlashPopup`` is a group of ``Composer``'s methods (``widget``), which builds the list
(``popup``) and hands it the keys.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QListWidget, QListWidgetItem, QWidget

from ..runtime.qt_namespace import Qt

# The slash commands (app.ui.controller.commands) are imported where used: not before the first
# paint.
if TYPE_CHECKING:
    from ..controller.commands import CommandSpec
    from .edit import ComposerEdit

# Why Send, and a command the list offers, is refused while a turn runs (the composer's too).
BUSY_REASON = "Wait for the reply to finish, or press Stop (Esc)"


class SlashPopup(QWidget):
    """The slash-command list of the composer (see the module docstring)."""

    popup: QListWidget
    edit: ComposerEdit
    compact_block_reason: str

    if TYPE_CHECKING:  # Composer's

        def set_text(self, text: str) -> None: ...

        def submit(self) -> None: ...

        def show_hint(self, text: str, kind: str = "warning") -> None: ...

    def _update_popup(self, text: str) -> None:
        # The list shows while the command word is being typed (no space or newline yet).
        typing_command = text.startswith("/") and not text.startswith("//") and not any(
            ch.isspace() for ch in text
        )
        if typing_command:
            from ..controller.commands import completions

            specs = completions(text)
        else:
            specs = []
        if not specs:
            self.popup.hide()
            return
        self.popup.clear()
        for spec in specs:
            item = QListWidgetItem(f"{spec.usage}  —  {spec.help}")
            item.setData(Qt.ItemDataRole.UserRole, spec.name)
            item.setToolTip(spec.help)
            if spec.name == "compact" and self.compact_block_reason:
                item.setText(f"{spec.usage}  —  {self.compact_block_reason}")
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled)
            self.popup.addItem(item)
        self.popup.setCurrentRow(self._first_enabled_row())
        row_height = self.popup.sizeHintForRow(0) if self.popup.count() else 20
        self.popup.setFixedHeight(row_height * len(specs) + 2 * self.popup.frameWidth() + 2)
        self.popup.show()

    def _first_enabled_row(self) -> int:
        for index in range(self.popup.count()):
            if self.popup.item(index).flags() & Qt.ItemFlag.ItemIsEnabled:
                return index
        return 0

    def popup_commands(self) -> list[str]:
        """The names listed in the completion popup (empty when hidden)."""
        if not self.popup.isVisible():
            return []
        return [
            str(self.popup.item(i).data(Qt.ItemDataRole.UserRole)) for i in range(self.popup.count())
        ]

    def _spec_of(self, item: QListWidgetItem | None) -> CommandSpec | None:
        from ..controller.commands import completions

        if item is None:
            return None
        name = item.data(Qt.ItemDataRole.UserRole)
        return next((s for s in completions("/") if s.name == name), None)

    def _accept_item(self, item: QListWidgetItem | None, run: bool = False) -> None:
        spec = self._spec_of(item)
        if spec is None:
            return
        if not (item and item.flags() & Qt.ItemFlag.ItemIsEnabled):
            self.show_hint(self.compact_block_reason or BUSY_REASON)
            return
        if spec.takes_argument and not run:
            self.set_text(f"/{spec.name} ")
        else:
            self.set_text(f"/{spec.name}")
        self.popup.hide()
        if run and not spec.needs_argument:
            self.submit()
        elif run:
            self.set_text(f"/{spec.name} ")
        self.edit.setFocus()

    def _move_selection(self, step: int) -> None:
        count = self.popup.count()
        if not count:
            return
        row = self.popup.currentRow()
        for _ in range(count):
            row = (row + step) % count
            if self.popup.item(row).flags() & Qt.ItemFlag.ItemIsEnabled:
                break
        self.popup.setCurrentRow(row)

