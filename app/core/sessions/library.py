"""The saved sessions as a front end manages them: listed, renamed and deleted in step with the
sessions open in this process.

A session's rollout has one writer: the open :class:`~app.core.session.coordinator.Session` (which holds
the session's lock). So :class:`SessionLibrary` renames an open session through that session's
own writer, and a closed one through the index holding the lock; it deletes an open session only
after shutting it down (its writer closed and its lock released: Windows refuses to move a file
that is still open), then moves the file to the trash folder as before. A session written by
another Coco process is refused in words. Every refusal is a :class:`SessionActionError` whose
message says what happened, for the user.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, cast

from ..rollout.lock import SessionInUse
from ..rollout.store import RolloutWriteError, rollout_path
from .index import TRASH_DIR, SessionIndex, SessionInfo
from .open_sessions import open_at
from .record import ReadOnlySession

if TYPE_CHECKING:
    from ..session.coordinator import Session

__all__ = ["SessionActionError", "SessionInfo", "SessionLibrary"]

log = logging.getLogger(__name__)

IN_OTHER_WINDOW = (
    "This conversation is open in another Coco window: close it there first, then {action} it."
)


class SessionActionError(Exception):
    """A rename or deletion that could not be done; ``str()`` says why, for the user."""


class SessionLibrary:
    """The sessions saved in ``sessions_dir``. Each call reads the index afresh, so sessions
    written meanwhile (by the open session, or another window) are seen."""

    def __init__(self, sessions_dir: Path) -> None:
        self.sessions_dir = sessions_dir

    @property
    def trash_dir(self) -> Path:
        """Where deleted sessions go (they can be restored by moving them back)."""
        return self.sessions_dir / TRASH_DIR

    def index(self) -> SessionIndex:
        """The list as saved now (``list()``, ``search(query)``, ``get(id)``), read afresh."""
        return SessionIndex(self.sessions_dir)

    def get(self, session_id: str) -> SessionInfo | None:
        return self.index().get(session_id)

    def open_session(self, session_id: str) -> Session | None:
        """The session with this id open in this process, if there is one."""
        try:
            # Only sessions register there.
            return cast("Session | None", open_at(rollout_path(self.sessions_dir, session_id)))
        except ValueError:
            return None

    # -------------------------------------------------------------------------- changes

    def rename(self, session_id: str, title: str) -> SessionInfo:
        """Give a session a new title; its entry as now listed. An open session records the
        title through its own writer; a closed one through the index, holding its lock."""
        if not title.strip():
            raise SessionActionError("A session title cannot be empty.")
        session = self.open_session(session_id)
        try:
            if session is not None:
                stored = session.rename(title)
                index = self.index()
                index.set_title(session_id, stored)
            else:
                index = self.index()
                index.rename(session_id, title)
        except SessionInUse as exc:
            raise SessionActionError(IN_OTHER_WINDOW.format(action="rename")) from exc
        except KeyError as exc:
            raise SessionActionError("That session no longer exists.") from exc
        except (OSError, ValueError, ReadOnlySession) as exc:  # each says why in words
            raise SessionActionError(f"Could not rename the session: {_words(exc)}") from exc
        info = index.get(session_id)
        if info is None:
            raise SessionActionError("That session no longer exists.")
        return info

    async def delete(self, session_id: str) -> Path:
        """Move a session's file to the trash folder (nothing is erased); its new path. A
        session open in this process is shut down first, so its file is closed and its lock
        released before the move."""
        session = self.open_session(session_id)
        if session is not None:
            await session.close()
        try:
            return self.index().delete(session_id)
        except SessionInUse as exc:
            raise SessionActionError(IN_OTHER_WINDOW.format(action="delete")) from exc
        except KeyError as exc:
            raise SessionActionError("That session no longer exists.") from exc
        except FileNotFoundError as exc:
            raise SessionActionError(f"Could not delete the session: {exc}") from exc
        except OSError as exc:
            raise SessionActionError(f"Could not delete the session: {_words(exc)}") from exc


def _words(exc: Exception) -> str:
    if isinstance(exc, RolloutWriteError):
        return str(exc)
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc)
