"""The session's record on disk: its rollout writer (opened on the first write), the meta
record, the title, and the session list's entry for it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from .. import protocol as p
from ..rollout.lock import SessionInUse
from ..rollout.store import RolloutWriteError, RolloutWriter
from ..system.secrets import redact_url
from .index import SESSION_TITLE_RECORD, SessionIndex, SessionInfo

if TYPE_CHECKING:
    from ..config import CoreConfig
    from ..conversation.transcript import Transcript
    from ..conversation.tree import TurnTree
    from ..recall.index import RecallIndex

TITLE_LENGTH = 80


class ReadOnlySession(Exception):
    """The conversation can only be viewed (another Coco writes it, or its file cannot be
    written); the message says why in words."""


# What cannot be saved ends the turn with an error in words; the session goes on.
STORAGE_ERRORS = (RolloutWriteError, ReadOnlySession)


class SessionRecord:
    """Appends records to one session's rollout; raises in words when it cannot."""

    def __init__(
        self,
        session_id: str,
        path: Path,
        *,
        config: Callable[[], CoreConfig],
        recall_index: RecallIndex,
        tree: TurnTree,
        transcript: Callable[[], Transcript],
        usage: Callable[[], int],
        emit: Callable[[p.Event], None],
    ) -> None:
        self.id = session_id
        self.path = path
        self._config = config
        self._recall_index = recall_index
        self._tree = tree  # every record written is placed in the conversation's tree
        self._transcript = transcript
        self._usage = usage
        self._emit = emit
        self.writer: RolloutWriter | None = None
        self.read_only: str | None = None  # why nothing can be written, when it cannot
        self.created_at = now()
        self.title: str | None = None

    def record(self, kind: str, payload: dict[str, Any]) -> None:
        """Append one record; raises ``RolloutWriteError`` (in words) or ``ReadOnlySession``."""
        self._opened().append(kind, payload)
        self._tree.note(kind, payload)

    async def record_in_worker(self, kind: str, payload: dict[str, Any]) -> None:
        """:meth:`record`, the line encoded and written in a worker thread (megabytes: a cut
        tool output's whole). The tree is told there too, once the line is written and before
        any other record, so it keeps the file's order (no other record is made meanwhile:
        one that is waits for this one)."""
        await self._opened().append_in_worker(
            kind, payload, then=lambda: self._tree.note(kind, payload)
        )

    def _opened(self) -> RolloutWriter:
        """The rollout's writer, opened (and the session's meta record written) at the first
        record. Raises as :meth:`record` does."""
        if self.read_only is not None:
            raise ReadOnlySession(self.read_only)
        if self.writer is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise RolloutWriteError(self.path, exc) from exc
            fresh = not self.path.exists()
            try:
                self.writer = RolloutWriter.exclusive(self.path)
            except SessionInUse as exc:
                raise ReadOnlySession(str(exc)) from exc
            self._recall_index.follow(self.writer, records=0 if fresh else None)
            if fresh:
                meta = self.meta()
                self.writer.append("session_meta", meta)
                self._tree.note("session_meta", meta)
        return self.writer

    def meta(self) -> dict[str, Any]:
        from app import __version__

        config = self._config()
        return {
            "id": self.id,
            "created_at": self.created_at,
            "model": config.model,
            # never the key, also where a key is part of the URL itself
            "base_url": redact_url(config.base_url, [config.api_key.get_secret_value()]),
            "wire_api": config.wire_api,
            "workspace": str(config.workspace) if config.workspace else None,
            "coco_version": __version__,
        }

    def rename(self, title: str) -> str:
        """Record a new title; the title as recorded. Raises ``ValueError`` for an empty one,
        ``ReadOnlySession`` or ``RolloutWriteError`` (in words) when it cannot be saved."""
        title = title.strip()
        if not title:
            raise ValueError("A session title cannot be empty")
        self.record(SESSION_TITLE_RECORD, {"title": title})
        self.title = title
        return title

    def sync(self) -> None:
        """Flush what was written to the disk, saying so (in words) when it fails."""
        self._emit_all(self._sync())

    async def flush_in_worker(self) -> None:
        """A task ended: its records are synced and the session list is brought up to date, in
        a worker thread (the fsync and the rewrite of the index file held the window's thread
        for tens of milliseconds at the end of every turn). It finishes even when the task
        awaiting it is cancelled meanwhile: the turn must still end with its events."""
        work = asyncio.ensure_future(asyncio.to_thread(self._flush, self._entry()))
        try:
            events = await asyncio.shield(work)
        except asyncio.CancelledError:
            events = await work
        self._emit_all(events)

    def close(self) -> None:
        self.sync()
        if self.writer is not None:
            self.writer.close()

    def _entry(self) -> _Entry | None:
        """What the session list's entry is made of, read on the session's own thread (the
        write itself may run in a worker)."""
        if self.writer is None:
            return None
        transcript = self._transcript()
        return _Entry(
            sessions_dir=self._config().sessions_dir,
            title=self.title or title_from(transcript.first_user_text),
            messages=transcript.message_count,
            tokens=self._usage(),
        )

    def _flush(self, entry: _Entry | None) -> list[p.Event]:
        return self._sync() + self._write_index(entry)

    def _sync(self) -> list[p.Event]:
        if self.writer is not None:
            try:
                self.writer.sync()
            except RolloutWriteError as exc:
                return [p.Error(message=str(exc), kind="storage")]
        return []

    def _write_index(self, entry: _Entry | None) -> list[p.Event]:
        if entry is None:
            return []
        try:
            index = SessionIndex(entry.sessions_dir)
            existing = index.get(self.id)
            index.upsert(
                SessionInfo(
                    id=self.id,
                    title=existing.title
                    if existing and existing.title != "New conversation"
                    else entry.title,
                    created_at=existing.created_at if existing else self.created_at,
                    updated_at=now(),
                    tokens=entry.tokens,
                    message_count=entry.messages,
                    forked_from=existing.forked_from if existing else "",
                )
            )
        except OSError as exc:
            return [p.Warning(message=f"Could not update the session list: {exc}")]
        return []

    def _emit_all(self, events: list[p.Event]) -> None:
        for event in events:
            self._emit(event)


class _Entry(NamedTuple):
    sessions_dir: Path
    title: str
    messages: int
    tokens: int


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def title_from(first_user_text: str | None) -> str:
    """The session list's title for a conversation the user has not named."""
    text = " ".join((first_user_text or "").split())
    if not text:
        return "New conversation"
    return text if len(text) <= TITLE_LENGTH else text[: TITLE_LENGTH - 1] + "…"
