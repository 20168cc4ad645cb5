"""Recall end to end: a real session against the loopback server, where the model calls the
recall tool after compactions removed the facts from its view."""

from __future__ import annotations

from pathlib import Path

from app.core import CoreConfig, Session, ops
from app.core.recall.store import recall_index_path
from app.demo import ModelServer, Reply, ToolCall
from tests.conftest import of_type, run

# Facts the notes would carry over are what recall is for when they are off.
NO_NOTES = {"carry_notes": False} if "carry_notes" in CoreConfig.model_fields else {}
FILE = "[cluster]\nshardCount = 12\nlisten_port = 8443\n"


async def recall_via_model(session: Session, server, query: str) -> str:
    """The model calls recall with ``query``; what the tool returned to it."""
    server.enqueue(Reply(function_calls=[ToolCall("recall", {"query": query})]))
    server.enqueue(Reply(text="Found it."))
    events = await run(session, ops.UserTurn(text="Look it up, please."))
    outputs = [
        e.item.data for e in of_type(events, "item_completed")
        if e.item.kind == "function_call_output"
    ]
    assert len(outputs) == 1 and outputs[0]["name"] == "recall"
    sent = server.requests_to("responses")[-1].body["input"]
    assert sent[-1]["type"] == "function_call_output"
    assert sent[-1]["output"] == outputs[0]["output"]  # the model got exactly this
    return str(outputs[0]["output"])


async def test_each_kind_of_content_is_found_after_compaction(server, make_config, tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "cluster.toml").write_text(FILE)
    session = await Session.open(
        make_config(workspace=workspace, context_window=8192, carry_notes=False)
    )
    server.enqueue(Reply(text="I decided to use the token bucket limiter."))
    await run(session, ops.UserTurn(text="Our deploy target is svc-orchard-41."))
    server.enqueue(Reply(function_calls=[ToolCall("read_file", {"path": "cluster.toml"})]))
    server.enqueue(Reply(text="Read it."))
    await run(session, ops.UserTurn(text="Read cluster.toml"))
    server.enqueue(Reply(text="The user migrates the zebra database on Friday."))
    await run(session, ops.Compact())
    for n in range(12):  # push the early messages and the first summary out of view
        server.enqueue(Reply(text=f"Answer {n}."))
        await run(session, ops.UserTurn(text=f"Unrelated question {n}: " + "filler " * 250))
    server.enqueue(Reply(text="Second summary about nothing in particular."))
    await run(session, ops.Compact())
    in_view = " ".join(str(item) for item in session.history())
    for gone in ("svc-orchard-41", "token bucket", "8443", "zebra"):
        assert gone not in in_view

    found = await recall_via_model(session, server, "svc-orchard-41")
    assert "the user's message" in found and "Our deploy target is svc-orchard-41." in found
    assert "no longer in your view" in found
    found = await recall_via_model(session, server, "what limit did we choose")
    assert "your answer" in found and "token bucket limiter" in found
    found = await recall_via_model(session, server, "listen_port")
    assert "output of read_file" in found and "listen_port = 8443" in found
    found = await recall_via_model(session, server, "zebra")
    assert "an earlier compaction summary" in found and "migrates the zebra database" in found
    assert recall_index_path(session.rollout_path).exists()
    await session.close()


async def test_a_resumed_session_finds_what_came_before(server, make_config):
    config = make_config()
    session = await Session.open(config)
    server.enqueue(Reply(text="Noted."))
    await run(session, ops.UserTurn(text="The quokka is our mascot."))
    await session.close()
    recall_index_path(session.rollout_path).unlink()  # rebuilt from the rollout

    resumed = await Session.open(config, session_id=session.id)
    found = await recall_via_model(resumed, server, "quokka mascot")
    assert "The quokka is our mascot." in found
    await resumed.close()


async def test_recall_is_not_offered_when_switched_off(server, make_config):
    session = await Session.open(make_config(recall=False))
    server.enqueue(Reply(text="Hi."))
    await run(session, ops.UserTurn(text="hello"))
    body = server.requests_to("responses")[-1].body
    assert "recall" not in [tool.get("name") for tool in body.get("tools") or []]
    # Switched on in the settings: offered from the next request.
    await session.submit(ops.UpdateConfig(config=make_config(recall=True)))
    server.enqueue(Reply(text="Hi again."))
    await run(session, ops.UserTurn(text="hello again"))
    body = server.requests_to("responses")[-1].body
    assert [tool["name"] for tool in body["tools"]] == ["recall"]
    await session.close()


async def test_recall_is_offered_on_chat_completions(tmp_path: Path, make_config):
    chat = ModelServer(mode="scripted").start()
    try:
        session = await Session.open(make_config(base_url=chat.url, wire_api="chat"))
        chat.enqueue(Reply(text="Hi."))
        await run(session, ops.UserTurn(text="hello"))
        body = chat.requests_to("chat")[-1].body
        assert [tool["function"]["name"] for tool in body["tools"]] == ["recall"]
        await session.close()
    finally:
        chat.stop()


async def test_the_demo_model_recalls_what_left_its_view(make_config):
    demo = ModelServer(mode="demo").start()
    try:
        config = make_config(base_url=demo.url, model="coco-demo", demo_hints=True,
                             context_window=8192, **NO_NOTES)
        session = await Session.open(config)
        await run(session, ops.UserTurn(text="For the record: the staging server listens on "
                                        "port 7001 behind the gateway."))
        for round_ in range(2):
            for n in range(8):
                text = f"Topic {round_}-{n}: " + "tell me about gardening tools " * 40
                await run(session, ops.UserTurn(text=text))
            await run(session, ops.Compact())
        assert "7001" not in " ".join(str(item) for item in session.history())

        events = await run(session, ops.UserTurn(
            text="Which port did I give you earlier for the staging server?"
        ))
        calls = [e.item for e in of_type(events, "item_completed")
                 if e.item.kind == "function_call"]
        assert [call.data.get("name") for call in calls] == ["recall"]
        answer = of_type(events, "agent_message")[-1].text
        assert "port 7001 behind the gateway" in answer
        assert "no longer in my view" in answer
        await session.close()
    finally:
        demo.stop()


async def test_the_user_searches_the_whole_conversation_through_an_op(server, make_config):
    from tests.conftest import collect

    session = await Session.open(make_config())
    server.enqueue(Reply(function_calls=[ToolCall("recall", {"query": "x"})]))
    server.enqueue(Reply(text="Noted the harbour code."))
    await run(session, ops.UserTurn(text="The harbour code is HX-2291."))
    await session.submit(ops.FindInConversation(query="harbour code"))
    events = await collect(session, "conversation_matches")
    found = events[-1]
    assert [(m.role, m.turn) for m in found.matches] == [("assistant", 1), ("user", 1)]
    assert found.matches[1].anchor in "The harbour code is HX-2291."
    assert found.matches[1].in_view and found.message == ""
    await session.submit(ops.FindInConversation(query="*"))
    events = await collect(session, "conversation_matches")
    assert events[-1].matches == [] and events[-1].message == "Type words to look for."
    await session.close()


async def test_after_compact_the_demo_answers_from_its_view_or_the_found_passage(make_config):
    # A newcomer's try: a fact, /compact (the fact kept verbatim), then questions about it.
    demo = ModelServer(mode="demo").start()
    try:
        config = make_config(base_url=demo.url, model="coco-demo", demo_hints=True)
        session = await Session.open(config)
        await run(session, ops.UserTurn(text="My cat is called Biscuit and she is seven."))
        await run(session, ops.UserTurn(
            text="The staging server listens on port 7001 behind the gateway."))
        await run(session, ops.UserTurn(text="Tell me about gardening tools."))
        await run(session, ops.Compact())
        assert "port 7001 behind the gateway" in str(session.history())  # kept verbatim

        # Its telling words are in one sentence it sees: answered from it, no search.
        events = await run(session, ops.UserTurn(text="What was my cat called earlier?"))
        assert not [e for e in of_type(events, "item_completed")
                    if e.item.kind == "function_call"]
        answer = of_type(events, "agent_message")[-1].text
        assert "still in my view" in answer and "Biscuit" in answer, answer
        assert "no longer in my view" not in answer

        # No sentence it sees holds both "gateway" and "address": it searches. The only passage
        # with both is the question; the search finds passages with "gateway" (its own answer
        # out of view first, which quotes the fact still in view) and says the fact is in view.
        question = "What was the gateway address I mentioned?"
        events = await run(session, ops.UserTurn(text=question))
        calls = [e.item.data for e in of_type(events, "item_completed")
                 if e.item.kind == "function_call"]
        assert [call.get("name") for call in calls] == ["recall"]
        found = next(e.item.data["output"] for e in of_type(events, "item_completed")
                 if e.item.kind == "function_call_output")
        assert question not in found, found  # never the message that asked
        answer = of_type(events, "agent_message")[-1].text
        assert "port 7001 behind the gateway" in answer, answer
        assert "still in my view" in answer and "no longer in my view" not in answer, answer
        assert question not in answer
        await session.close()
    finally:
        demo.stop()
