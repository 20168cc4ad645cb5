"""Pins end to end (issue 23, item 3): a pinned message stays verbatim in the model's view
through every compaction, just before the summary; pins are recorded, survive a restart, stay
consistent through Undo, and a pin that cannot fit is refused with its size and the room left.
Every test drives the public API against the scripted server and reads the requests it got."""

from __future__ import annotations

import json
import re

import pytest

from app.core import Session, ops
from app.core.compaction.budget import compaction_budget
from app.core.compaction.pins import pin_budget
from app.core.compaction.prompts import summary_prefix
from app.demo import CompactReply, Fault, Reply, ToolCall
from tests.conftest import collect, input_texts, of_type, run

PREFIX = summary_prefix()
WINDOW = 4_096


def words(n: int, word: str = "alpha") -> str:
    return " ".join(f"{word}{i % 97}" for i in range(n))


async def chat(session: Session, server, text: str, answer: str) -> list:
    server.enqueue(Reply(text=answer))
    return await run(session, ops.UserTurn(text=text))


async def compact(session: Session, server, summary: str) -> list:
    server.enqueue(Reply(text=summary))
    return await run(session, ops.Compact())


async def pin(session: Session, op: ops.PinItem) -> list:
    await session.submit(op)
    events = await collect(session, "item_pinned")
    return events


def reply_id(events: list) -> str:
    return next(e.item.id for e in of_type(events, "item_completed") if e.item.kind == "agent_message")


def last_request(server) -> list[tuple[str, str]]:
    return input_texts(server.requests_to("responses")[-1].body)


async def test_a_pinned_reply_stays_verbatim_before_the_summary_through_compactions(
    server, make_config
):
    session = await Session.open(make_config())
    events = await chat(session, server, "which port?", "Use port 8443 for the admin API.")
    pinned = await pin(
        session,
        ops.PinItem(kind="agent_message", row_id=reply_id(events),
                    text="Use port 8443 for the admin API."),
    )
    event = of_type(pinned, "item_pinned")[0]
    assert event.pinned and event.in_view and event.key
    for n in (1, 2, 3):
        compacted = of_type(await compact(session, server, f"SUMMARY-{n}"), "context_compacted")
        assert compacted[0].carried_pins == [event.key]
        await chat(session, server, f"question {n}", f"answer {n}")
        sent = last_request(server)
        summary = sent.index(("user", f"{PREFIX}\nSUMMARY-{n}"))
        # Verbatim, right before the summary; the model's own reply is never summarised away.
        assert sent[summary - 1] == ("assistant", "Use port 8443 for the admin API.")
        assert sent.count(("assistant", "Use port 8443 for the admin API.")) == 1
    view = session.context_view()
    assert [e.text for e in view if e.pinned] == ["Use port 8443 for the admin API."]
    await session.close()


async def test_a_pinned_tool_output_is_carried_with_its_call(server, make_config, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "config.txt").write_text("db_host = 10.0.0.7\n")
    server.enqueue(Reply(function_calls=[ToolCall("read_file", {"path": "config.txt"}, "call_7")]))
    server.enqueue(Reply(text="Read it."))
    session = await Session.open(make_config(workspace=ws))
    await run(session, ops.UserTurn(text="read config.txt"))
    await pin(session, ops.PinItem(kind="function_call_output", row_id="call_7"))
    await compact(session, server, "SUMMARY")
    await chat(session, server, "next", "ok")
    body = server.requests_to("responses")[-1].body
    kinds = [item.get("type", "message") for item in body["input"]]
    summary_at = input_texts(body).index(("user", f"{PREFIX}\nSUMMARY"))
    assert kinds[summary_at - 2 : summary_at] == ["function_call", "function_call_output"]
    assert "db_host = 10.0.0.7" in body["input"][summary_at - 1]["output"]
    assert body["input"][summary_at - 2]["call_id"] == "call_7"
    await session.close()


async def test_a_pinned_early_message_survives_where_kept_messages_do_not(server, make_config):
    """On a 4k window the kept messages hold only the newest; the pinned first one is there
    after every compaction, and each compaction still leaves at most half the limit."""
    session = await Session.open(make_config(context_window=WINDOW, auto_compact=False))
    fact = "My service account is svc-coco-42 and the budget is 1,250 EUR."
    await chat(session, server, fact, "noted")
    await pin(session, ops.PinItem(kind="user_message", row_id="x", text=fact))
    for n in range(3):
        for i in range(3):
            await chat(session, server, words(400, f"r{n}m{i}x"), "ok")
        marker = of_type(await compact(session, server, f"S{n}"), "context_compacted")[0]
        assert marker.target is not None and marker.tokens_after <= marker.target
        view = [e.text for e in session.context_view()]
        assert view.index(fact) == view.index(f"{PREFIX}\nS{n}") - 1
    await session.close()


async def test_pins_survive_restart_and_resume(server, make_config):
    config = make_config()
    session = await Session.open(config)
    await chat(session, server, "remember: deploy on Fridays is forbidden", "understood")
    key = of_type(
        await pin(session, ops.PinItem(kind="user_message",
                                       text="remember: deploy on Fridays is forbidden")),
        "item_pinned",
    )[0].key
    await compact(session, server, "S1")
    await session.close()

    reopened = await Session.open(config, session.id)
    # The reopened window draws the row pinned, and the model view marks it.
    replayed = [
        e for e in reopened.replay_events()
        if e.type == "item_completed" and e.item.kind == "user_message"
    ]
    assert replayed[0].item.data.get("pinned") == key
    assert any(e.pinned for e in reopened.context_view())
    # The next compaction after the restart still carries it.
    await chat(reopened, server, "more", "ok")
    await compact(reopened, server, "S2")
    await chat(reopened, server, "last", "ok")
    sent = last_request(server)
    assert sent[sent.index(("user", f"{PREFIX}\nS2")) - 1] == (
        "user", "remember: deploy on Fridays is forbidden"
    )
    # Unpinned (by its key), recorded: after another restart it is no longer pinned.
    unpinned = of_type(await pin(reopened, ops.PinItem(pinned=False, key=key)), "item_pinned")
    assert not unpinned[0].pinned
    await reopened.close()
    again = await Session.open(config, session.id)
    assert not any(e.pinned for e in again.context_view())
    await again.close()


async def test_undo_of_a_compaction_keeps_pins_consistent(server, make_config):
    session = await Session.open(make_config(context_window=WINDOW, auto_compact=False))
    await chat(session, server, "the path is /srv/coco/data", "ok")
    await pin(session, ops.PinItem(kind="user_message", text="the path is /srv/coco/data"))
    for i in range(3):
        await chat(session, server, words(400, f"u{i}x"), "ok")
    before = session.history()
    await compact(session, server, "S1")
    await session.submit(ops.UndoCompaction())
    await collect(session, "compaction_undone")
    # The history is exactly what it was; the pin is still held and marked in the view.
    assert session.history() == before
    assert [e.text for e in session.context_view() if e.pinned] == ["the path is /srv/coco/data"]
    await compact(session, server, "S2")
    view = [e.text for e in session.context_view()]
    assert view.index("the path is /srv/coco/data") == view.index(f"{PREFIX}\nS2") - 1
    await session.close()


async def test_a_pin_that_cannot_fit_is_refused_with_its_size_and_the_room_left(
    server, make_config
):
    session = await Session.open(make_config(context_window=WINDOW, auto_compact=False))
    big = words(1200, "big")
    await chat(session, server, big, "ok")
    await session.submit(ops.PinItem(kind="user_message", text=big))
    error = of_type(await collect(session, "error"), "error")[0]
    assert error.kind == "invalid_op"
    match = re.search(r"about ([\d,]+) tokens, and only ([\d,]+) tokens of room", error.message)
    assert match, error.message
    size, left = (int(g.replace(",", "")) for g in match.groups())
    limit = pin_budget(compaction_budget(WINDOW, int(WINDOW * 0.9), 0))
    assert limit is not None and size > left and left <= limit
    assert "4,096-token window" in error.message
    # Nothing was recorded or marked.
    assert not any(e.pinned for e in session.context_view())
    await session.close()
    records = [json.loads(line) for line in session.rollout_path.read_text().splitlines()]
    assert not [r for r in records if r["type"] == "pin"]


async def test_pinning_something_that_is_not_there_is_refused_in_words(server, make_config):
    session = await Session.open(make_config())
    await chat(session, server, "hello", "hi")
    await session.submit(ops.PinItem(kind="user_message", text="never said"))
    error = of_type(await collect(session, "error"), "error")[0]
    assert "cannot find it" in error.message
    await session.submit(ops.PinItem(pinned=False, key="pin-99"))
    error = of_type(await collect(session, "error"), "error")[0]
    assert error.message == "This message is not pinned."
    await session.close()


@pytest.mark.parametrize("form", ["trigger", "standalone"])
async def test_remote_compactions_put_pins_back_before_the_compaction_item(
    server, make_config, tmp_path, form
):
    ws = tmp_path / "ws"
    ws.mkdir()
    session = await Session.open(make_config(workspace=ws, remote_compaction=True))
    events = await chat(session, server, "U1", "A1")
    await pin(session, ops.PinItem(kind="agent_message", row_id=reply_id(events), text="A1"))
    await chat(session, server, "U2", "A2")
    if form == "trigger":
        server.enqueue(Reply(compaction="ENC"))
    else:
        server.enqueue(Fault.status(404, "not here"))
        server.enqueue(CompactReply(encrypted_content="ENC"), endpoint="compact")
    compacted = of_type(await run(session, ops.Compact()), "context_compacted")[0]
    assert compacted.remote_form == form and compacted.carried_pins
    await chat(session, server, "U3", "A3")
    body = server.requests_to("responses")[-1].body
    kinds = [item.get("type", "message") for item in body["input"]]
    at = kinds.index("compaction")
    assert input_texts(body)[at - 1] == ("assistant", "A1")
    assert input_texts(body)[at + 1 :] == [("user", "U3")]
    await session.close()


async def test_compaction_by_the_server_inside_a_turn_keeps_the_pins(server, make_config):
    session = await Session.open(
        make_config(context_window=4_096, remote_compaction=True, server_side_compaction=True)
    )
    events = await chat(session, server, "U1", "A1")
    await pin(session, ops.PinItem(kind="agent_message", row_id=reply_id(events), text="A1"))
    server.enqueue(Reply(compaction="ENC-IN-TURN", text="A2"))
    await run(session, ops.UserTurn(text="U2"))
    await chat(session, server, "U3", "A3")
    body = server.requests_to("responses")[-1].body
    assert [item.get("type", "message") for item in body["input"]][:2] == [
        "message", "compaction"
    ]
    assert input_texts(body)[0] == ("assistant", "A1")
    await session.close()


@pytest.mark.parametrize("wire", ["responses", "chat"])
async def test_a_pinned_message_with_attachments_is_sent_once_after_a_compaction(
    server, make_config, tmp_path, wire
):
    """The compaction keeps recent user messages with their attachments as the texts naming
    them; the pinned original (its image still sent) is then the only copy, live and resumed."""
    from tests.attachment_files import write_png

    shot = write_png(tmp_path / "shot.png", 640, 480)
    config = make_config(wire_api=wire)
    session = await Session.open(config)
    server.enqueue(Reply(text="Seen."), endpoint=wire)
    events = await run(session, ops.UserTurn(text="look at this", attachments=[str(shot)]))
    row = next(e.item.id for e in of_type(events, "item_completed") if e.item.kind == "user_message")
    await pin(session, ops.PinItem(kind="user_message", row_id=row, text="look at this"))
    server.enqueue(Reply(text="SUMMARY"), endpoint=wire)
    compacted = of_type(await run(session, ops.Compact()), "context_compacted")
    assert len(compacted[0].carried_pins) == 1
    server.enqueue(Reply(text="ok"), endpoint=wire)
    await run(session, ops.UserTurn(text="next"))

    body = server.requests_to(wire)[-1].body
    users = [
        i for i in (body["input"] if wire == "responses" else body["messages"])
        if i.get("role") == "user"
    ]
    mentions = [u for u in users if "look at this" in json.dumps(u.get("content"))]
    assert len(mentions) == 1
    assert any(p.get("type") in ("input_image", "image_url") for p in mentions[0]["content"])
    views = [e.text for e in session.context_view() if "look at this" in e.text]
    assert views == ["look at this"]
    await session.close()

    reopened = await Session.open(config, session.id)
    assert [e.text for e in reopened.context_view() if "look at this" in e.text] == [
        "look at this"
    ]
    await reopened.close()
