"""The session index: a small JSON file listing every session, so the sidebar never reads rollouts.

``sessions_dir/index.json`` is derived data: the rollouts are the truth. When the index is
missing or unreadable it is rebuilt by scanning them, and on load it is reconciled with the
directory (new, vanished or grown rollouts), so a crash between a rollout append and an index
write costs nothing. Deleting a session moves its rollout to ``sessions_dir/trash``. Renaming
and deleting hold the session's lock, so they never act beside a writer; ``app.core.sessions.library``
routes them through a session open in this process.
"""

from __future__ import annotations

import builtins
import dataclasses
import json
import logging
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

from ..attachments.store import files_folder
from ..items import message_text
from ..rollout.lock import SessionLock
from ..rollout.store import RolloutRecord, RolloutWriter, repair_tail, rollout_path
from .summary import (
    SessionInfo,
    _conversation_message,
    _record_item,
    _summarize_appended,
    summarize_rollout,
)
from .titles import (
    NEW_CONVERSATION_TITLE,
    SESSION_TITLE_RECORD,
    TITLE_MAX_CHARS,
    _given_title,
    make_title,
)

__all__ = [
    "INDEX_FILE",
    "INDEX_VERSION",
    "NEW_CONVERSATION_TITLE",
    "SESSION_TITLE_RECORD",
    "TITLE_MAX_CHARS",
    "TRASH_DIR",
    "SessionIndex",
    "SessionInfo",
    "make_title",
    "summarize_rollout",
]

log = logging.getLogger(__name__)

INDEX_FILE = "index.json"
TRASH_DIR = "trash"
INDEX_VERSION = 1


def _file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return -1


def _info_from_json(entry: Any) -> SessionInfo | None:
    if not isinstance(entry, dict):
        return None
    text_fields = ("id", "title", "created_at", "updated_at")
    int_fields = ("tokens", "message_count")
    if not all(isinstance(entry.get(name), str) for name in text_fields):
        return None
    if not all(
        isinstance(entry.get(name, 0), int) and not isinstance(entry.get(name, 0), bool)
        for name in int_fields
    ):
        return None
    return SessionInfo(
        id=entry["id"],
        title=entry["title"],
        created_at=entry["created_at"],
        updated_at=entry["updated_at"],
        tokens=entry.get("tokens", 0),
        message_count=entry.get("message_count", 0),
        forked_from=str(entry.get("forked_from") or ""),
    )


def _sort_key(info: SessionInfo) -> tuple[str, str, str]:
    return (info.updated_at, info.created_at, info.id)


class SessionIndex:
    """The list of sessions, kept in ``sessions_dir/index.json`` and rebuilt from rollouts."""

    def __init__(self, sessions_dir: Path) -> None:
        self.sessions_dir = sessions_dir
        self.index_path = sessions_dir / INDEX_FILE
        self.trash_dir = sessions_dir / TRASH_DIR
        #: Problems met while loading (unreadable index, unwritable directory), for the UI.
        self.warnings: list[str] = []
        self._lock = threading.RLock()
        self._entries: dict[str, SessionInfo] = {}
        # Rollout size seen when an entry was last summarised; a grown file is re-read on load.
        self._sizes: dict[str, int] = {}
        if not self._load():
            self.rebuild()

    # ------------------------------------------------------------------------------ queries

    def list(self) -> list[SessionInfo]:
        """All sessions, most recently updated first."""
        with self._lock:
            infos = sorted(self._entries.values(), key=_sort_key, reverse=True)
            return [dataclasses.replace(info) for info in infos]

    def get(self, session_id: str) -> SessionInfo | None:
        """The entry of one session, or ``None`` if it is not indexed."""
        with self._lock:
            info = self._entries.get(session_id)
            return dataclasses.replace(info) if info is not None else None

    # builtins.list: inside the class, ``list`` names the method above.
    def search(self, query: str) -> builtins.list[SessionInfo]:
        """Sessions whose title or user/assistant messages contain ``query`` (any case).

        Newest first, like :meth:`list`. An empty query matches everything.
        """
        needle = query.strip().lower()
        sessions = self.list()
        if not needle:
            return sessions
        # How the needle appears inside a JSON string, for a cheap test on raw lines.
        escaped = json.dumps(needle, ensure_ascii=False)[1:-1]
        return [
            info
            for info in sessions
            if needle in info.title.lower() or self._content_matches(info.id, needle, escaped)
        ]

    def _content_matches(self, session_id: str, needle: str, escaped: str) -> bool:
        try:
            raw = rollout_path(self.sessions_dir, session_id).read_bytes()
        except (OSError, ValueError):
            return False
        text = raw.decode("utf-8", errors="replace").lower()
        if escaped not in text:
            return False
        # Split on "\n" only: JSON strings may hold U+2028 and friends, which splitlines() splits.
        for line in text.split("\n"):
            if escaped not in line or '"response_item"' not in line:
                continue
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if not isinstance(record, dict) or record.get("type") != "response_item":
                continue
            payload = record.get("payload")
            if not isinstance(payload, dict):
                continue
            item = _record_item(RolloutRecord(0, "", "response_item", payload))
            if _conversation_message(item) and needle in message_text(item):
                return True
        return False

    # ----------------------------------------------------------------------------- changes

    def upsert(self, info: SessionInfo) -> None:
        """Add or replace a session's entry and write the index."""
        path = rollout_path(self.sessions_dir, info.id)  # validates the id
        with self._lock:
            self._entries[info.id] = dataclasses.replace(info)
            self._sizes[info.id] = _file_size(path)
            self._write()

    def rename(self, session_id: str, title: str) -> None:
        """Give a session that no one writes a custom title, kept in the index and in its
        rollout.

        The rollout gets a ``session_title`` record so the name survives a rebuild; it is
        written holding the session's lock, so never beside the session's own writer. A session
        open in this process is renamed through it instead (``SessionLibrary.rename``). Raises
        ``KeyError`` for an unknown session, ``ValueError`` for an empty title,
        :class:`SessionInUse` when a writer holds the session and ``RolloutWriteError`` when
        the file cannot be written.
        """
        title = _given_title(title)
        path = rollout_path(self.sessions_dir, session_id)
        with self._lock:
            if session_id not in self._entries:
                raise KeyError(session_id)
            if path.exists():
                with RolloutWriter.exclusive(path) as writer:
                    repair_tail(path)
                    writer.append(SESSION_TITLE_RECORD, {"title": title})
            self._set_title(session_id, title)

    def set_title(self, session_id: str, title: str) -> None:
        """Record in the index a title the session's own writer has just written to its
        rollout (the rollout is not touched). A session not indexed yet is read from its
        rollout."""
        title = _given_title(title)
        path = rollout_path(self.sessions_dir, session_id)
        with self._lock:
            if session_id not in self._entries:
                self._add_from_rollout(path)
                if session_id not in self._entries:
                    raise KeyError(session_id)
            self._set_title(session_id, title)

    def _set_title(self, session_id: str, title: str) -> None:
        self._entries[session_id].title = make_title(title)
        self._sizes[session_id] = _file_size(rollout_path(self.sessions_dir, session_id))
        self._write()

    def delete(self, session_id: str) -> Path:
        """Move a session's rollout to the trash folder and drop it from the index.

        Returns the rollout's new path. Nothing is erased. The move holds the session's lock:
        a session being written (open in a window) is refused with :class:`SessionInUse`;
        close it first (``SessionLibrary.delete`` does, for one open in this process). Raises
        ``KeyError`` for a session that is neither indexed nor on disk, ``FileNotFoundError``
        if only its file is gone (the entry is dropped anyway).
        """
        source = rollout_path(self.sessions_dir, session_id)
        with self._lock:
            if not source.exists():
                if self._entries.pop(session_id, None) is None:
                    raise KeyError(session_id)
                self._sizes.pop(session_id, None)
                self._write()
                raise FileNotFoundError(f"The file of session {session_id} is already gone")
            with SessionLock.acquire(source):
                self.trash_dir.mkdir(parents=True, exist_ok=True)
                target = self._free_trash_path(session_id)
                os.replace(source, target)
                _remove_recall_index(source)
                if files_folder(source).is_dir():  # its attachments go with it
                    os.replace(files_folder(source), files_folder(target))
            self._entries.pop(session_id, None)
            self._sizes.pop(session_id, None)
            self._write()
            return target

    def _free_trash_path(self, session_id: str) -> Path:
        target = self.trash_dir / f"{session_id}.jsonl"
        counter = 1
        # An earlier deletion of the same id: keep both (its file and its attachments).
        while target.exists() or files_folder(target).exists():
            target = self.trash_dir / f"{session_id}.{counter}.jsonl"
            counter += 1
        return target

    def rebuild(self) -> None:
        """Re-create the index from every rollout in the sessions directory."""
        with self._lock:
            self._entries.clear()
            self._sizes.clear()
            for path in self._rollout_files().values():
                self._add_from_rollout(path)
            self._write()

    # ----------------------------------------------------------------------------- storage

    def _rollout_files(self) -> dict[str, Path]:
        try:
            return {p.stem: p for p in self.sessions_dir.glob("*.jsonl") if p.is_file()}
        except OSError:
            return {}

    def _add_from_rollout(self, path: Path) -> None:
        try:
            info = summarize_rollout(path)
        except (OSError, ValueError) as exc:
            self.warnings.append(f"Could not read session file {path.name}: {exc}")
            return
        self._entries[info.id] = info
        self._sizes[info.id] = _file_size(path)

    def _load(self) -> bool:
        """Load index.json and reconcile it with the directory; False means rebuild."""
        try:
            data = json.loads(self.index_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return False
        except (OSError, ValueError):
            self.warnings.append("The session list was unreadable; it was rebuilt from the files.")
            return False
        entries = data.get("sessions") if isinstance(data, dict) else None
        if not isinstance(entries, list):
            self.warnings.append("The session list was unreadable; it was rebuilt from the files.")
            return False
        for entry in entries:
            info = _info_from_json(entry)
            if info is None:
                self.warnings.append(
                    "The session list was unreadable; it was rebuilt from the files."
                )
                self._entries.clear()
                self._sizes.clear()
                return False
            self._entries[info.id] = info
            size = entry.get("size", -1)
            self._sizes[info.id] = size if isinstance(size, int) else -1
        if self._reconcile():
            self._write()
        return True

    def _reconcile(self) -> bool:
        """Match the entries to the rollouts on disk; True if anything changed."""
        files = self._rollout_files()
        changed = False
        for session_id in list(self._entries):
            if session_id not in files:
                del self._entries[session_id]
                self._sizes.pop(session_id, None)
                changed = True
        for session_id, path in files.items():
            known = self._entries.get(session_id)
            old_size = self._sizes.get(session_id, -1)
            size = _file_size(path)
            if known is not None and old_size == size:
                continue
            changed = True
            if known is not None and 0 < old_size < size:
                # Grown since the last write (e.g. a crash before the index was updated):
                # read only the appended records, not the whole conversation.
                try:
                    self._entries[session_id], self._sizes[session_id] = _summarize_appended(
                        known, path, old_size
                    )
                    continue
                except (OSError, ValueError):
                    pass
            self._add_from_rollout(path)
        return changed

    def _write(self) -> None:
        sessions = []
        for info in sorted(self._entries.values(), key=_sort_key, reverse=True):
            entry = dataclasses.asdict(info)
            entry["path"] = f"{info.id}.jsonl"
            entry["size"] = self._sizes.get(info.id, -1)
            sessions.append(entry)
        text = json.dumps(
            {"version": INDEX_VERSION, "sessions": sessions}, ensure_ascii=False, indent=1
        )
        try:
            self.sessions_dir.mkdir(parents=True, exist_ok=True)
            fd, temp_name = tempfile.mkstemp(dir=self.sessions_dir, prefix=".index-", suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as file:
                    file.write(text)
                    file.flush()
                    os.fsync(file.fileno())
                os.replace(temp_name, self.index_path)
            except BaseException:
                Path(temp_name).unlink(missing_ok=True)
                raise
        except OSError as exc:
            # The index is derived data: failing to save it must not break a turn; the next
            # start reconciles it with the rollouts.
            log.warning("Could not write the session index: %s", exc)
            self.warnings.append(f"Could not save the session list: {exc.strerror or exc}")


def _remove_recall_index(rollout: Path) -> None:
    """A deleted session's search index goes (it is rebuilt from the rollout if restored)."""
    from ..recall.store import recall_index_path

    try:
        recall_index_path(rollout).unlink(missing_ok=True)
    except OSError:
        pass
