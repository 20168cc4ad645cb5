"""The conveniences inside the real window: Help menu, shortcut list, composer keys,
notifications, and a second launch focusing the window."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence

from app import __version__
from app.demo import Reply
from app.main import _focus_window
from app.ui.window.help_dialogs import COMPOSER_GROUP, COMPOSER_KEYS, AboutDialog, ShortcutsDialog
from app.ui.window.notifications import Notifications
from tests.ui.helpers import type_and_send, wait_idle


def test_help_menu_has_shortcuts_and_about(qtbot: Any, make_window: Any) -> None:
    window = make_window()
    menus = {a.text(): a.menu() for a in window.menuBar().actions()}
    help_actions = [a.objectName() for a in menus["&Help"].actions()]
    assert help_actions == ["shortcuts", "about"]
    assert window.shortcuts_action.shortcut() == QKeySequence("F1")


def test_shortcuts_dialog_lists_every_bound_key_of_the_window(
    qtbot: Any, make_window: Any
) -> None:
    window = make_window()
    dialog = window.show_shortcuts()
    assert isinstance(dialog, ShortcutsDialog)
    native = QKeySequence.SequenceFormat.NativeText
    listed = {keys for _group, _action, keys in dialog.rows()}
    bound = {a.shortcut().toString(native) for a in window.actions() if not a.shortcut().isEmpty()}
    assert bound and bound <= listed
    rows = {(group, action): keys for group, action, keys in dialog.rows()}
    assert rows[("Session", "Compact")] == QKeySequence("Ctrl+K").toString(native)
    assert rows[("Help", "Keyboard shortcuts")] == "F1"
    dialog.close()


def test_composer_keys_listed_in_help_do_what_they_say(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    server.enqueue(Reply(text="ok"))
    assert {d for d, _k in COMPOSER_KEYS} == {
        "Send the message", "New line", "Choose a slash command",
        "Close the command list or the hint",
    }
    composer, edit = window.composer, window.composer.edit
    # Shift+Enter: a new line, nothing sent.
    qtbot.keyClicks(edit, "line one")
    qtbot.keyClick(edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(edit, "line two")
    assert composer.text() == "line one\nline two"
    # Enter: sends.
    with qtbot.waitSignal(composer.message_submitted, timeout=2000) as sent:
        qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert sent.args == ["line one\nline two"]
    wait_idle(qtbot, window)
    # Up / Down and Tab: choose and complete a slash command.
    edit.clear()
    qtbot.keyClicks(edit, "/")
    first = composer.popup.currentRow()
    qtbot.keyClick(edit, Qt.Key.Key_Down)
    assert composer.popup.currentRow() != first
    qtbot.keyClick(edit, Qt.Key.Key_Up)
    assert composer.popup.currentRow() == first
    qtbot.keyClick(edit, Qt.Key.Key_Tab)
    assert composer.text().startswith("/") and composer.text().endswith(" ")
    # Esc: closes the command list.
    edit.clear()
    qtbot.keyClicks(edit, "/")
    assert composer.popup.isVisible()
    qtbot.keyClick(edit, Qt.Key.Key_Escape)
    assert not composer.popup.isVisible()
    dialog = window.show_shortcuts()
    assert (COMPOSER_GROUP, "New line", "Shift+Enter") in dialog.rows()
    dialog.close()


def test_about_shows_this_profiles_folders(qtbot: Any, make_window: Any, tmp_path: Any) -> None:
    window = make_window()
    dialog = window.show_about()
    assert isinstance(dialog, AboutDialog)
    text = dialog.details_text()
    assert f"Coco {__version__}" in text
    assert f"Data: {tmp_path / 'data'}" in text
    assert f"Settings: {tmp_path / 'config'}" in text
    assert f"Sessions: {tmp_path / 'data' / 'sessions'}" in text
    assert "Profile: isolated" in text
    dialog.close()


class RecordingSink:
    def __init__(self) -> None:
        self.shown: list[tuple[str, str]] = []

    def available(self) -> bool:
        return True

    def show(self, title: str, message: str) -> None:
        self.shown.append((title, message))


def background_notifications(window: Any) -> RecordingSink:
    """Swap in notifications that see the window as inactive and record what they show."""
    sink = RecordingSink()
    window.notifications = Notifications(
        window, enabled=lambda: bool(window.context.settings.notifications), sink=sink,
        is_active=lambda: False,
    )
    return sink


def compact_once(qtbot: Any, window: Any, server: Any) -> None:
    server.enqueue(Reply(text="an answer"))
    type_and_send(qtbot, window, "a question")
    wait_idle(qtbot, window)
    server.enqueue(Reply(text="SUMMARY: a question was answered."))
    window.compact_action.trigger()
    qtbot.waitUntil(lambda: bool(window.transcript.compaction_rows()), timeout=5000)
    wait_idle(qtbot, window)


def test_compaction_in_the_background_notifies(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    sink = background_notifications(window)
    compact_once(qtbot, window, server)
    assert [title for title, _m in sink.shown] == ["Coco: Context compacted"]
    assert "→" in sink.shown[0][1]


def test_notifications_setting_off_is_honoured(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window(settings={"notifications": False})
    sink = background_notifications(window)
    compact_once(qtbot, window, server)
    assert window.transcript.compaction_rows()
    assert sink.shown == []


def test_the_windows_own_notifications_follow_the_session_and_raise_the_window(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    # Built with the first session (not before the window's first paint), and wired.
    window = make_window()
    notifications = window.notifications
    assert isinstance(notifications, Notifications)
    assert window.notifications is notifications  # one for the window's life
    server.enqueue(Reply(text="an answer"))
    type_and_send(qtbot, window, "a question")
    wait_idle(qtbot, window)
    window.showMinimized()
    qtbot.waitUntil(window.isMinimized)
    notifications.activated.emit()  # the user clicked a notification
    qtbot.waitUntil(lambda: not window.isMinimized())


def test_second_launch_message_focuses_and_opens_the_session(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    server.enqueue(Reply(text="first"))
    type_and_send(qtbot, window, "remember this session")
    wait_idle(qtbot, window)
    first_id = window.session.id
    window.start_new_session()
    qtbot.waitUntil(lambda: window.session is not None and window.session.id != first_id,
                    timeout=5000)
    window.showMinimized()

    _focus_window(window, f"focus {first_id}")
    assert not window.isMinimized()
    qtbot.waitUntil(lambda: window.session is not None and window.session.id == first_id,
                    timeout=5000)
    assert [r.text for r in window.transcript.message_rows("user")] == ["remember this session"]

    _focus_window(window, "nonsense")  # not one of ours: ignored
    assert window.session.id == first_id
