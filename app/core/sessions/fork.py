"""A fork: a new session holding one path of a conversation up to and including a turn.

The source is read once, streaming, and left untouched: the session's own tree (every record's
turn, noted as the file was read and written) says which records are on the path, so the file
is not read into a list and its tree is not noted a second time. The fork's file starts with
its own meta record, which names the session and turn it came from, and holds the lines of the
path's records byte for byte as they were written (turn ids included: a turn keeps its id in
the fork); only the spans of its lines are kept, and most records are not even parsed
(``fork_path``). Compactions, pins, summary edits and undos on the path come along, so the
fork's model sees what it saw at that turn.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..attachments.store import files_folder, share_files
from ..conversation.tree import TurnTree
from ..rollout.lines_at import RolloutChanged
from ..rollout.lock import SessionInUse
from ..rollout.store import RolloutRecord, RolloutWriteError, RolloutWriter, rollout_path
from .fork_path import path_lines
from .index import SESSION_TITLE_RECORD, SessionIndex
from .record import now
from .summary import SessionSummary
from .titles import make_title

if TYPE_CHECKING:
    from ..config import CoreConfig


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
    fork_id = str(uuid.uuid4())
    path = rollout_path(config.sessions_dir, fork_id)
    name = make_title(f"{title or tree.labels.get(tree.path(turn_id)[0], '')} (fork)")
    created_at = now()
    meta = {
        "id": fork_id,
        "created_at": created_at,
        "model": config.model,
        "forked_from": {"session_id": source_id, "turn_id": turn_id},
        "coco_version": _version(),
    }
    # Its list entry summed up as the list would from its file: its own records first.
    summary = SessionSummary(fork_id)
    summary.add(RolloutRecord(1, created_at, "session_meta", meta))
    summary.add(RolloutRecord(2, created_at, SESSION_TITLE_RECORD, {"title": name}))
    try:
        lines, kept = path_lines(source, tree, turn_id, summary)
    except RolloutChanged as exc:
        raise ForkError(
            "the session's file changed while it was open (was it edited elsewhere?)"
        ) from exc
    except OSError as exc:
        raise ForkError(f"the conversation's file could not be read ({exc})") from exc
    # The session list's index, read before the fork's file exists: read after, it found a
    # file it did not know and summarised it, reading all the fork wrote once more.
    index = SessionIndex(config.sessions_dir)
    try:
        writer = RolloutWriter.exclusive(path)
    except (OSError, RolloutWriteError, SessionInUse) as exc:
        raise ForkError(_words(exc)) from exc
    try:
        writer.append("session_meta", meta)
        writer.append(SESSION_TITLE_RECORD, {"title": name})
        writer.append_lines(lines)
        del lines
        writer.sync()
        # The attachments its messages name, beside it (else they would show as missing).
        share_files(files_folder(source), files_folder(path), kept.stored_names)
    except (OSError, RolloutWriteError) as exc:
        writer.close()
        path.unlink(missing_ok=True)
        raise ForkError(_words(exc)) from exc
    writer.close()
    try:  # its entry from what was written (the file is not read again)
        index.upsert(summary.result(path))
    except OSError:
        pass  # the list is rebuilt from the folder when it is next read
    return Fork(fork_id, name)


def _words(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, RolloutWriteError) else f"it could not be saved ({exc})"


def _version() -> str:
    from app import __version__

    return __version__
