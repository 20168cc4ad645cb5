"""Attachments on the conversation tree: an edited message keeps its files and images (the new
branch sends the new text with them, in each API's shape), and a fork keeps its own copies."""

from __future__ import annotations

from typing import Any

import pytest

from app.core import Session, ops
from app.demo import Reply
from tests.attachment_files import write_png
from tests.conftest import of_type, run


def _last_user(server: Any, wire: str) -> list[dict[str, Any]]:
    body = server.requests_to(wire)[-1].body
    items = body["input"] if wire == "responses" else body["messages"]
    return list([i for i in items if i.get("role") == "user"][-1]["content"])


@pytest.mark.parametrize("wire", ["responses", "chat"])
async def test_an_edited_message_is_sent_with_the_originals_attachments(
    server, make_config, tmp_path, wire
):
    notes = tmp_path / "notes.md"
    notes.write_text("the deadline is Friday\n")
    shot = write_png(tmp_path / "shot.png", 800, 600)
    config = make_config(wire_api=wire)
    session = await Session.open(config)
    server.enqueue(Reply(text="Seen."), endpoint=wire)
    first = await run(session, ops.UserTurn(text="summarise", attachments=[str(notes), str(shot)]))
    turn_id = of_type(first, "turn_started")[0].turn_id

    server.enqueue(Reply(text="Again."), endpoint=wire)
    events = await run(session, ops.EditTurn(turn_id=turn_id, text="summarise briefly"))
    assert events[-1].status == "completed"

    content = _last_user(server, wire)
    text_type, image_type = ("input_text", "input_image") if wire == "responses" else (
        "text", "image_url"
    )
    assert content[0] == {"type": text_type, "text": "summarise briefly"}
    assert content[1]["type"] == text_type and "the deadline is Friday" in content[1]["text"]
    assert content[2]["type"] == image_type
    assert len(server.requests_to(wire)) == 2

    # The window draws the edited message with its attachments (live replay and resume).
    shown = [
        e.item.data for e in session.replay_events()
        if e.type == "item_completed" and e.item.kind == "user_message"
    ]
    assert shown[-1]["text"] == "summarise briefly"
    assert [a["name"] for a in shown[-1]["attachments"]] == ["notes.md", "shot.png"]
    assert not any(a["missing"] for a in shown[-1]["attachments"])
    await session.close()

    reopened = await Session.open(config, session.id)
    again = [
        e.item.data for e in reopened.replay_events()
        if e.type == "item_completed" and e.item.kind == "user_message"
    ]
    assert [a["name"] for a in again[-1]["attachments"]] == ["notes.md", "shot.png"]
    await reopened.close()


async def test_a_fork_keeps_the_attachments_of_its_messages(server, make_config, tmp_path):
    from tests.conftest import collect

    shot = write_png(tmp_path / "shot.png", 640, 480)
    config = make_config()
    session = await Session.open(config)
    server.enqueue(Reply(text="Seen."))
    first = await run(session, ops.UserTurn(text="look", attachments=[str(shot)]))
    turn_id = of_type(first, "turn_started")[0].turn_id
    await session.submit(ops.ForkSession(turn_id=turn_id))
    forked = of_type(await collect(session, "session_forked"), "session_forked")[0]
    await session.close()
    (tmp_path / "shot.png").unlink()  # the fork needs its own stored copy, not the original

    fork = await Session.open(config, session_id=forked.session_id)
    shown = [
        e.item.data["attachments"] for e in fork.replay_events()
        if e.type == "item_completed" and e.item.data.get("attachments")
    ]
    assert [a["name"] for a in shown[0]] == ["shot.png"] and not shown[0][0]["missing"]
    server.enqueue(Reply(text="Still there."))
    await run(fork, ops.UserTurn(text="again"))
    sent = server.requests_to("responses")[-1].body["input"]
    assert any(
        part.get("type") == "input_image"
        for item in sent for part in item.get("content") or [] if isinstance(part, dict)
    )
    await fork.close()


async def test_an_edit_can_leave_out_some_of_the_originals_attachments(
    server, make_config, tmp_path
):
    notes = tmp_path / "notes.md"
    notes.write_text("the deadline is Friday\n")
    shot = write_png(tmp_path / "shot.png", 800, 600)
    session = await Session.open(make_config())
    server.enqueue(Reply(text="Seen."))
    first = await run(session, ops.UserTurn(text="summarise", attachments=[str(notes), str(shot)]))
    turn_id = of_type(first, "turn_started")[0].turn_id
    shown = next(
        e.item.data["attachments"] for e in first
        if e.type == "item_completed" and e.item.kind == "user_message"
    )
    image = next(a["file"] for a in shown if a["kind"] == "image")

    server.enqueue(Reply(text="Only the picture."))
    events = await run(session, ops.EditTurn(
        turn_id=turn_id, text="just the picture", keep_attachments=[image]
    ))
    assert events[-1].status == "completed"
    content = _last_user(server, "responses")
    assert [part["type"] for part in content] == ["input_text", "input_image"]
    assert not any("deadline" in str(part.get("text", "")) for part in content)
    again = [
        e.item.data for e in session.replay_events()
        if e.type == "item_completed" and e.item.kind == "user_message"
    ]
    assert [a["name"] for a in again[-1]["attachments"]] == ["shot.png"]
    await session.close()
