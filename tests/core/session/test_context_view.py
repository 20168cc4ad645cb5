"""The context view (``app.core.session.context_view``): the model's next input item by item, counted
as the gauge counts, each marked as summary, injected context or pinned."""

from __future__ import annotations

from app.core import Session, ops
from app.core.session.context_view import context_entries
from app.demo import Reply
from tests.conftest import collect, run


async def test_each_item_of_the_view_is_listed_with_the_gauges_count(
    server, make_config, tmp_path
):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    session = await Session.open(make_config(workspace=workspace))
    server.enqueue(Reply(text="an answer"))
    await run(session, ops.UserTurn(text="a question"))
    server.enqueue(Reply(text="THE SUMMARY"))
    await run(session, ops.Compact())
    entries = session.context_view()
    assert entries == context_entries(session._parts.history, session._parts.compactor.pins)
    assert [e.tokens for e in entries] == session._parts.history.item_tokens()
    assert [e.injected for e in entries].count(True) == 1  # the environment block
    (summary,) = [e for e in entries if e.is_summary]
    assert "THE SUMMARY" in summary.text and summary.role == "user"
    assert not any(e.pinned for e in entries)
    await session.close()


async def test_a_pinned_item_is_marked_pinned(server, make_config):
    session = await Session.open(make_config())
    server.enqueue(Reply(text="remember 42"))
    events = await run(session, ops.UserTurn(text="the number?"))
    reply = next(e.item.id for e in events
                 if e.type == "item_completed" and e.item.kind == "agent_message")
    await session.submit(ops.PinItem(kind="agent_message", row_id=reply, text="remember 42"))
    await collect(session, "item_pinned")
    pinned = [e.text for e in session.context_view() if e.pinned]
    assert pinned == ["remember 42"]
    await session.close()
