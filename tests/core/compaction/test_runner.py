"""Running a compaction (``app.core.compaction.runner``) as a session does: the marker's start
and end events, a failure said in its turn and recorded for resume, the background lines held
until the marker, and a compaction the server made inside a turn."""

from __future__ import annotations

from app.core import Session, ops
from app.core import protocol as p
from app.core.compaction.failure import ENDED_KIND
from app.core.compaction.notes.block import NOTES_LABEL
from app.demo import Fault, Reply
from tests.conftest import collect, of_type, run
from tests.e2e.test_compaction import chat


def compaction_started(events: list[p.Event]) -> p.ItemStarted:
    (started,) = [e for e in of_type(events, "item_started") if e.item.kind == "context_compaction"]
    return started


async def test_a_failed_compaction_ends_its_marker_and_is_said_in_its_turn_and_kept(
    server, make_config
):
    config = make_config(max_retries=0)
    session = await Session.open(config)
    await chat(session, server, "q1", "a1")
    server.enqueue(Fault.status(500, "the summary broke"))
    events = await run(session, ops.Compact(focus="the dates"))
    turn_id = of_type(events, "turn_started")[0].turn_id
    started = compaction_started(events)
    assert started.turn_id == turn_id and started.item.data == {"trigger": "manual"}
    assert started.item.id.startswith("cmp_")
    assert of_type(events, "compaction_ended") == [
        p.CompactionEnded(
            turn_id=turn_id, item_id=started.item.id, status="failed", focus="the dates"
        )
    ]
    (error,) = of_type(events, "error")
    assert error.kind == "compaction" and error.turn_id == turn_id
    assert "the summary broke" in error.message
    await session.close()

    reopened = await Session.open(config, session.id)
    entries = reopened.transcript()
    (ended,) = [e for e in entries if e["kind"] == ENDED_KIND]
    assert (ended["item_id"], ended["trigger"], ended["status"], ended["focus"]) == (
        started.item.id,
        "manual",
        "failed",
        "the dates",
    )
    assert [e["message"] for e in entries if e["kind"] == "error"] == [error.message]
    await reopened.close()


async def test_a_line_said_during_a_compaction_is_shown_at_once_and_kept_after_its_marker(
    server, make_config
):
    config = make_config(remote_compaction=True)
    session = await Session.open(config)
    await chat(session, server, "q1", "a1")
    server.enqueue(Reply(text="FOCUSED SUMMARY"))
    events = await run(session, ops.Compact(focus="the dates"))
    turn_id = of_type(events, "turn_started")[0].turn_id
    (line,) = of_type(events, "background")
    assert line.turn_id == turn_id and line.message.startswith("A focus cannot be given")
    assert of_type(events, "context_compacted")[0].strategy == "local"
    await session.close()

    reopened = await Session.open(config, session.id)
    kinds = [(e["kind"], e.get("message")) for e in reopened.transcript()]
    marker = kinds.index(("compaction", None))
    assert kinds[marker + 1 :].count(("background", line.message)) == 1
    await reopened.close()


async def test_a_compaction_the_server_made_in_a_turn_is_a_marker_with_the_notes_beside_it(
    server, make_config
):
    config = make_config(context_window=4_096, remote_compaction=True, server_side_compaction=True)
    session = await Session.open(config)
    await chat(session, server, "The gateway listens on port 8443.", "Noted.")
    before = session.history()
    server.enqueue(Reply(compaction="ENC-IN-TURN", text="A2"))
    events = await run(session, ops.UserTurn(text="U2"))
    turn_id = of_type(events, "turn_started")[0].turn_id
    started = compaction_started(events)
    assert started.turn_id == turn_id and started.item.data == {"trigger": "server"}
    assert started.item.id.startswith("cmp_")
    (compacted,) = of_type(events, "context_compacted")
    assert compacted.item_id == started.item.id and compacted.incoming_tokens == 0
    assert compacted.carried_notes == ["The gateway listens on port 8443."]
    history = session.history()
    texts = [str(item.get("content")) for item in history]
    assert NOTES_LABEL in texts[0] and "8443" in texts[0]
    assert history[1]["type"] == "compaction"
    await session.submit(ops.UndoCompaction())
    await collect(session, "compaction_undone")
    assert session.history()[: len(before)] == before
    await session.close()


async def test_a_compaction_whose_prompt_cannot_fit_says_so_and_marks_the_context_full(
    server, make_config
):
    session = await Session.open(make_config(context_window=1_000, max_retries=0))
    await chat(session, server, "q1", "a1")
    for _ in range(8):  # every trimmed retry of the summary request overflows too
        server.enqueue(Fault.overflow())
    events = await run(session, ops.Compact())
    turn_id = of_type(events, "turn_started")[0].turn_id
    assert of_type(events, "error") == [
        p.Error(
            message=(
                "Could not compact: not even the compaction prompt fits the model's context "
                "window. Check the context window in Settings, or start a new conversation."
            ),
            kind="context_overflow",
            turn_id=turn_id,
        )
    ]
    assert of_type(events, "token_count")[-1].total == 1_000  # the context is full
    assert [e.status for e in of_type(events, "compaction_ended")] == ["failed"]
    assert events[-1].status == "failed"
    await session.close()
