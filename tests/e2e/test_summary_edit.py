"""The summary, seen and corrected (issue 23, item 4), end to end against the scripted server:
the edit replaces what the model reads, is recorded (a reopened session has it), can be undone,
and only the latest compaction's summary, one Coco wrote, can be edited."""

from __future__ import annotations

from app.core import Session, ops
from app.core.compaction.prompts import summary_prefix
from app.demo import Reply
from tests.conftest import collect, input_texts, of_type, run

PREFIX = summary_prefix()


async def chat(session: Session, server, text: str, answer: str = "ok") -> list:
    server.enqueue(Reply(text=answer))
    return await run(session, ops.UserTurn(text=text))


async def compact(session: Session, server, summary: str) -> str:
    server.enqueue(Reply(text=summary))
    events = await run(session, ops.Compact())
    return str(of_type(events, "context_compacted")[0].item_id)


async def submit(session: Session, op, until: str = "summary_edited") -> list:
    await session.submit(op)
    return await collect(session, until)


async def test_an_edited_summary_is_what_the_model_reads_and_survives_resume(
    server, make_config
):
    config = make_config()
    session = await Session.open(config)
    await chat(session, server, "set up the service")
    item_id = await compact(session, server, "The user set up a service.")
    events = await submit(
        session, ops.EditSummary(item_id=item_id, text="The user set up svc-coco on port 8443.")
    )
    edited = of_type(events, "summary_edited")[0]
    assert (edited.edited, edited.undoable) == (True, True)
    assert edited.summary == "The user set up svc-coco on port 8443."
    await chat(session, server, "what port?")
    sent = input_texts(server.requests_to("responses")[-1].body)
    assert ("user", f"{PREFIX}\nThe user set up svc-coco on port 8443.") in sent
    assert not any("The user set up a service." in text for _, text in sent)
    await session.close()

    reopened = await Session.open(config, session.id)
    summaries = [e.text for e in reopened.context_view() if e.is_summary]
    assert summaries == [f"{PREFIX}\nThe user set up svc-coco on port 8443."]
    replayed = reopened.replay_events()
    marker = of_type(replayed, "context_compacted")[0]
    assert marker.summary == "The user set up svc-coco on port 8443."
    assert of_type(replayed, "summary_edited")[0].edited
    await reopened.close()


async def test_an_edit_can_be_undone_also_after_a_restart(server, make_config):
    config = make_config()
    session = await Session.open(config)
    await chat(session, server, "q")
    item_id = await compact(session, server, "ORIGINAL")
    await submit(session, ops.EditSummary(item_id=item_id, text="FIRST EDIT"))
    await submit(session, ops.EditSummary(item_id=item_id, text="SECOND EDIT"))
    await session.close()

    reopened = await Session.open(config, session.id)
    undone = of_type(await submit(reopened, ops.UndoSummaryEdit(item_id=item_id)),
                     "summary_edited")[0]
    assert undone.summary == "FIRST EDIT" and undone.edited and undone.undoable
    undone = of_type(await submit(reopened, ops.UndoSummaryEdit(item_id=item_id)),
                     "summary_edited")[0]
    assert undone.summary == "ORIGINAL" and not undone.edited and not undone.undoable
    assert [e.text for e in reopened.context_view() if e.is_summary] == [f"{PREFIX}\nORIGINAL"]
    error = of_type(await submit(reopened, ops.UndoSummaryEdit(item_id=item_id), "error"),
                    "error")[0]
    assert "not edited" in error.message
    await reopened.close()
    again = await Session.open(config, session.id)
    assert [e.text for e in again.context_view() if e.is_summary] == [f"{PREFIX}\nORIGINAL"]
    assert not of_type(again.replay_events(), "summary_edited")
    await again.close()


async def test_only_the_latest_summary_in_view_can_be_edited(server, make_config):
    session = await Session.open(make_config())
    await chat(session, server, "q1")
    first = await compact(session, server, "S1")
    await chat(session, server, "q2")
    second = await compact(session, server, "S2")
    error = of_type(await submit(session, ops.EditSummary(item_id=first, text="x"), "error"),
                    "error")[0]
    assert "later compaction replaced this summary" in error.message
    await session.submit(ops.UndoCompaction())
    await collect(session, "compaction_undone")
    error = of_type(await submit(session, ops.EditSummary(item_id=second, text="x"), "error"),
                    "error")[0]
    assert "was undone" in error.message
    error = of_type(await submit(session, ops.EditSummary(item_id=first, text="  "), "error"),
                    "error")[0]
    assert "cannot be empty" in error.message
    # S1 is the latest again once S2 was undone: it can be edited.
    edited = of_type(await submit(session, ops.EditSummary(item_id=first, text="S1 fixed")),
                     "summary_edited")[0]
    assert edited.summary == "S1 fixed"
    await session.close()


async def test_an_edit_does_not_count_as_growth_for_the_loop_guard(server, make_config):
    session = await Session.open(make_config())
    await chat(session, server, "q")
    item_id = await compact(session, server, "S")
    await submit(session, ops.EditSummary(item_id=item_id, text="S, corrected"))
    events = await run(session, ops.Compact())
    assert [e.message for e in of_type(events, "background")] == [
        "Nothing new to compact since the last compaction."
    ]
    await session.close()


async def test_a_summary_too_large_for_a_compacted_history_is_refused(server, make_config):
    session = await Session.open(make_config(context_window=4_096, auto_compact=False))
    await chat(session, server, "q")
    item_id = await compact(session, server, "S")
    huge = " ".join(f"fact{i}" for i in range(3000))
    error = of_type(await submit(session, ops.EditSummary(item_id=item_id, text=huge), "error"),
                    "error")[0]
    assert error.message.startswith("The summary was not changed: it is about ")
    assert "4,096-token window leaves room for at most" in error.message
    assert [e.text for e in session.context_view() if e.is_summary] == [f"{PREFIX}\nS"]
    await session.close()


async def test_the_markers_figures_follow_an_edited_summary_live_and_reopened(
    server, make_config
):
    config = make_config()
    session = await Session.open(config)
    for n in range(3):
        await chat(session, server, f"question {n} " + "about the garden " * 30)
    long_summary = " ".join(f"Fact {i}: the garden bed {i} needs {i % 5} litres." for i in range(60))
    server.enqueue(Reply(text=long_summary))
    events = await run(session, ops.Compact())
    first = of_type(events, "context_compacted")[0]
    events = await submit(session, ops.EditSummary(item_id=first.item_id, text="Garden beds."))
    marker = of_type(events, "summary_edited")[0].marker
    assert marker is not None and marker.tokens_before == first.tokens_before
    # The summary is some hundreds of tokens shorter: so is what the compaction left.
    assert marker.tokens_after < first.tokens_after - 300
    assert marker.tokens_after == session.token_usage().total
    assert marker.freed_share > first.freed_share
    await session.close()

    reopened = await Session.open(config, session.id)
    replayed = of_type(reopened.replay_events(), "context_compacted")[0]
    assert (replayed.tokens_after, replayed.freed_share) == (
        marker.tokens_after, marker.freed_share
    )
    await reopened.close()
