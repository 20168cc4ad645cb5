"""The request shapes after each kind of compaction, next to what Codex CLI 0.169.0 sends
(spec sections 3-4): local, the compaction trigger, the standalone endpoint and compaction
inside a turn's response; and the resume prefix invariant for each."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core import Session, ops
from app.core.compaction.prompts import summary_prefix
from app.demo import CompactReply, Fault, ModelServer, Reply
from tests.conftest import collect, of_type, run

PREFIX = summary_prefix()


def shape(body: dict[str, Any]) -> list[str]:
    """Each input item as a short label: U:<text>, CTX, SUMMARY, COMPACTION:<content>, …"""
    labels = []
    for item in body["input"]:
        kind = item.get("type", "message")
        if kind == "message":
            text = "".join(p.get("text", "") for p in item["content"])
            if text.startswith("<environment_context>"):
                labels.append("CTX")
            elif text.startswith(PREFIX):
                labels.append("SUMMARY:" + text[len(PREFIX) + 1 :])
            else:
                labels.append(f"{item['role'][0].upper()}:{text}")
        elif kind == "compaction":
            labels.append("COMPACTION:" + item["encrypted_content"])
        else:
            labels.append(kind)
    return labels


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "notes.txt").write_text("hello\n")
    return folder


async def two_turns(session: Session, server: ModelServer) -> None:
    for text, answer in (("U1", "A1"), ("U2", "A2")):
        server.enqueue(Reply(text=answer))
        await run(session, ops.UserTurn(text=text))


async def third_turn(session: Session, server: ModelServer) -> dict[str, Any]:
    server.enqueue(Reply(text="A3"))
    await run(session, ops.UserTurn(text="U3"))
    return server.requests_to("responses")[-1].body


async def test_local_shape(server, make_config, workspace):
    session = await Session.open(make_config(workspace=workspace))
    await two_turns(session, server)
    server.enqueue(Reply(text="SUM"))
    await run(session, ops.Compact())
    assert shape(await third_turn(session, server)) == [
        "U:U1", "CTX", "U:U2", "SUMMARY:SUM", "U:U3"
    ]
    await session.close()


async def test_trigger_request_has_a_turns_fields_and_the_trigger_last(
    server, make_config, workspace
):
    session = await Session.open(make_config(workspace=workspace, remote_compaction=True))
    await two_turns(session, server)
    turn_body = server.requests_to("responses")[-1].body
    history = session.history()
    server.enqueue(Reply(compaction="ENC-T"))
    events = await run(session, ops.Compact())
    body = server.requests_to("responses")[-1].body
    assert body["input"] == [*history, {"type": "compaction_trigger"}]
    for field in ("instructions", "tools", "prompt_cache_key", "store", "stream", "model"):
        assert body[field] == turn_body[field], field
    assert "max_output_tokens" not in body
    info = of_type(events, "context_compacted")[0]
    assert (info.strategy, info.remote_form) == ("remote", "trigger")
    assert shape(await third_turn(session, server)) == [
        "U:U1", "CTX", "U:U2", "COMPACTION:ENC-T", "U:U3"
    ]
    await session.close()


async def test_standalone_shape(server, make_config, workspace):
    session = await Session.open(make_config(workspace=workspace, remote_compaction=True))
    await two_turns(session, server)
    server.enqueue(Fault.status(404, "not here"))  # no trigger form on this server
    server.enqueue(CompactReply(encrypted_content="ENC-S"), endpoint="compact")
    events = await run(session, ops.Compact())
    assert of_type(events, "context_compacted")[0].remote_form == "standalone"
    assert shape(await third_turn(session, server)) == [
        "U:U1", "CTX", "U:U2", "COMPACTION:ENC-S", "U:U3"
    ]
    await session.close()


async def test_server_side_compaction_inside_a_turn(server, make_config):
    config = make_config(
        context_window=4_096, remote_compaction=True, server_side_compaction=True
    )
    session = await Session.open(config)
    server.enqueue(Reply(text="A1"))
    await run(session, ops.UserTurn(text="U1"))
    body = server.requests_to("responses")[-1].body
    assert body["context_management"] == [{"type": "compaction", "compact_threshold": 3_686}]
    server.enqueue(Reply(compaction="ENC-IN-TURN", text="A2"))
    events = await run(session, ops.UserTurn(text="U2"))
    info = of_type(events, "context_compacted")[0]
    assert (info.trigger, info.strategy, info.remote_form) == ("server", "remote", "server")
    assert events[-1].status == "completed" and events[-1].last_agent_message == "A2"
    body = await third_turn(session, server)
    assert shape(body) == ["COMPACTION:ENC-IN-TURN", "A:A2", "U:U3"]
    await session.close()
    resumed = await Session.open(config, session_id=session.id)
    assert shape({"input": resumed.history()}) == shape(body) + ["A:A3"]
    await resumed.close()


async def test_server_side_compaction_is_off_unless_asked(server, make_config):
    session = await Session.open(make_config(context_window=4_096, remote_compaction=True))
    server.enqueue(Reply(text="A1"))
    await run(session, ops.UserTurn(text="U1"))
    assert "context_management" not in server.requests_to("responses")[-1].body
    await session.close()


@pytest.mark.parametrize("form", ["local", "trigger", "standalone"])
async def test_resume_prefix_invariant(server, make_config, workspace, form):
    config = make_config(workspace=workspace, remote_compaction=form != "local")
    session = await Session.open(config)
    await two_turns(session, server)
    if form == "local":
        server.enqueue(Reply(text="SUM"))
    elif form == "trigger":
        server.enqueue(Reply(compaction="ENC-T"))
    else:
        server.enqueue(Fault.status(404, "not here"))
        server.enqueue(CompactReply(encrypted_content="ENC-S"), endpoint="compact")
    await run(session, ops.Compact())
    after = await third_turn(session, server)
    await session.close()
    resumed = await Session.open(config, session_id=session.id)
    await collect(resumed, "token_count")
    resumed_body = await third_turn(resumed, server)
    assert resumed_body["input"][: len(after["input"])] == after["input"]
    await resumed.close()


async def test_the_demo_model_answers_every_remote_form(tmp_path, make_config):
    demo = ModelServer(mode="demo").start()
    try:
        base = {"base_url": demo.url, "remote_compaction": True, "demo_hints": True}
        session = await Session.open(make_config(**base, data_dir=tmp_path / "d1"))
        for text in ("Constraint: answers stay short.", "Tell me about compaction."):
            await run(session, ops.UserTurn(text=text))
        events = await run(session, ops.Compact())
        info = of_type(events, "context_compacted")[0]
        assert (info.strategy, info.remote_form) == ("remote", "trigger")
        assert session.history()[-1]["type"] == "compaction"
        events = await run(session, ops.UserTurn(text="What did I ask first?"))
        assert events[-1].status == "completed"

        server_side = await Session.open(
            make_config(
                **base,
                data_dir=tmp_path / "d2",
                context_window=4_096,
                auto_compact_token_limit=400,
                server_side_compaction=True,
            )
        )
        compacted = []
        for i in range(6):
            events = await run(server_side, ops.UserTurn(text=f"Message {i}: " + "words " * 60))
            compacted += of_type(events, "context_compacted")
            assert events[-1].status == "completed"
        assert compacted and compacted[0].trigger == "server"
        await session.close()
        await server_side.close()
    finally:
        demo.stop()
    assert json.dumps(info.model_dump())  # the marker serialises


@pytest.mark.parametrize(
    "answer",
    [
        Fault.status(400, "Cannot determine type of 'item'"),  # llama.cpp's words
        Reply(text="I ignored the trigger and answered"),  # no compaction item at all
    ],
)
async def test_a_server_without_the_trigger_form_is_remembered(server, make_config, answer):
    config = make_config(remote_compaction=True)
    session = await Session.open(config)
    await two_turns(session, server)
    server.enqueue(answer)
    server.enqueue(CompactReply(encrypted_content="ENC-S"), endpoint="compact")
    events = await run(session, ops.Compact())
    assert of_type(events, "context_compacted")[0].remote_form == "standalone"
    await session.close()
    again = await Session.open(config)  # after a restart: straight to what works
    await two_turns(again, server)
    requests = len(server.requests_to("responses"))
    server.enqueue(CompactReply(encrypted_content="ENC-2"), endpoint="compact")
    events = await run(again, ops.Compact())
    assert of_type(events, "context_compacted")[0].remote_form == "standalone"
    assert len(server.requests_to("responses")) == requests  # no trigger request this time
    await again.close()
