"""The user turn's own steps (``app.core.session.turn.task``), through a session on the scripted
server: the turn's record and events, an interruption that leaves no call without an output,
the environment block injected once, the refusal of a message too big at its exact edge and
its words, an attachment refused, and an internal fault that still ends the turn."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.core import Session, ops
from app.core.items import ENVIRONMENT_CONTEXT_OPEN
from app.core.session.turn.loop import SamplingLoop
from app.demo import Fault, Reply, ToolCall
from tests.conftest import DiskFull, collect, of_type, run

INTERRUPTED_CALL = "Interrupted by the user before it ran."


def workspace(tmp_path: Path, name: str = "ws") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    return folder


def records(session: Session, kind: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in session.rollout_path.read_text().splitlines()]
    return [line["payload"] for line in lines if line["type"] == kind]


async def test_a_turn_records_its_place_and_figures_and_says_its_kind(
    server: Any, make_config: Any
) -> None:
    server.enqueue(Reply(text="one"))
    server.enqueue(Reply(text="two"))
    session = await Session.open(
        make_config(context_window=32_000, auto_compact_token_limit=28_000)
    )
    first = await run(session, ops.UserTurn(text="hello"))
    second = await run(session, ops.UserTurn(text="again"))
    started = [of_type(events, "turn_started")[0] for events in (first, second)]
    assert all(s.kind == "regular" and s.context_window == 32_000 for s in started)
    assert all(e[-1].kind == "regular" for e in (first, second))
    ids = [s.turn_id for s in started]
    assert all(turn_id.startswith("turn_") for turn_id in ids)
    contexts = records(session, "turn_context")
    assert contexts == [
        {
            "turn_id": ids[0],
            "parent": None,
            "model": "test-model",
            "context_window": 32_000,
            "auto_compact_limit": 28_000,
        },
        {
            "turn_id": ids[1],
            "parent": ids[0],
            "model": "test-model",
            "context_window": 32_000,
            "auto_compact_limit": 28_000,
        },
    ]
    (shown,) = [e.item for e in of_type(first, "item_completed") if e.item.kind == "user_message"]
    assert shown.id.startswith("user_") and shown.data == {"text": "hello"}
    await session.close()


async def test_an_interruption_answers_every_call_the_reply_left_without_output(
    server: Any, make_config: Any, tmp_path: Path
) -> None:
    folder = workspace(tmp_path)
    (folder / "a.txt").write_text("alpha")
    # A first round whose call ran, then a reply whose call is made and the stream held open.
    server.enqueue(Reply(function_calls=[ToolCall("read_file", {"path": "a.txt"}, "c0")]))
    server.enqueue(
        Reply(
            text="Reading b.",
            function_calls=[ToolCall("read_file", {"path": "b.txt"}, "c1")],
            pause_after_items=2,
        )
    )
    session = await Session.open(make_config(workspace=folder))
    await session.submit(ops.UserTurn(text="read them"))
    events = await collect(session, "item_started")
    while not (events[-1].item.kind == "function_call" and events[-1].item.data["call_id"] == "c1"):
        events = await collect(session, "item_started")
    await session.submit(ops.Interrupt())
    ended = await collect(session, "turn_complete")
    assert ended[-1].status == "aborted"
    history = session.history()
    types = [(item.get("type"), item.get("call_id")) for item in history]
    assert types[-4:] == [
        ("function_call_output", "c0"),
        ("message", None),
        ("function_call", "c1"),
        ("function_call_output", "c1"),
    ]
    outputs = [i for i in history if i.get("type") == "function_call_output"]
    assert [o["output"] == INTERRUPTED_CALL for o in outputs] == [False, True]
    recorded = records(session, "response_item")[-3:]
    assert [r["item"] for r in recorded] == history[-3:]
    assert all(r["turn_id"] == ended[-1].turn_id for r in recorded)
    await session.close()


async def test_an_interrupted_reply_is_kept_under_its_own_id(server: Any, make_config: Any) -> None:
    server.enqueue(Reply(text="word " * 400, chunk_size=5, delay_per_chunk=0.02))
    session = await Session.open(make_config())
    await session.submit(ops.UserTurn(text="a long story"))
    (delta,) = (await collect(session, "agent_message_delta"))[-1:]
    await session.submit(ops.Interrupt())
    await collect(session, "turn_complete")
    kept = session.history()[-1]
    assert kept["role"] == "assistant" and kept["id"] == delta.item_id
    last = records(session, "response_item")[-1]
    assert last["item"] == kept and last["interrupted"] and last["turn_id"] == delta.turn_id
    await session.close()


async def test_the_environment_block_is_sent_once_however_many_turns(
    server: Any, make_config: Any, tmp_path: Path
) -> None:
    folder = workspace(tmp_path)
    server.enqueue(Reply(text="one"))
    server.enqueue(Reply(text="two"))
    session = await Session.open(make_config(workspace=folder))
    await run(session, ops.UserTurn(text="hello"))
    await run(session, ops.UserTurn(text="again"))
    last = server.requests_to("responses")[-1].body["input"]
    blocks = [
        item
        for item in last
        if item.get("role") == "user"
        and json.dumps(item["content"]).find(ENVIRONMENT_CONTEXT_OPEN) >= 0
    ]
    assert len(blocks) == 1
    await session.close()


def _figures(reason: str) -> tuple[int, int]:
    """The message's tokens and the room a refusal names."""
    numbers = [int(n.replace(",", "")) for n in reason.split() if n.replace(",", "").isdigit()]
    return numbers[0], numbers[-1]


async def _refused(session: Session, text: str) -> Any:
    events = await run(session, ops.UserTurn(text=text))
    not_sent = of_type(events, "message_not_sent")
    return (events, not_sent[0]) if not_sent else (events, None)


async def test_a_message_of_exactly_the_room_is_sent_one_token_more_is_refused_in_words(
    server: Any, make_config: Any
) -> None:
    session = await Session.open(make_config(context_window=4_096))
    events, refused = await _refused(session, "word " * 20_000)
    assert refused is not None
    tokens, room = _figures(refused.reason)
    assert refused.reason == (
        f"Your message was not sent: it is about {tokens:,} tokens, and the model's 4,096-token "
        f"context window leaves room for at most {room:,} beside Coco's instructions and tools "
        "and an answer. Shorten it or send it in parts."
    )
    (error,) = of_type(events, "error")
    assert error.turn_id == of_type(events, "turn_started")[0].turn_id
    overhead = tokens - 20_000  # what the message costs beyond its words
    _, over = await _refused(session, "word " * (room - overhead + 1))
    assert over is not None and _figures(over.reason) == (room + 1, room)
    server.enqueue(Reply(text="fits"))
    _, fits = await _refused(session, "word " * (room - overhead))
    assert fits is None
    await session.close()


async def test_with_no_window_known_the_refusal_names_the_limit(
    server: Any, make_config: Any
) -> None:
    session = await Session.open(make_config(context_window=None, auto_compact_token_limit=3_000))
    _, refused = await _refused(session, "word " * 20_000)
    assert refused is not None and "the model's limit leaves room" in refused.reason
    await session.close()


async def test_the_environment_block_takes_its_share_of_the_room(
    server: Any, make_config: Any, tmp_path: Path
) -> None:
    # The same message refused with and without a workspace: the room differs by the block.
    folder = workspace(tmp_path)
    rooms = []
    for config in (
        make_config(context_window=4_096),
        make_config(context_window=4_096, workspace=folder),
    ):
        session = await Session.open(config)
        _, refused = await _refused(session, "word " * 20_000)
        rooms.append(_figures(refused.reason)[1])
        await session.close()
    assert rooms[1] < rooms[0]


async def test_an_attachment_that_cannot_be_read_is_refused_and_handed_back(
    server: Any, make_config: Any, tmp_path: Path
) -> None:
    session = await Session.open(make_config())
    missing = str(tmp_path / "gone.png")
    events = await run(session, ops.UserTurn(text="look", attachments=[missing]))
    assert events[-1].status == "failed"
    (not_sent,) = of_type(events, "message_not_sent")
    (error,) = of_type(events, "error")
    assert (not_sent.text, not_sent.attachments) == ("look", [missing])
    assert error.kind == "attachment" and not_sent.reason == error.message
    assert error.turn_id == events[-1].turn_id and "gone.png" in error.message
    assert session.history() == [] and server.requests_to("responses") == []
    await session.close()


async def test_an_internal_fault_still_ends_the_turn_in_words_and_offers_a_retry(
    server: Any, make_config: Any, monkeypatch: Any
) -> None:
    async def broken(self: Any, turn_id: str, text: str, box: Any) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(SamplingLoop, "run", broken)
    session = await Session.open(make_config())
    events = await run(session, ops.UserTurn(text="hello"))
    turn_id = events[-1].turn_id
    assert (events[-1].status, events[-1].last_agent_message) == ("failed", None)
    (error,) = of_type(events, "error")
    assert (error.message, error.kind, error.turn_id) == (
        "Internal error: a bug",
        "internal",
        turn_id,
    )
    assert of_type(events, "retry_available")[-1].turn_id == turn_id
    await session.close()


async def test_a_retry_says_the_message_is_sent_again_and_a_new_message_that_it_is_newer(
    server: Any, make_config: Any
) -> None:
    session = await Session.open(make_config(max_retries=0))
    server.enqueue(Fault.status(500, "Internal trouble"))
    await run(session, ops.UserTurn(text="try me"))
    server.enqueue(Fault.status(500, "Internal trouble"))
    again = await run(session, ops.RetryTurn())
    withdrawn = [e for e in of_type(again, "retry_available") if e.turn_id is None]
    assert [e.reason for e in withdrawn] == ["The message is being sent again."]
    server.enqueue(Reply(text="fine"))
    newer = await run(session, ops.UserTurn(text="something else"))
    withdrawn = [e for e in of_type(newer, "retry_available") if e.turn_id is None]
    assert [e.reason for e in withdrawn] == ["A newer turn started."]
    await session.close()


async def test_a_full_disk_while_an_interruption_is_saved_is_said_for_the_turn(
    server: Any, make_config: Any, monkeypatch: Any
) -> None:
    disk = DiskFull(monkeypatch)
    server.enqueue(Reply(text="word " * 400, chunk_size=5, delay_per_chunk=0.02))
    session = await Session.open(make_config())
    await session.submit(ops.UserTurn(text="a long story"))
    (delta,) = (await collect(session, "agent_message_delta"))[-1:]
    disk.on = True
    await session.submit(ops.Interrupt())
    events = await collect(session, "turn_complete")
    disk.on = False
    storage = [e for e in of_type(events, "error") if e.kind == "storage"]
    assert [e.turn_id for e in storage] == [delta.turn_id]
    assert "the disk is full" in storage[0].message
    assert not of_type(events, "message_not_sent")  # the message itself was saved before
    await session.close()


async def test_an_edit_whose_request_fails_can_be_retried(server: Any, make_config: Any) -> None:
    server.enqueue(Reply(text="first"))
    session = await Session.open(make_config(max_retries=0))
    first = await run(session, ops.UserTurn(text="hello"))
    server.enqueue(Fault.status(500, "Internal trouble"))
    edited = await run(session, ops.EditTurn(turn_id=first[-1].turn_id, text="hello again"))
    assert edited[-1].status == "failed"
    assert of_type(edited, "retry_available")[-1].turn_id == edited[-1].turn_id
    await session.close()


async def _cut_off(session: Session, server: Any) -> None:
    server.enqueue(Fault.cut(after_chunks=3, text="Line one.\nLine two.\nand then"))
    server.enqueue(Fault.status(503))
    events = await run(session, ops.UserTurn(text="explain it"))
    assert events[-1].status == "failed"


async def test_a_retry_that_fails_again_keeps_the_cut_off_reply(
    server: Any, make_config: Any
) -> None:
    session = await Session.open(make_config(max_retries=1))
    await _cut_off(session, server)
    server.enqueue(Fault.status(503))
    server.enqueue(Fault.status(503))
    again = await run(session, ops.RetryTurn())
    assert again[-1].status == "failed" and not of_type(again, "reply_replaced")
    assert [e for e in session.transcript() if e["kind"] == "reply_cut_off"]
    await session.close()


async def test_a_new_message_after_a_cut_off_reply_leaves_it_in_place(
    server: Any, make_config: Any
) -> None:
    session = await Session.open(make_config(max_retries=1))
    await _cut_off(session, server)
    server.enqueue(Reply(text="another answer"))
    newer = await run(session, ops.UserTurn(text="something else"))
    assert newer[-1].status == "completed" and not of_type(newer, "reply_replaced")
    assert [e for e in session.transcript() if e["kind"] == "reply_cut_off"]
    await session.close()


async def test_a_longer_environment_block_leaves_less_room(
    server: Any, make_config: Any, tmp_path: Path
) -> None:
    # The same tools, a workspace path 200 characters longer: the block, and only it, grows.
    rooms = []
    for name in ("ws", "w" * 200):
        folder = workspace(tmp_path, name)
        session = await Session.open(make_config(context_window=4_096, workspace=folder))
        _, refused = await _refused(session, "word " * 20_000)
        rooms.append(_figures(refused.reason)[1])
        await session.close()
    assert rooms[1] < rooms[0]


async def test_a_retry_stopped_midway_keeps_the_cut_off_reply(
    server: Any, make_config: Any
) -> None:
    session = await Session.open(make_config(max_retries=1))
    await _cut_off(session, server)
    server.enqueue(Reply(text="word " * 400, chunk_size=5, delay_per_chunk=0.02))
    await session.submit(ops.RetryTurn())
    await collect(session, "agent_message_delta")
    await session.submit(ops.Interrupt())
    stopped = await collect(session, "turn_complete")
    assert stopped[-1].status == "aborted" and not of_type(stopped, "reply_replaced")
    assert [e for e in session.transcript() if e["kind"] == "reply_cut_off"]
    await session.close()
