"""Undo of a compaction (``app.core.session.compaction_undo``): the history before it plus what came
after, saved before it is done, refused in words, and the state the window shows."""

from __future__ import annotations

from app.core import Session, ops
from app.core.compaction.undo import UndoState
from app.core.conversation.history import ContextHistory
from app.core.conversation.transcript import Transcript
from app.core.items import assistant_message, user_message
from app.core.sessions.record import SessionRecord
from app.core.tokens.counter import TokenCounter
from app.demo import Reply
from tests.conftest import collect, of_type, run


async def compacted_session(server, make_config) -> Session:
    session = await Session.open(make_config())
    server.enqueue(Reply(text="an answer"))
    await run(session, ops.UserTurn(text="a question"))
    server.enqueue(Reply(text="THE SUMMARY"))
    await run(session, ops.Compact())
    return session


async def test_undo_restores_the_history_and_is_saved(server, make_config):
    session = await Session.open(make_config())
    server.enqueue(Reply(text="an answer"))
    await run(session, ops.UserTurn(text="a question"))
    before = session.history()
    server.enqueue(Reply(text="THE SUMMARY"))
    await run(session, ops.Compact())
    assert session.history() != before
    await session.submit(ops.UndoCompaction())
    events = await collect(session, "undo_available")
    (undone,) = of_type(events, "compaction_undone")
    assert session.history() == before
    assert of_type(events, "undo_available")[-1].item_id is None
    assert '"compaction_undone"' in session.rollout_path.read_text()
    assert undone.item_id in session.rollout_path.read_text()
    await session.close()


async def test_an_undo_that_cannot_be_saved_is_not_done(server, make_config):
    session = await compacted_session(server, make_config)
    summarised = session.history()
    session._store.read_only = "This conversation is open in another Coco window."
    await session.submit(ops.UndoCompaction())
    events = await collect(session, "error")
    assert events[-1].kind == "storage" and "another Coco window" in events[-1].message
    assert session.history() == summarised
    session._store.read_only = None
    await session.close()


async def test_nothing_to_undo_is_refused_in_words(server, make_config):
    session = await Session.open(make_config())
    await collect(session, "undo_available")  # the state said when the session opened
    await session.submit(ops.UndoCompaction())
    error = (await collect(session, "error"))[-1]
    assert error.kind == "invalid_op" and error.message
    (state,) = await collect(session, "undo_available")
    assert state.item_id is None and state.reason == error.message
    await session.close()


def test_restore_puts_back_the_history_then_what_came_after(tmp_path) -> None:
    from app.core.session.compaction_undo import CompactionUndo

    history = ContextHistory(TokenCounter("gpt-4o", allow_download=False))
    history.append(user_message("q"))
    history.append(assistant_message("a"))
    snapshot = history.snapshot()

    class Compactor:
        undo = UndoState()
        compacted_version: int | None = 1
        post_compaction_usage: int | None = 10

    class Refiner:
        recounted = 0

        def recount_refined(self) -> None:
            self.recounted += 1

    compactor, refiner = Compactor(), Refiner()
    history.replace([user_message("summary")])
    compactor.undo.offer("cmp_1", snapshot)
    later = user_message("after the compaction")
    history.append(later)
    compactor.undo.note_appended(later)
    undo = CompactionUndo(
        compactor=compactor, history=history, refiner=refiner,  # type: ignore[arg-type]
        transcript=Transcript(), store=SessionRecord.__new__(SessionRecord), meter=None,  # type: ignore[arg-type]
        emit=lambda _e: None,
    )
    assert undo.restore() == "cmp_1"
    assert history.raw_items() == [user_message("q"), assistant_message("a"), later]
    assert (compactor.compacted_version, compactor.post_compaction_usage) == (None, None)
    assert refiner.recounted == 1
    assert undo.restore() is None  # taken: once only


async def test_a_compaction_run_again_after_an_undo_rebuilds_the_same_history(
    server, make_config
):
    """The second run finds the history's notes material and counts remembered from the
    first (the session's NotesReader and CountMemo): what it builds is the same, and so is
    what it builds once the history has grown."""
    # A window small enough that the older messages leave the view (and carry their notes).
    session = await Session.open(make_config(context_window=16_000, auto_compact=False))
    for i in range(8):
        server.enqueue(Reply(text=f"answer {i}"))
        text = f"The gateway {i} listens on port {8440 + i}. " + "Some more words here. " * 120
        await run(session, ops.UserTurn(text=text))
    server.enqueue(Reply(text="THE SUMMARY"))
    first = of_type(await run(session, ops.Compact()), "context_compacted")[0]
    compacted = session.history()
    assert first.carried_notes  # the notes of the messages that left are carried
    await session.submit(ops.UndoCompaction())
    await collect(session, "compaction_undone")
    server.enqueue(Reply(text="THE SUMMARY"))
    again = of_type(await run(session, ops.Compact()), "context_compacted")[0]
    assert session.history() == compacted
    assert (again.carried_notes, again.kept_user_messages, again.tokens_after) == (
        first.carried_notes, first.kept_user_messages, first.tokens_after
    )
    await session.close()
