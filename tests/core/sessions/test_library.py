"""The session library (``app.core.sessions.library``): renaming and deleting saved sessions in step
with the session open in this process (one writer per rollout; a file closed before it moves)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.core import CoreConfig, Session, ops
from app.core.rollout.lock import SessionLock, lock_path
from app.core.sessions.index import SessionIndex
from app.core.sessions.library import SessionActionError, SessionLibrary
from app.demo import ModelServer, Reply
from tests.conftest import collect, run
from tests.file_handles import count_writers, needs_proc, open_handles, windows_like_replace


async def chat(session: Session, server: ModelServer, text: str) -> None:
    server.enqueue(Reply(text=f"answer to {text}"))
    await run(session, ops.UserTurn(text=text))


def records(path: Path) -> list[dict[str, Any]]:
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b""  # every record ends its line
    return [json.loads(line) for line in lines[:-1]]


def title_of(library: SessionLibrary, session_id: str) -> str:
    info = library.get(session_id)
    assert info is not None
    return info.title


@pytest.fixture
def writers_seen(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    return count_writers(monkeypatch)


@needs_proc
async def test_renaming_the_open_session_writes_through_its_own_writer(
    make_config: Callable[..., CoreConfig], server: ModelServer, writers_seen: list[int]
) -> None:
    config = make_config()
    session = await Session.open(config)
    await chat(session, server, "first")
    library = SessionLibrary(config.sessions_dir)
    assert library.open_session(session.id) is session

    info = library.rename(session.id, "  My project  ")
    assert info.title == "My project"
    await chat(session, server, "second")  # the turn's end must keep the new title
    await session.close()

    assert writers_seen and max(writers_seen) == 1  # never a second handle beside the writer
    rows = records(session.rollout_path)
    assert len({row["id"] for row in rows}) == len(rows)  # nothing written twice
    kinds = [row["type"] for row in rows]
    assert kinds.count("session_title") == 1
    title_at = kinds.index("session_title")
    texts = [json.dumps(row["payload"]) for row in rows]
    assert any("first" in t for t in texts[:title_at])
    assert any("second" in t for t in texts[title_at:])
    assert title_of(library, session.id) == "My project"  # the turn's end kept it
    SessionIndex(config.sessions_dir).rebuild()  # and the rollout holds it
    assert title_of(library, session.id) == "My project"
    assert not lock_path(session.rollout_path).exists()


async def saved_session(
    make_config: Callable[..., CoreConfig], server: ModelServer
) -> tuple[CoreConfig, Session, SessionLibrary]:
    """A session with one turn, closed again, and the library of its folder."""
    config = make_config()
    session = await Session.open(config)
    await chat(session, server, "hello")
    await session.close()
    return config, session, SessionLibrary(config.sessions_dir)


async def test_renaming_a_closed_session_holds_its_lock_and_releases_it(
    make_config: Callable[..., CoreConfig], server: ModelServer
) -> None:
    config, session, library = await saved_session(make_config, server)
    assert library.open_session(session.id) is None

    assert library.rename(session.id, "Closed one").title == "Closed one"
    titles = [r["payload"] for r in records(session.rollout_path) if r["type"] == "session_title"]
    assert titles == [{"title": "Closed one"}]
    assert not lock_path(session.rollout_path).exists()
    again = await Session.open(config, session_id=session.id)  # the lock is free again
    await chat(again, server, "more")
    await again.close()
    assert title_of(library, session.id) == "Closed one"


async def test_a_session_another_writer_holds_is_neither_renamed_nor_deleted(
    make_config: Callable[..., CoreConfig], server: ModelServer
) -> None:
    _, session, library = await saved_session(make_config, server)
    size = session.rollout_path.stat().st_size

    with SessionLock.acquire(session.rollout_path):  # as another Coco process would
        with pytest.raises(SessionActionError) as renamed:
            library.rename(session.id, "Taken")
        with pytest.raises(SessionActionError) as deleted:
            await library.delete(session.id)
    for caught in (renamed, deleted):
        assert "open in another Coco window" in str(caught.value)
    assert session.rollout_path.stat().st_size == size  # nothing written
    assert title_of(library, session.id) == "hello"
    assert not library.trash_dir.exists() or not list(library.trash_dir.iterdir())


async def test_empty_titles_and_unknown_sessions_are_refused_in_words(
    make_config: Callable[..., CoreConfig],
) -> None:
    library = SessionLibrary(make_config().sessions_dir)
    with pytest.raises(SessionActionError, match="cannot be empty"):
        library.rename("nope", "   ")
    with pytest.raises(SessionActionError, match="no longer exists"):
        library.rename("nope", "A title")
    with pytest.raises(SessionActionError, match="no longer exists"):
        await library.delete("nope")


@needs_proc
async def test_deleting_the_open_session_shuts_it_down_before_its_file_moves(
    make_config: Callable[..., CoreConfig], server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Windows refuses to move a file that is open: emulate that, so a move made while the
    # session still writes its file fails here too.
    monkeypatch.setattr(os, "replace", windows_like_replace(os.replace))
    config = make_config()
    session = await Session.open(config)
    await chat(session, server, "delete me")
    path = session.rollout_path
    assert open_handles(path) == 1 and lock_path(path).exists()
    library = SessionLibrary(config.sessions_dir)

    moved = await library.delete(session.id)

    assert moved.parent == library.trash_dir and moved.exists() and not path.exists()
    assert open_handles(moved) == 0  # the session's writer is closed
    assert not lock_path(path).exists()  # and its lock released
    assert library.open_session(session.id) is None
    assert library.get(session.id) is None
    ended = await collect(session, "shutdown_complete")
    assert ended[-1].type == "shutdown_complete"
    with pytest.raises(RuntimeError):
        await session.submit(ops.UserTurn(text="too late"))
