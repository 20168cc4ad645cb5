"""Carried notes end to end (issue 23): the user's facts survive compactions in the model's
view, the marker says what was carried, the block comes back on resume, the setting turns it
off, and the demo model answers from it."""

from __future__ import annotations

import json

from app.core import Session, ops
from app.core.compaction.notes.carryover import NOTES_LABEL
from app.demo import CompactReply, ModelServer, Reply, ToolCall
from tests.conftest import input_texts, of_type, run

FILLER = "We went on talking about the plan and what to do next for a good while. " * 12
# Newer messages that fill the kept-message budget of a 4k window, so the planted one leaves.
BIG = FILLER * 3


async def chat(session: Session, server, text: str, answer: str = "ok"):
    server.enqueue(Reply(text=answer))
    return await run(session, ops.UserTurn(text=text))


async def compact(session: Session, server, summary: str = "Nothing specific."):
    server.enqueue(Reply(text=summary))
    return await run(session, ops.Compact())


def notes_in(body: dict) -> list[str]:
    return [t for role, t in input_texts(body) if role == "user" and t.startswith(NOTES_LABEL)]


async def test_facts_survive_three_compactions_with_a_blank_summary(server, make_config):
    session = await Session.open(make_config(context_window=4_096))
    await chat(session, server, f"{FILLER} The staging gateway listens on port 8443. {FILLER}")
    await chat(session, server, BIG)
    await chat(session, server, BIG)
    await compact(session, server)
    await chat(session, server, f"{FILLER} Never propose MongoDB for this project. {FILLER}")
    await chat(session, server, BIG)
    await chat(session, server, BIG)
    await compact(session, server)
    await chat(session, server, f"{FILLER} Send every alert to ops@acme.example. {FILLER}")
    await chat(session, server, BIG)
    await chat(session, server, BIG)
    events = await compact(session, server)
    await chat(session, server, "What now?")
    body = server.requests_to("responses")[-1].body
    blocks = notes_in(body)
    assert len(blocks) == 1
    for fact in (
        "The staging gateway listens on port 8443.",
        "Never propose MongoDB for this project.",
        "Send every alert to ops@acme.example.",
    ):
        assert f"- {fact}" in blocks[0]
    # The block sits just before the summary, and the marker lists what it carries.
    texts = input_texts(body)
    assert texts[-3][1].startswith(NOTES_LABEL) and "Nothing specific." in texts[-2][1]
    marker = of_type(events, "context_compacted")[0]
    assert marker.carried_notes == [
        "The staging gateway listens on port 8443.",
        "Never propose MongoDB for this project.",
        "Send every alert to ops@acme.example.",
    ]
    await session.close()


async def test_files_and_commands_are_carried_and_shown_on_the_marker(
    server, make_config, tmp_path
):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "settings.ini").write_text("[pool]\nmax_workers = 37\n")
    session = await Session.open(make_config(context_window=4_096, workspace=ws))
    server.enqueue(Reply(function_calls=[ToolCall("read_file", {"path": "settings.ini"})]))
    server.enqueue(Reply(text="It sets max_workers."))
    await run(session, ops.UserTurn(text="Please read settings.ini"))
    await chat(session, server, BIG)
    await chat(session, server, BIG)
    events = await compact(session, server)
    marker = of_type(events, "context_compacted")[0]
    assert marker.carried_files == ["settings.ini (read)"]
    assert "Files read (newest first):\n- settings.ini" in notes_in(
        {"input": session.history()}
    )[0]
    await session.close()


async def test_the_block_and_the_marker_come_back_on_resume(server, make_config):
    config = make_config(context_window=4_096)
    session = await Session.open(config)
    await chat(session, server, f"{FILLER} The budget is $12,500 for the migration. {FILLER}")
    await chat(session, server, BIG)
    await chat(session, server, BIG)
    await compact(session, server)
    history = session.history()
    await session.close()
    resumed = await Session.open(config, session_id=session.id)
    assert resumed.history() == history
    assert notes_in({"input": resumed.history()})
    markers = [e for e in resumed.replay_events() if e.type == "context_compacted"]
    assert markers and markers[0].carried_notes == ["The budget is $12,500 for the migration."]
    # The Model view names the block.
    entries = [e for e in resumed.context_view() if e.carried_notes]
    assert len(entries) == 1 and entries[0].text.startswith(NOTES_LABEL)
    # The next compaction after resume still merges it.
    await chat(resumed, server, FILLER)
    await chat(resumed, server, FILLER)
    await compact(resumed, server)
    assert "$12,500" in notes_in({"input": resumed.history()})[0]
    await resumed.close()


async def test_the_setting_off_carries_nothing(server, make_config):
    session = await Session.open(make_config(context_window=4_096, carry_notes=False))
    await chat(session, server, f"{FILLER} The staging gateway listens on port 8443. {FILLER}")
    await chat(session, server, BIG)
    await chat(session, server, BIG)
    events = await compact(session, server)
    marker = of_type(events, "context_compacted")[0]
    assert marker.carried_notes == [] and marker.carried_files == []
    assert not notes_in({"input": session.history()})
    assert not any("8443" in json.dumps(item) for item in session.history())
    await session.close()


async def test_remote_compaction_keeps_the_block_beside_the_compaction_item(server, make_config):
    config = make_config(context_window=4_096, remote_compaction=True)
    session = await Session.open(config)
    await chat(session, server, f"{FILLER} The service account is svc-billing-42. {FILLER}")
    server.enqueue(CompactReply(encrypted_content="ENC-1"), endpoint="compact")
    server.enqueue(Reply(text="not a compaction"))  # the trigger form: refused below
    await run(session, ops.Compact())
    history = session.history()
    kinds = [item.get("type") for item in history]
    assert "compaction" in kinds
    index = kinds.index("compaction")
    assert history[index - 1]["role"] == "user"
    assert "svc-billing-42" in json.dumps(history[index - 1])
    await session.close()


async def test_the_demo_model_answers_from_the_notes_after_several_compactions(
    tmp_path, make_config
):
    demo = ModelServer(mode="demo").start()
    try:
        session = await Session.open(
            make_config(
                base_url=demo.url, demo_hints=True, context_window=4_096, data_dir=tmp_path / "d"
            )
        )
        await run(
            session, ops.UserTurn(text=f"{FILLER} The staging gateway listens on port 8443.")
        )
        for _ in range(3):
            await run(session, ops.UserTurn(text=FILLER))
            await run(session, ops.UserTurn(text=FILLER))
            events = await run(session, ops.Compact())
            assert of_type(events, "context_compacted")
        # Nothing but the notes holds the port now.
        view = [e for e in session.context_view() if "8443" in e.text]
        assert len(view) == 1 and view[0].carried_notes
        events = await run(
            session, ops.UserTurn(text="Which port does the staging gateway listen on?")
        )
        answer = events[-1].last_agent_message
        assert "carried over" in answer and "port 8443" in answer
        await session.close()
    finally:
        demo.stop()
