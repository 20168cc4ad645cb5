"""A junk summary (issue 39) through the public API against the scripted server: retried once,
then not installed; the marker and a warning say so in words, live and after a reopen."""

from __future__ import annotations

from app.core import Session, ops
from app.core.compaction.prompts import summary_prefix
from app.demo import Reply
from tests.conftest import input_texts, of_type, run

PREFIX = summary_prefix()
LOOP = "I'm a model. " * 60


async def chat(session: Session, server, text: str, answer: str) -> None:
    server.enqueue(Reply(text=answer))
    await run(session, ops.UserTurn(text=text))


async def test_a_junk_summary_is_not_installed_and_the_marker_says_so(server, make_config):
    config = make_config()
    session = await Session.open(config)
    await chat(session, server, "My port is 8443 and my name is Ada.", "Noted.")
    await chat(session, server, "Which cache? Decide for me.", "Redis 7.2.")
    server.enqueue(Reply(text=LOOP))
    server.enqueue(Reply(text=f"{PREFIX}\n{PREFIX}"))  # the retry gives Coco's wrapper back
    events = await run(session, ops.Compact())
    info = of_type(events, "context_compacted")[0]
    assert info.summary_unusable is not None and not info.kept_previous_summary
    assert info.summary == ""
    texts = [text for _, text in input_texts({"input": session.history()})]
    assert not any(text.startswith(PREFIX) for text in texts)
    assert any("8443" in text for text in texts)  # the kept messages carry it
    warnings = [w.message for w in of_type(events, "warning")]
    assert any("summary was unusable" in w and "none was installed" in w for w in warnings)
    # The session goes on, and a reopen tells the same marker.
    await chat(session, server, "And now?", "Carry on.")
    await session.close()
    reopened = await Session.open(config, session.id)
    markers = [e for e in reopened.replay_events() if e.type == "context_compacted"]
    assert markers and markers[0].summary_unusable == info.summary_unusable
    await reopened.close()


async def test_a_junk_summary_keeps_the_earlier_good_one(server, make_config):
    session = await Session.open(make_config())
    await chat(session, server, "first question", "first answer")
    server.enqueue(Reply(text="EARLIER SUMMARY with the goal and the decisions."))
    await run(session, ops.Compact())
    await chat(session, server, "second question", "second answer")
    server.enqueue(Reply(text=LOOP))
    server.enqueue(Reply(text=LOOP))
    events = await run(session, ops.Compact())
    info = of_type(events, "context_compacted")[0]
    assert info.summary_unusable == "repetition" and info.kept_previous_summary
    summary = input_texts({"input": session.history()})[-1][1]
    assert summary == f"{PREFIX}\nEARLIER SUMMARY with the goal and the decisions."
    warnings = [w.message for w in of_type(events, "warning")]
    assert any("unusable" in w and "earlier summary was kept" in w for w in warnings)
    await session.close()
