"""The Markdown export says what the window shows (issue 39, finding 9): a pinned message is
marked pinned, a summary the person edited is the edited text and says so, and a reply the
server cut off is marked. Driven through the real core against the scripted server."""

from __future__ import annotations

from app.core import Session, ops
from app.demo import Reply
from app.ui.sessions.export import transcript_to_markdown
from tests.conftest import collect, of_type, run


async def test_the_markdown_export_marks_pins_and_an_edited_summary(server, make_config):
    session = await Session.open(make_config())
    server.enqueue(Reply(text="Use port 8443 for the admin API."))
    events = await run(session, ops.UserTurn(text="Which port?"))
    reply = next(
        e.item.id for e in of_type(events, "item_completed") if e.item.kind == "agent_message"
    )
    await session.submit(
        ops.PinItem(kind="agent_message", row_id=reply, text="Use port 8443 for the admin API.")
    )
    await collect(session, "item_pinned")
    server.enqueue(Reply(text="MODEL SUMMARY"))
    compacted = of_type(await run(session, ops.Compact()), "context_compacted")[0]
    await session.submit(ops.EditSummary(item_id=compacted.item_id, text="MY OWN SUMMARY"))
    await collect(session, "summary_edited")

    markdown = transcript_to_markdown(session.replay_events())
    assert "### Assistant _(pinned)_\n\nUse port 8443 for the admin API." in markdown
    assert "### You\n\nWhich port?" in markdown  # not pinned: not marked
    assert "Summary (edited by you):\n\n> MY OWN SUMMARY" in markdown
    assert "MODEL SUMMARY" not in markdown
    await session.close()
