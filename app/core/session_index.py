"""The session index: a small JSON file listing every session, so the sidebar never reads rollouts.

``sessions_dir/index.json`` is derived data: the rollouts are the truth. When the index is
missing or unreadable it is rebuilt by scanning them, and on load it is reconciled with the
directory (new, vanished or grown rollouts), so a crash between a rollout append and an index
write costs nothing. Deleting a session moves its rollout to ``sessions_dir/trash``. Renaming
and deleting hold the session's lock, so they never act beside a writer; ``app.core.sessions``
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
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .items import Item, is_injected_context, is_message, message_text
from .rollout import (
    RolloutRecord,
    RolloutWriter,
    parse_record,
    read_rollout,
    repair_tail,
    rollout_path,
)
from .session_lock import SessionLock

log = logging.getLogger(__name__)

INDEX_FILE = "index.json"
TRASH_DIR = "trash"
INDEX_VERSION = 1
NEW_CONVERSATION_TITLE = "New conversation"
TITLE_MAX_CHARS = 80
# Record type whose payload ``{"title": ...}`` names a session (written by :meth:`rename`).
SESSION_TITLE_RECORD = "session_title"


@dataclass
class SessionInfo:
    """What the sidebar shows for one session."""

    id: str
    title: str
    created_at: str
    updated_at: str
    tokens: int = 0
    message_count: int = 0


def make_title(text: str) -> str:
    """A one-line title from a user message: whitespace collapsed, at most 80 chars with "…"."""
    title = " ".join(text.split())
    if not title:
        return NEW_CONVERSATION_TITLE
    if len(title) > TITLE_MAX_CHARS:
        title = title[: TITLE_MAX_CHARS - 1].rstrip() + "…"
    return title


def _given_title(title: str) -> str:
    """A title the user typed, trimmed; ``ValueError`` when nothing is left."""
    title = title.strip()
    if not title:
        raise ValueError("A session title cannot be empty")
    return title


def _record_item(record: RolloutRecord) -> Item:
    # A response_item payload is the item itself; tolerate an {"item": {...}} wrapper too.
    wrapped = record.payload.get("item")
    if "type" not in record.payload and isinstance(wrapped, dict):
        return wrapped
    return record.payload


def _conversation_message(item: Item) -> bool:
    """A user or assistant message the person actually exchanged (not injected context)."""
    return (
        is_message(item)
        and item.get("role") in ("user", "assistant")
        and not is_injected_context(item)
    )


def _mtime_iso(path: Path) -> str:
    try:
        stamp = path.stat().st_mtime
    except OSError:
        stamp = 0.0
    moment = datetime.fromtimestamp(stamp, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class _Summary:
    """Accumulates a session's index entry over rollout records, from scratch or from an
    existing entry (then only records appended since need reading)."""

    def __init__(self, session_id: str, base: SessionInfo | None = None) -> None:
        self.session_id = session_id
        self.created_at = base.created_at if base else ""
        self.updated_at = base.updated_at if base else ""
        self.base_title = base.title if base else NEW_CONVERSATION_TITLE
        self.custom_title: str | None = None
        self.first_user_text: str | None = None
        self.message_count = base.message_count if base else 0
        self.tokens = base.tokens if base else 0

    def add(self, record: RolloutRecord) -> None:
        payload = record.payload
        if record.type == SESSION_TITLE_RECORD:
            title = payload.get("title")
            if isinstance(title, str) and title.strip():
                self.custom_title = title.strip()
            return  # a rename is not activity: it leaves updated_at alone
        if not self.created_at:
            self.created_at = record.timestamp
        if record.timestamp:
            self.updated_at = record.timestamp
        if record.type == "session_meta":
            for key in ("created_at", "timestamp"):
                value = payload.get(key)
                if isinstance(value, str) and value:
                    self.created_at = value
                    break
        elif record.type == "response_item":
            item = _record_item(record)
            if _conversation_message(item):
                self.message_count += 1
                if self.first_user_text is None and item.get("role") == "user":
                    self.first_user_text = message_text(item)
        elif record.type == "event" and "token_count" in (payload.get("kind"), payload.get("type")):
            total = payload.get("total")
            if isinstance(total, int) and not isinstance(total, bool):
                self.tokens = total

    def result(self, path: Path) -> SessionInfo:
        if self.custom_title is not None:
            title = make_title(self.custom_title)
        elif self.base_title != NEW_CONVERSATION_TITLE:
            title = self.base_title
        elif self.first_user_text is not None:
            title = make_title(self.first_user_text)
        else:
            title = NEW_CONVERSATION_TITLE
        created_at = self.created_at or _mtime_iso(path)
        return SessionInfo(
            id=self.session_id,
            title=title,
            created_at=created_at,
            updated_at=self.updated_at or created_at,
            tokens=self.tokens,
            message_count=self.message_count,
        )


def summarize_rollout(path: Path) -> SessionInfo:
    """Build a session's index entry from its rollout (the id is the file's stem).

    Title: the last ``session_title`` record, else the first real user message, else
    "New conversation". ``updated_at`` is the last record's time (renames do not count);
    ``tokens`` is the last ``token_count`` event's total.
    """
    summary = _Summary(path.stem)

    def add_all(records: Iterable[RolloutRecord]) -> None:
        for record in records:
            summary.add(record)

    read_rollout(path, consume=add_all)  # each record freed once summed up
    return summary.result(path)


def _summarize_appended(info: SessionInfo, path: Path, offset: int) -> tuple[SessionInfo, int]:
    """Bring ``info`` up to date with the records appended after byte ``offset``.

    Returns the new entry and the size read. Raises ``ValueError`` when ``offset`` is not at a
    line boundary (then the whole file must be read).
    """
    with open(path, "rb") as file:
        file.seek(offset - 1)
        if file.read(1) != b"\n":
            raise ValueError("not at a line boundary")
        tail = file.read()
    summary = _Summary(info.id, base=info)
    for line in tail.split(b"\n"):
        if line.strip():
            record = parse_record(line, 0)
            if record is not None:
                summary.add(record)
    return summary.result(path), offset + len(tail)


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
            self._entries.pop(session_id, None)
            self._sizes.pop(session_id, None)
            self._write()
            return target

    def _free_trash_path(self, session_id: str) -> Path:
        target = self.trash_dir / f"{session_id}.jsonl"
        counter = 1
        while target.exists():  # an earlier deletion of the same id: keep both
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
    from .recall.index import recall_index_path

    try:
        recall_index_path(rollout).unlink(missing_ok=True)
    except OSError:
        pass
