"""The Model view's items can be read in full (issue 16, item 8): the selected item is shown
wrapped below the list, and double-click or Enter opens it in a read-only window."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QPushButton

from app.demo import Reply

from ..helpers import type_and_send, wait_idle

LONG = "The packing list: " + ", ".join(f"item number {n}" for n in range(60)) + ". The end."


def long_message_in_model_view(qtbot: Any, make_window: Any, server: Any) -> tuple[Any, Any]:
    """A window whose conversation holds LONG and a reply, with the Model view open."""
    window = make_window()
    server.enqueue(Reply(text="noted"))
    type_and_send(qtbot, window, LONG)
    wait_idle(qtbot, window)
    window.model_view_action.trigger()
    panel = window.model_view
    qtbot.waitUntil(lambda: len(panel.rows) == 2, timeout=5000)
    return window, panel


def test_the_selected_item_is_shown_in_full_below_the_list(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window, panel = long_message_in_model_view(qtbot, make_window, server)
    assert panel.details.toPlainText() == ""  # nothing selected yet: the hint says what to do
    assert "double-click" in panel.details.placeholderText()

    panel.tree.setFocus()
    qtbot.keyClick(panel.tree, Qt.Key.Key_End)  # the keyboard moves through the items
    qtbot.keyClick(panel.tree, Qt.Key.Key_Home)
    assert panel.tree.indexOfTopLevelItem(panel.tree.currentItem()) == 0
    shown = panel.details.toPlainText()
    assert shown.startswith("#1 · user · message · ")
    assert shown.endswith(LONG)  # the whole text, not the 200-character preview
    assert panel.details.isReadOnly()
    assert panel.details.lineWrapMode() == panel.details.LineWrapMode.WidgetWidth

    # The list is refreshed after the next turn: the item read stays selected.
    server.enqueue(Reply(text="second answer"))
    type_and_send(qtbot, window, "and another")
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: len(panel.rows) == 4, timeout=5000)
    assert panel.details.toPlainText().endswith(LONG)


def test_enter_and_double_click_open_the_item_in_a_window(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    _window, panel = long_message_in_model_view(qtbot, make_window, server)
    tree = panel.tree
    tree.setFocus()
    tree.setCurrentItem(tree.topLevelItem(0))
    qtbot.keyClick(tree, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.dialog is not None and panel.dialog.isVisible(), timeout=3000)
    dialog = panel.dialog
    assert dialog.text.toPlainText() == LONG
    assert dialog.text.isReadOnly()
    assert dialog.heading.text().startswith("#1 · user · message")
    copy = next(b for b in dialog.findChildren(QPushButton) if b.text() == "Copy")
    copy.click()
    assert QGuiApplication.clipboard().text() == LONG
    dialog.close()
    qtbot.waitUntil(lambda: panel.dialog is None, timeout=3000)

    rect = tree.visualItemRect(tree.topLevelItem(1))
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: panel.dialog is not None and panel.dialog.isVisible(), timeout=3000)
    assert panel.dialog.text.toPlainText() == "noted"
    assert panel.dialog.heading.text().startswith("#2 · assistant · message")
    panel.dialog.close()
