"""A session's entry in the session list (:class:`SessionInfo`), summed up from its rollout's
records: in full, or from the records appended since the entry was made."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..items import Item, is_injected_context, is_message, message_text
from ..rollout.reader import RolloutRecord, parse_record, read_rollout
from .titles import NEW_CONVERSATION_TITLE, SESSION_TITLE_RECORD, make_title


@dataclass
class SessionInfo:
    """What the sidebar shows for one session."""

    id: str
    title: str
    created_at: str
    updated_at: str
    tokens: int = 0
    message_count: int = 0
    forked_from: str = ""  # the session this one was forked from ("" for none)


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


def token_total(record: RolloutRecord) -> int | None:
    """The context's tokens a ``token_count`` event says, ``None`` for any other record."""
    payload = record.payload
    if record.type != "event" or "token_count" not in (payload.get("kind"), payload.get("type")):
        return None
    total = payload.get("total")
    return total if isinstance(total, int) and not isinstance(total, bool) else None


def _mtime_iso(path: Path) -> str:
    try:
        stamp = path.stat().st_mtime
    except OSError:
        stamp = 0.0
    moment = datetime.fromtimestamp(stamp, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class SessionSummary:
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
        self.forked_from = base.forked_from if base else ""

    def add(self, record: RolloutRecord) -> None:
        payload = record.payload
        if record.type == SESSION_TITLE_RECORD:
            title = payload.get("title")
            if isinstance(title, str) and title.strip():
                self.custom_title = title.strip()
            return  # a rename is not activity: it leaves updated_at alone
        self.stamp(record.timestamp)
        if record.type == "session_meta":
            for key in ("created_at", "timestamp"):
                value = payload.get(key)
                if isinstance(value, str) and value:
                    self.created_at = value
                    break
            source = payload.get("forked_from")
            if isinstance(source, dict) and isinstance(source.get("session_id"), str):
                self.forked_from = source["session_id"]
        elif record.type == "response_item":
            item = _record_item(record)
            if _conversation_message(item):
                self.message_count += 1
                if self.first_user_text is None and item.get("role") == "user":
                    self.first_user_text = message_text(item)
        elif (total := token_total(record)) is not None:
            self.tokens = total

    def stamp(self, timestamp: str) -> None:
        """The time of a record (a rename's aside): the session's first and latest activity."""
        if not self.created_at:
            self.created_at = timestamp
        if timestamp:
            self.updated_at = timestamp

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
            forked_from=self.forked_from,
        )


def summarize_rollout(path: Path) -> SessionInfo:
    """Build a session's index entry from its rollout (the id is the file's stem).

    Title: the last ``session_title`` record, else the first real user message, else
    "New conversation". ``updated_at`` is the last record's time (renames do not count);
    ``tokens`` is the last ``token_count`` event's total.
    """
    summary = SessionSummary(path.stem)

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
    summary = SessionSummary(info.id, base=info)
    for line in tail.split(b"\n"):
        if line.strip():
            record = parse_record(line, 0)
            if record is not None:
                summary.add(record)
    return summary.result(path), offset + len(tail)

