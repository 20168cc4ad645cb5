"""Faults of the disk and of the session file, through the public API: every turn ends, the
error is in words, nothing unsaved is lost from the user's hands, and the session goes on."""

from __future__ import annotations

import json

from app.core import Session, ops
from app.core.rollout.store import RolloutWriter
from app.demo import Reply, ToolCall
from tests.conftest import DiskFull, input_texts, of_type, run


async def test_a_full_disk_ends_the_turn_in_words_and_gives_the_message_back(
    server, make_config, monkeypatch
):
    disk = DiskFull(monkeypatch)
    config = make_config()
    session = await Session.open(config)
    server.enqueue(Reply(text="first answer"))
    await run(session, ops.UserTurn(text="first"))
    history = session.history()
    disk.on = True
    events = await run(session, ops.UserTurn(text="typed while the disk is full"))
    assert events[-1].type == "turn_complete" and events[-1].status == "failed"
    error = of_type(events, "error")[0]
    assert error.kind == "storage" and "the disk is full" in error.message
    assert of_type(events, "message_not_sent")[0].text == "typed while the disk is full"
    assert session.history() == history  # nothing that was not saved is in the history
    disk.on = False
    server.enqueue(Reply(text="second answer"))
    events = await run(session, ops.UserTurn(text="after space was freed"))
    assert events[-1].status == "completed"
    await session.close()
    resumed = await Session.open(config, session_id=session.id)
    texts = [t for _, t in input_texts({"input": resumed.history()})]
    assert texts == ["first", "first answer", "after space was freed", "second answer"]
    await resumed.close()


async def test_a_write_failure_mid_reply_still_ends_the_turn(server, make_config, monkeypatch):
    disk = DiskFull(monkeypatch)
    session = await Session.open(make_config())
    real_append = RolloutWriter.append

    def append(self: RolloutWriter, type: str, payload: dict) -> None:
        item = payload.get("item") or {}
        if item.get("role") == "assistant":
            disk.on = True
        real_append(self, type, payload)

    monkeypatch.setattr(RolloutWriter, "append", append)
    server.enqueue(Reply(text="an answer the disk cannot take"))
    events = await run(session, ops.UserTurn(text="hello"))
    assert events[-1].status == "failed"
    assert of_type(events, "agent_message_delta")  # it was shown while it streamed
    assert "the disk is full" in of_type(events, "error")[0].message
    assert not of_type(events, "message_not_sent")  # the user's message itself was saved
    disk.on = False
    await session.close()


async def test_a_crash_between_a_call_and_its_output_is_repaired_on_resume(
    server, make_config, tmp_path
):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha\n")
    config = make_config(workspace=ws)
    session = await Session.open(config)
    server.enqueue(Reply(function_calls=[ToolCall("read_file", {"path": "a.txt"}, "call_1")]))
    server.enqueue(Reply(text="done"))
    await run(session, ops.UserTurn(text="read a.txt"))
    await session.close()
    # What a kill -9 between the call and its output leaves: the output and what followed.
    lines = session.rollout_path.read_text().splitlines()
    cut = next(i for i, line in enumerate(lines) if '"function_call_output"' in line)
    session.rollout_path.write_text("\n".join(lines[:cut]) + "\n")

    resumed = await Session.open(config, session_id=session.id)
    repaired = resumed.history()
    output = next(i for i in repaired if i.get("type") == "function_call_output")
    assert output["call_id"] == "call_1" and "abort" in output["output"].lower()
    server.enqueue(Reply(text="carried on"))
    events = await run(resumed, ops.UserTurn(text="go on"))
    assert events[-1].status == "completed"
    body = server.requests_to("responses")[-1].body
    calls = [i["call_id"] for i in body["input"] if i.get("type") == "function_call"]
    outputs = [i["call_id"] for i in body["input"] if i.get("type") == "function_call_output"]
    assert calls == outputs == ["call_1"]
    await resumed.close()


async def test_a_second_opener_gets_the_session_read_only(server, make_config):
    config = make_config()
    first = await Session.open(config)
    server.enqueue(Reply(text="hi"))
    await run(first, ops.UserTurn(text="hello"))
    second = await Session.open(config, session_id=first.id)
    warnings = [w.message for w in of_type(await _drain(second), "warning")]
    assert any("in use" in w or "read-only" in w for w in warnings)
    assert [t for _, t in input_texts({"input": second.history()})] == ["hello", "hi"]
    events = await run(second, ops.UserTurn(text="from the second window"))
    assert events[-1].status == "failed"
    assert of_type(events, "error")[0].kind == "storage"
    assert of_type(events, "message_not_sent")[0].text == "from the second window"
    await second.close()
    # The first opener's conversation is untouched and goes on.
    server.enqueue(Reply(text="still here"))
    events = await run(first, ops.UserTurn(text="again"))
    assert events[-1].status == "completed"
    await first.close()
    assert "from the second window" not in first.rollout_path.read_text()


async def _drain(session: Session) -> list:
    """The events a freshly opened session has queued (up to its first token count)."""
    from tests.conftest import collect

    return await collect(session, "token_count")


async def test_the_session_file_never_holds_a_key_in_the_base_url(server, make_config):
    key = "sk-in-the-url-0123456789abcdef"
    session = await Session.open(make_config(base_url=f"{server.url}/{key}", api_key=key))
    server.enqueue(Reply(text="ok"))
    await run(session, ops.UserTurn(text="hello"))
    await session.close()
    text = session.rollout_path.read_text()
    assert key not in text
    meta = json.loads(text.splitlines()[0])["payload"]
    assert meta["base_url"].startswith("http://127.0.0.1")
