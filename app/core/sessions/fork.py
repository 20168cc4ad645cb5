"""A fork: a new session holding one path of a conversation up to and including a turn.

The source is read once, streaming, and left untouched: the session's own tree (every record's
turn, noted as the file was read and written) says which records are on the path, so the file
is not read into a list and its tree is not noted a second time. The fork's file starts with its own meta record,
which names the session and turn it came from, and holds the path's records as they were
written (turn ids included: a turn keeps its id in the fork). Compactions, pins, summary edits
and undos on the path come along, so the fork's model sees what it saw at that turn.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..attachments.store import files_folder, share_files
from ..conversation.tree import TurnTree, on_path_of
from ..items import attachment_parts, is_injected_context, is_message
from ..rollout.lock import SessionInUse
from ..rollout.store import (
    RolloutRecord,
    RolloutWriteError,
    RolloutWriter,
    read_rollout,
    rollout_path,
)
from ..system.collector import collector_paused
from .index import SESSION_TITLE_RECORD, SessionIndex
from .record import now
from .summary import SessionInfo
from .titles import make_title

if TYPE_CHECKING:
    from ..config import CoreConfig


_NOT_COPIED = ("session_meta", SESSION_TITLE_RECORD)  # the fork writes its own


class ForkError(Exception):
    """The fork could not be written; the message says why in words (nothing was left)."""


@dataclass(frozen=True)
class Fork:
    session_id: str
    title: str


def write_fork(
    source: Path,
    config: CoreConfig,
    *,
    source_id: str,
    turn_id: str,
    title: str | None,
    tree: TurnTree,
) -> Fork:
    """Write the fork of ``source`` (session ``source_id``, whose tree is ``tree``) at
    ``turn_id`` beside it and add it to the session list. Raises ``ForkError`` in words; a
    half-written fork is removed."""
    if turn_id not in tree:
        raise ForkError(f"this conversation has no turn {turn_id!r}")
    try:
        kept = _path_records(source, tree, turn_id)
    except OSError as exc:
        raise ForkError(f"the conversation's file could not be read ({exc})") from exc
    fork_id = str(uuid.uuid4())
    path = rollout_path(config.sessions_dir, fork_id)
    name = make_title(f"{title or tree.labels.get(tree.path(turn_id)[0], '')} (fork)")
    meta = {
        "id": fork_id,
        "created_at": now(),
        "model": config.model,
        "forked_from": {"session_id": source_id, "turn_id": turn_id},
        "coco_version": _version(),
    }
    try:
        writer = RolloutWriter.exclusive(path)
    except (OSError, RolloutWriteError, SessionInUse) as exc:
        raise ForkError(_words(exc)) from exc
    try:
        writer.append("session_meta", meta)
        writer.append(SESSION_TITLE_RECORD, {"title": name})
        writer.append_copies((r.timestamp, r.type, r.payload, r.id) for r in kept)
        writer.sync()
        # The attachments its messages name, beside it (else they would show as missing).
        share_files(files_folder(source), files_folder(path), _stored_names(kept))
    except (OSError, RolloutWriteError) as exc:
        writer.close()
        path.unlink(missing_ok=True)
        raise ForkError(_words(exc)) from exc
    writer.close()
    try:  # its entry from what was written (the file is not read again)
        entry = _entry(fork_id, name, str(meta["created_at"]), kept)
        SessionIndex(config.sessions_dir).upsert(replace(entry, forked_from=source_id))
    except OSError:
        pass  # the list is rebuilt from the folder when it is next read
    return Fork(fork_id, name)


def _path_records(source: Path, tree: TurnTree, turn_id: str) -> list[RolloutRecord]:
    """The records of ``source`` on the path to ``turn_id`` that a fork copies, read once."""
    on_path = on_path_of(tree, turn_id)
    kept: list[RolloutRecord] = []
    read = 0

    def keep(records: Iterable[RolloutRecord]) -> None:
        nonlocal read
        for seq, record in enumerate(records):
            read = seq + 1
            if on_path(seq, record) and record.type not in _NOT_COPIED:
                kept.append(record)

    with collector_paused():  # as an open does: the records hold no cycles
        read_rollout(source, consume=keep)
    if read != len(tree.anchors):
        raise ForkError("the session's file changed while it was open (was it edited elsewhere?)")
    return kept


def _stored_names(kept: list[RolloutRecord]) -> Iterator[str]:
    """The stored attachment files the records' user messages name (a compaction's kept
    messages included)."""
    for record in kept:
        payload = record.payload
        found = [payload.get("item")] if record.type == "response_item" else []
        if record.type == "compacted" and isinstance(payload.get("replacement_history"), list):
            found = payload["replacement_history"]
        for item in found:
            for part in attachment_parts(item) if isinstance(item, dict) else []:
                yield from (str(part.get(key) or "") for key in ("file", "sent_file"))


def _entry(fork_id: str, title: str, created_at: str, kept: list[RolloutRecord]) -> SessionInfo:
    messages, tokens = 0, 0
    for record in kept:
        item = record.payload.get("item")
        if record.type == "response_item" and isinstance(item, dict) and is_message(item):
            messages += not is_injected_context(item)
        elif record.type == "event" and record.payload.get("kind") == "token_count":
            total = record.payload.get("total")
            tokens = total if isinstance(total, int) else tokens
    return SessionInfo(
        id=fork_id, title=title, created_at=created_at,
        updated_at=kept[-1].timestamp if kept else created_at,
        tokens=tokens, message_count=messages,
    )


def _words(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, RolloutWriteError) else f"it could not be saved ({exc})"


def _version() -> str:
    from app import __version__

    return __version__
