"""What the composer does with a pasted-text chip: show its text (with Edit and Remove), put
the text itself in its place to edit it, or take it out (Ctrl+Z gives the chip back).

``ChipActions`` is a group of ``Composer``'s methods (``widget``); the text box calls them from
a chip's context menu and on a double-click.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QWidget

# QTextCharFormat and QTextCursor are imported where used: creating their Python types costs
# time, and nothing needs them before the window's first paint.
if TYPE_CHECKING:
    from PySide6.QtGui import QTextCursor

    from .edit import ComposerEdit
    from .paste_viewer import PastedTextDialog


class ChipActions(QWidget):
    """The chip actions of the composer (see the module docstring)."""

    edit: ComposerEdit
    chip_dialog: PastedTextDialog | None

    def view_chip(self, position: int) -> PastedTextDialog | None:
        """Show the text of the chip at ``position``, with Edit and Remove."""
        text = self.edit.chips.text_of(position)
        if text is None:
            return None
        from .paste_viewer import PastedTextDialog  # with the first chip viewed

        dialog = PastedTextDialog(text, self)

        def edit() -> None:
            dialog.accept()
            self.expand_chip(position)

        def remove() -> None:
            dialog.accept()
            self.remove_chip(position)

        dialog.edit_button.clicked.connect(edit)
        dialog.remove_button.clicked.connect(remove)
        dialog.finished.connect(lambda _result: self.edit.setFocus())
        dialog.finished.connect(dialog.deleteLater)
        self.chip_dialog = dialog
        dialog.open()
        return dialog

    def expand_chip(self, position: int) -> None:
        """Put the chip's text itself in its place, to edit it (Ctrl+Z gives the chip back)."""
        from PySide6.QtGui import QTextCharFormat

        text = self.edit.chips.text_of(position)
        if text is None:
            return
        cursor = self._chip_cursor(position)
        self.edit.prepare_for(text)
        cursor.insertText(text, QTextCharFormat())
        self.edit.setTextCursor(cursor)
        self.edit.setFocus()

    def remove_chip(self, position: int) -> None:
        """Take the chip out of the message (Ctrl+Z gives it back)."""
        if self.edit.chips.text_of(position) is None:
            return
        cursor = self._chip_cursor(position)
        cursor.removeSelectedText()
        self.edit.setTextCursor(cursor)
        self.edit.setFocus()

    def _chip_cursor(self, position: int) -> QTextCursor:
        from PySide6.QtGui import QTextCursor

        cursor = QTextCursor(self.edit.document())
        cursor.setPosition(position)
        cursor.setPosition(position + 1, QTextCursor.MoveMode.KeepAnchor)
        return cursor

