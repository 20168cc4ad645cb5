"""A long paste is held as a chip in the composer (``app/ui/composer/paste_chips.py``): one character in
the box, drawn with its size, removable, viewable, and sent as the text it holds, exactly as if
that text had been typed in its place. Driven through the real window, keys and clipboard."""

from __future__ import annotations

import random
from typing import Any

from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtGui import QGuiApplication, QHelpEvent
from PySide6.QtWidgets import QApplication, QMenu, QToolTip

from app.demo import Reply
from app.ui.composer.paste_chips import CHIP_CHARS, OBJECT

from ..helpers import last_user_text, wait_idle

CTRL = Qt.KeyboardModifier.ControlModifier


def hex_text(chars: int) -> str:
    rng = random.Random(chars)
    return "".join(rng.choices("0123456789abcdef", k=chars))


def paste(qtbot: Any, window: Any, text: str) -> None:
    """Ctrl+V of ``text`` from the clipboard into the composer."""
    QGuiApplication.clipboard().setText(text)
    edit = window.composer.edit
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_V, CTRL)


def chip_count(window: Any) -> int:
    return len(window.composer.edit.chips.chips())


def test_a_long_paste_is_a_chip_and_is_sent_as_typed_in_its_place(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    edit = window.composer.edit
    pasted = hex_text(128_000)
    edit.setFocus()
    qtbot.keyClicks(edit, "check this: ")
    paste(qtbot, window, pasted)
    qtbot.keyClicks(edit, " thanks")
    # The box holds one character for it, not the text to lay out.
    assert edit.toPlainText() == f"check this: {OBJECT} thanks"
    assert chip_count(window) == 1
    assert "128,000 characters" in edit.accessibleDescription()
    assert window.composer.text() == f"check this: {pasted} thanks"

    server.enqueue(Reply(text="Got it."))
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    wait_idle(qtbot, window)
    sent = f"check this: {pasted} thanks"
    assert window.transcript.message_rows("user")[-1].text == sent
    assert last_user_text(server.requests_to("responses")[-1].body) == sent
    assert window.composer.text() == "" and chip_count(window) == 0
    assert edit.accessibleDescription() == ""


def test_a_short_paste_stays_text_in_the_box(qtbot: Any, make_window: Any) -> None:
    window = make_window()
    pasted = hex_text(CHIP_CHARS)
    paste(qtbot, window, pasted)
    assert window.composer.edit.toPlainText() == pasted
    assert chip_count(window) == 0


def test_backspace_removes_the_chip_and_ctrl_z_brings_it_back(
    qtbot: Any, make_window: Any
) -> None:
    window = make_window()
    edit = window.composer.edit
    pasted = hex_text(50_000)
    edit.setFocus()
    qtbot.keyClicks(edit, "a")
    paste(qtbot, window, pasted)
    assert window.composer.text() == "a" + pasted
    qtbot.keyClick(edit, Qt.Key.Key_Backspace)  # the chip is one character
    assert window.composer.text() == "a" and chip_count(window) == 0
    qtbot.keyClick(edit, Qt.Key.Key_Z, CTRL)
    assert window.composer.text() == "a" + pasted and chip_count(window) == 1
    qtbot.keyClick(edit, Qt.Key.Key_Left)  # the cursor steps over it in one key
    qtbot.keyClick(edit, Qt.Key.Key_Delete)
    assert window.composer.text() == "a"
    qtbot.keyClick(edit, Qt.Key.Key_Z, CTRL)
    assert window.composer.text() == "a" + pasted
    qtbot.keyClick(edit, Qt.Key.Key_Z, CTRL)  # undoing the paste itself
    assert window.composer.text() == "a"


def test_copying_or_cutting_a_chip_copies_its_text(qtbot: Any, make_window: Any) -> None:
    window = make_window()
    edit = window.composer.edit
    pasted = "line one\n" + hex_text(30_000) + "\nline three"
    edit.setFocus()
    qtbot.keyClicks(edit, "x ")
    paste(qtbot, window, pasted)
    qtbot.keyClick(edit, Qt.Key.Key_A, CTRL)
    qtbot.keyClick(edit, Qt.Key.Key_C, CTRL)
    assert QGuiApplication.clipboard().text() == "x " + pasted
    # Cut and paste back elsewhere: the text moves as a chip again, whole.
    qtbot.keyClick(edit, Qt.Key.Key_X, CTRL)
    assert window.composer.text() == ""
    qtbot.keyClicks(edit, "y ")
    qtbot.keyClick(edit, Qt.Key.Key_V, CTRL)
    assert window.composer.text() == "y x " + pasted
    assert chip_count(window) == 1
    assert "3 lines" in edit.accessibleDescription()


def run_menu_action(qtbot: Any, window: Any, label: str) -> None:
    """Open the composer's context menu from the keyboard (the Menu key) and choose ``label``."""
    edit = window.composer.edit
    chosen: list[str] = []

    def choose() -> None:
        menu = QApplication.activePopupWidget()
        if not isinstance(menu, QMenu):
            QTimer.singleShot(10, choose)
            return
        action = next(a for a in menu.actions() if a.text() == label)
        chosen.append(action.text())
        menu.setActiveAction(action)
        qtbot.keyClick(menu, Qt.Key.Key_Return)

    QTimer.singleShot(0, choose)
    qtbot.keyClick(edit, Qt.Key.Key_Menu)
    qtbot.waitUntil(lambda: chosen == [label] and edit.open_menu is None)


def test_the_chip_is_viewed_edited_or_removed_from_the_keyboard(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    composer, edit = window.composer, window.composer.edit
    pasted = hex_text(40_000)
    paste(qtbot, window, pasted)  # the cursor is right after the chip

    run_menu_action(qtbot, window, "View pasted text…")
    dialog = composer.chip_dialog
    assert dialog is not None
    qtbot.waitUntil(dialog.isVisible)
    assert dialog.view.toPlainText() == pasted and "40,000 characters" in dialog.summary.text()
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not dialog.isVisible())
    assert window.composer.text() == pasted  # viewing changes nothing

    run_menu_action(qtbot, window, "Edit pasted text in the box")
    assert edit.toPlainText() == pasted and chip_count(window) == 0
    qtbot.keyClick(edit, Qt.Key.Key_Z, CTRL)  # back to the chip
    assert edit.toPlainText() == OBJECT and window.composer.text() == pasted

    run_menu_action(qtbot, window, "Remove pasted text")
    assert window.composer.text() == ""
    qtbot.keyClick(edit, Qt.Key.Key_Z, CTRL)
    assert window.composer.text() == pasted


def test_the_viewer_edits_or_removes_the_chip_it_shows(qtbot: Any, make_window: Any) -> None:
    window = make_window()
    composer = window.composer
    pasted = hex_text(20_000)
    paste(qtbot, window, pasted)
    position = composer.edit.chips.at_cursor()
    assert position == 0

    dialog = composer.view_chip(position)
    assert dialog is not None
    qtbot.mouseClick(dialog.remove_button, Qt.MouseButton.LeftButton)
    assert composer.text() == "" and not dialog.isVisible()
    qtbot.keyClick(composer.edit, Qt.Key.Key_Z, CTRL)
    assert composer.text() == pasted

    dialog = composer.view_chip(0)
    assert dialog is not None
    qtbot.mouseClick(dialog.edit_button, Qt.MouseButton.LeftButton)
    assert composer.edit.toPlainText() == pasted and chip_count(window) == 0


def test_a_long_text_put_back_in_the_composer_is_a_chip(qtbot: Any, make_window: Any) -> None:
    window = make_window()
    long_text = "a draft\n" + hex_text(20_000)
    window.composer.set_text(long_text)
    assert window.composer.edit.toPlainText() == OBJECT
    assert window.composer.text() == long_text
    window.composer.set_text("short")
    assert window.composer.text() == "short" and chip_count(window) == 0


def test_double_clicking_the_chip_shows_its_text(qtbot: Any, make_window: Any) -> None:
    from PySide6.QtGui import QTextCursor

    window = make_window()
    edit = window.composer.edit
    pasted = hex_text(15_000)
    edit.setFocus()
    qtbot.keyClicks(edit, "see ")
    paste(qtbot, window, pasted)
    qtbot.keyClicks(edit, " here")
    before, after = QTextCursor(edit.document()), QTextCursor(edit.document())
    before.setPosition(4)
    after.setPosition(5)
    left, right = edit.cursorRect(before), edit.cursorRect(after)
    middle = left.center()
    middle.setX((left.left() + right.left()) // 2)
    assert edit.chips.at_point(middle) == 4
    # Hovering it says what it holds and how to act on it.
    hover = QHelpEvent(QEvent.Type.ToolTip, middle, edit.viewport().mapToGlobal(middle))
    QApplication.sendEvent(edit.viewport(), hover)
    qtbot.waitUntil(QToolTip.isVisible)
    assert QToolTip.text().startswith("Pasted text · 15,000 characters\n\n" + pasted[:40])
    QToolTip.hideText()
    qtbot.mouseDClick(edit.viewport(), Qt.MouseButton.LeftButton, pos=middle)
    dialog = window.composer.chip_dialog
    assert dialog is not None
    qtbot.waitUntil(dialog.isVisible)
    assert dialog.view.toPlainText() == pasted
    dialog.reject()
    # A double-click on typed text selects a word as ever.
    qtbot.mouseDClick(edit.viewport(), Qt.MouseButton.LeftButton, pos=edit.cursorRect().center())
    assert window.composer.chip_dialog is dialog
