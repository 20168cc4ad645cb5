"""The sidebar: sessions newest first, a search box (titles and content), new, rename, delete.

Every change goes through the core's session library (``app.core.sessions.library.SessionLibrary``),
which coordinates with the open session: renaming it writes through the session's own writer,
and deleting it shuts it down before its file moves. Deleting asks first and moves the session
file to the trash folder; nothing is erased. The window gives the panel its ``deleter`` (the
session controller's, which also opens the next session of the list in place of a deleted open
one, or a new one when it was the last). The list
is read afresh on every refresh (first when the window opens its first session, then whenever
a turn has written to the open session), so sessions written by the open session show up.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QPoint, QTimer, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..controller.format import format_tokens
from ..runtime.qt_namespace import Qt, set_enum_property
from ..style.icons import icon
from ..style.widgets import tool_button
from .fork_groups import grouped, indented

if TYPE_CHECKING:
    import asyncio
    from datetime import datetime

    from app.core.sessions.library import SessionInfo, SessionLibrary

log = logging.getLogger(__name__)

# Qt.ItemDataRole.UserRole (0x100) and the next role: item data roles are plain ints to Qt, and
# reading Qt.* at import would build Qt's enums before the first paint (see qt_namespace).
ID_ROLE = 0x0100
TITLE_ROLE = ID_ROLE + 1


def when_text(stamp: str, now: datetime | None = None) -> str:
    """``2025-03-01T14:03:00Z`` → ``14:03`` today, ``Mar 1`` this year, else ``2024-03-01``."""
    from datetime import datetime  # not needed before the list is first filled

    try:
        moment = datetime.fromisoformat(stamp).astimezone()
    except ValueError:
        return ""
    now = now or datetime.now().astimezone()
    if moment.date() == now.date():
        return moment.strftime("%H:%M")
    if moment.year == now.year:
        return f"{moment:%b} {moment.day}"
    return moment.strftime("%Y-%m-%d")


class SessionListPanel(QWidget):
    """Lists sessions; emits ``session_activated(id)`` on click and ``new_session_requested``."""

    session_activated = Signal(str)
    new_session_requested = Signal()
    session_deleted = Signal(str)  # the id of a session moved to the trash
    session_renamed = Signal(str)  # the id of a session given a new title
    problem = Signal(str)

    def __init__(self, sessions_dir: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.sessions_dir = sessions_dir
        self.current_id = ""
        self.setAccessibleName("Sessions")
        self.setMinimumWidth(180)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(4)

        top = QHBoxLayout()
        self.search = QLineEdit(self)
        self.search.setPlaceholderText("Search sessions")
        self.search.setClearButtonEnabled(True)
        search_action = self.search.addAction(
            icon("search"), QLineEdit.ActionPosition.LeadingPosition
        )
        search_action.setToolTip("Search sessions")
        self.search.setAccessibleName("Search sessions")
        self.search.setToolTip("Filter sessions by title and by what was said in them")
        for button in self.search.findChildren(QToolButton):  # the search icon and clear button
            is_clear = button.defaultAction() is not search_action
            button.setAccessibleName("Clear search" if is_clear else "Search")
            button.setToolTip("Clear the search" if is_clear else "Search sessions")
        top.addWidget(self.search, 1)
        self.new_button = tool_button("new", "New session (Ctrl+N)", "New session", self)
        self.new_button.clicked.connect(self.new_session_requested)
        top.addWidget(self.new_button)
        layout.addLayout(top)

        self.list = QListWidget(self)
        self.list.setAccessibleName("Session list")
        self.list.setToolTip("Click a session to open it; right-click to rename or delete")
        self.list.setWordWrap(True)
        set_enum_property(self.list, "contextMenuPolicy", "CustomContextMenu")
        self.list.customContextMenuRequested.connect(self._context_menu)
        self.list.itemClicked.connect(self._on_clicked)
        self.list.itemActivated.connect(self._on_clicked)
        self.list.itemChanged.connect(self._on_item_changed)
        layout.addWidget(self.list, 1)

        bottom = QHBoxLayout()
        self.rename_button = tool_button("rename", "Rename the selected session", "Rename session",
                                         self)
        self.rename_button.clicked.connect(self._rename_selected)
        self.delete_button = tool_button(
            "delete", "Move the selected session to the trash folder", "Delete session", self
        )
        self.delete_button.clicked.connect(self._delete_selected)
        bottom.addStretch(1)
        bottom.addWidget(self.rename_button)
        bottom.addWidget(self.delete_button)
        layout.addLayout(bottom)

        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(200)
        self._debounce.timeout.connect(self.refresh)
        self.search.textChanged.connect(lambda _text: self._debounce.start())
        self._filling = False
        self._loaded = False  # the index has been read at least once
        # Reading the index of hundreds of sessions must not hold the window's first paint:
        # it is read when the window opens its first session (``set_current``).
        self._infos: dict[str, SessionInfo] = {}  # by id, as last read (unfiltered)
        # Moves a session to the trash (raises ``SessionActionError`` in words); the window
        # sets its controller's, which closes and replaces the open session around the move.
        # (session id, the session to open in its place when it is the open one) -> new path
        self.deleter: Callable[[str, str | None], Awaitable[Path]] | None = None
        self._deleting: asyncio.Future[bool] | None = None

    # -- data -------------------------------------------------------------------------------

    def library(self) -> SessionLibrary:
        from app.core.sessions.library import SessionLibrary  # read after the first paint

        return SessionLibrary(self.sessions_dir)

    def refresh(self) -> None:
        """Reload the list from the index (applying the search text)."""
        self._debounce.stop()
        self._loaded = True
        try:
            index = self.library().index()
            query = self.search.text().strip()
            infos = index.search(query) if query else index.list()
            if not query:
                self._infos = {info.id: info for info in infos}
            elif self.current_id:
                current = index.get(self.current_id)
                if current is not None:
                    self._infos[current.id] = current
        except OSError as exc:
            self.problem.emit(f"Could not read the session list: {exc}")
            infos = []
        self._fill(infos)

    def info(self, session_id: str) -> SessionInfo | None:
        """The session's entry as the list last read it (no reading of the index)."""
        if not self._loaded:
            self.refresh()
        return self._infos.get(session_id)

    def _fill(self, infos: list[SessionInfo]) -> None:
        self._filling = True
        self.list.clear()
        for info, depth in grouped(infos):  # forks under the conversation they came from
            item = QListWidgetItem(self._label(info, depth))
            item.setData(ID_ROLE, info.id)
            item.setData(TITLE_ROLE, info.title)
            source = self._infos.get(info.forked_from) if info.forked_from else None
            item.setToolTip(
                f"{info.title}\n{info.message_count} messages · "
                f"{format_tokens(info.tokens)} tokens in context"
                + (f"\nForked from “{source.title}”" if source is not None else "")
            )
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
            self.list.addItem(item)
            if info.id == self.current_id:
                item.setSelected(True)
                self.list.setCurrentItem(item)
        self._filling = False

    @staticmethod
    def _label(info: SessionInfo, depth: int = 0) -> str:
        when = when_text(info.updated_at)
        title = indented(info.title, depth)
        return f"{title}\n{'    ' * depth}{when}" if when else title

    def _following(self, session_id: str) -> str | None:
        """The session shown after ``session_id`` in the list (before it, when it is the
        last): what opens in place of the open session when it is deleted."""
        ids = self.session_ids()
        if session_id not in ids:
            return None
        index = ids.index(session_id)
        rest = ids[index + 1 :] or ids[:index][-1:]
        return rest[0] if rest else None

    def session_ids(self) -> list[str]:
        return [str(self.list.item(i).data(ID_ROLE)) for i in range(self.list.count())]

    def titles(self) -> list[str]:
        return [str(self.list.item(i).data(TITLE_ROLE)) for i in range(self.list.count())]

    def set_current(self, session_id: str, reload: bool = False) -> None:
        """Mark the open session. The index is read again only when ``reload`` (a turn just
        wrote to the session: it may be new, renamed or now the most recent) or when it was
        never read; otherwise the listed item is just selected."""
        self.current_id = session_id
        if reload or not self._loaded:
            self.refresh()
            return
        self._filling = True
        for row in range(self.list.count()):
            item = self.list.item(row)
            selected = item.data(ID_ROLE) == session_id
            item.setSelected(selected)
            if selected:
                self.list.setCurrentItem(item)
        if not session_id or session_id not in self.session_ids():
            self.list.clearSelection()
        self._filling = False

    # -- actions ----------------------------------------------------------------------------

    def _on_clicked(self, item: QListWidgetItem) -> None:
        session_id = str(item.data(ID_ROLE))
        if session_id and session_id != self.current_id:
            self.session_activated.emit(session_id)

    def _selected(self) -> QListWidgetItem | None:
        items = self.list.selectedItems()
        return items[0] if items else self.list.currentItem()

    def _rename_selected(self) -> None:
        item = self._selected()
        if item is not None:
            # Edit the title in place; the second line (the date) is not part of it.
            self._filling = True
            item.setText(str(item.data(TITLE_ROLE)))
            self._filling = False
            self.list.editItem(item)

    def _on_item_changed(self, item: QListWidgetItem) -> None:
        if self._filling:
            return
        title = item.text().strip()
        if title and title != item.data(TITLE_ROLE):
            self.rename_session(str(item.data(ID_ROLE)), title)
        else:
            self.refresh()

    def rename_session(self, session_id: str, title: str) -> bool:
        """Give a session a new title through the core; False (and a ``problem``) when it
        cannot be done."""
        from app.core.sessions.library import SessionActionError

        try:
            self.library().rename(session_id, title)
        except SessionActionError as exc:
            self.problem.emit(str(exc))
            self.refresh()
            return False
        self.refresh()
        self.session_renamed.emit(session_id)
        return True

    def confirm_delete(self, title: str) -> bool:
        """Ask before deleting (tests replace this)."""
        from PySide6.QtWidgets import QMessageBox  # dialogs load when first wanted

        answer = QMessageBox.question(
            self,
            "Delete session",
            f"Move “{title}” to the trash folder?\n\nThe file is kept in "
            f"{self.sessions_dir / 'trash'} and can be restored by moving it back.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        return answer == QMessageBox.StandardButton.Yes

    def _delete_selected(self) -> None:
        item = self._selected()
        if item is not None:
            self.delete_session(str(item.data(ID_ROLE)), str(item.data(TITLE_ROLE)))

    def delete_session(self, session_id: str, title: str = "") -> asyncio.Future[bool] | None:
        """Confirm, then move the session to the trash in the background; the future says
        whether it was moved (``None``: the user said no, or a deletion is still running)."""
        if self._deleting is not None and not self._deleting.done():
            return None
        if not self.confirm_delete(title or session_id):
            return None
        import asyncio  # not at import: the window paints before asyncio loads

        self._deleting = asyncio.ensure_future(self._delete(session_id))
        return self._deleting

    async def _delete(self, session_id: str) -> bool:
        from app.core.sessions.library import SessionActionError

        following = self._following(session_id)
        try:
            if self.deleter is not None:
                await self.deleter(session_id, following)
            else:
                await self.library().delete(session_id)
        except Exception as exc:  # said in words, never raised into Qt
            if not isinstance(exc, SessionActionError):
                log.exception("Deleting session %s failed", session_id)
                exc = SessionActionError(f"Could not delete the session: {exc}")
            self.problem.emit(str(exc))
            self.refresh()
            return False
        self.refresh()
        self.session_deleted.emit(session_id)
        return True

    def _context_menu(self, position: QPoint) -> None:
        item = self.list.itemAt(position)
        if item is None:
            return
        self.list.setCurrentItem(item)
        menu = QMenu(self)
        rename = menu.addAction(icon("rename"), "Rename")
        delete = menu.addAction(icon("delete"), "Move to trash…")
        chosen = menu.exec(self.list.viewport().mapToGlobal(position))
        if chosen is rename:
            self._rename_selected()
        elif chosen is delete:
            self._delete_selected()
