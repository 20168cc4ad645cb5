"""Attachments end to end: a message with files and images sent in each API's shape, counted,
refused in words when it cannot be sent, stored once by hash, and named after a compaction."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

from app.core import Session, ops
from app.core.attachments.images import image_tokens
from app.demo import Reply
from tests.attachment_files import pdf_bytes, write_png
from tests.conftest import of_type, run


def _user_parts(body: dict[str, Any]) -> list[dict[str, Any]]:
    users = [i for i in body["input"] if i.get("role") == "user"]
    return list(users[-1]["content"])


async def test_responses_request_sends_a_file_block_and_an_input_image(
    server, make_config, tmp_path
):
    notes = tmp_path / "notes.md"
    notes.write_text("# Plan\nship the parser on Friday\n")
    shot = write_png(tmp_path / "shot.png", 3840, 2160)
    server.enqueue(Reply(text="Seen."))
    session = await Session.open(make_config())
    events = await run(session, ops.UserTurn(text="look", attachments=[str(notes), str(shot)]))
    assert events[-1].status == "completed"

    parts = _user_parts(server.requests_to("responses")[0].body)
    assert parts[0] == {"type": "input_text", "text": "look"}
    assert parts[1]["type"] == "input_text"
    assert parts[1]["text"].startswith('<file name="notes.md">\n# Plan')
    assert "ship the parser on Friday" in parts[1]["text"]
    image = parts[2]
    assert image["type"] == "input_image" and image["detail"] == "high"
    header, data = image["image_url"].split(",", 1)
    assert header == "data:image/png;base64"
    from PIL import Image

    sent = Image.open(io.BytesIO(base64.b64decode(data)))
    assert sent.size == (1365, 768)  # scaled as OpenAI scales for high detail
    shown = of_type(events, "item_completed")[0].item.data
    assert shown["text"] == "look"
    assert [a["name"] for a in shown["attachments"]] == ["notes.md", "shot.png"]
    assert shown["attachments"][1]["width"] == 3840 and not shown["attachments"][1]["missing"]
    await session.close()


async def test_chat_completions_request_sends_image_url_parts(server, make_config, tmp_path):
    shot = write_png(tmp_path / "a.png", 640, 480)
    server.enqueue(Reply(text="Seen."))
    session = await Session.open(make_config(wire_api="chat"))
    await run(session, ops.UserTurn(text="what is this", attachments=[str(shot)]))
    body = server.requests_to("chat")[0].body
    user = [m for m in body["messages"] if m["role"] == "user"][-1]
    assert user["content"][0] == {"type": "text", "text": "what is this"}
    image = user["content"][1]
    assert image["type"] == "image_url"
    assert image["image_url"]["url"].startswith("data:image/png;base64,")
    await session.close()


async def test_a_model_without_vision_is_refused_before_sending(server, make_config, tmp_path):
    shot = write_png(tmp_path / "a.png", 64, 64)
    session = await Session.open(make_config(accepts_images=False))
    events = await run(session, ops.UserTurn(text="see", attachments=[str(shot)]))
    refused = of_type(events, "message_not_sent")[0]
    assert "cannot see images" in refused.reason and "a.png" in refused.reason
    assert refused.attachments == [str(shot)] and refused.text == "see"
    assert events[-1].status == "failed"
    assert server.requests_to("responses") == []
    assert session.history() == []
    await session.close()


async def test_image_tokens_are_counted_and_an_oversize_message_refused(
    server, make_config, tmp_path
):
    shots = [write_png(tmp_path / f"s{n}.png", 3840, 2160) for n in range(4)]
    session = await Session.open(make_config(context_window=4000))
    events = await run(session, ops.UserTurn(text="x", attachments=[str(s) for s in shots]))
    refused = of_type(events, "message_not_sent")[0]
    # four 4K screenshots: 4 x 1,105 tokens, more than a 4,000-token window leaves
    assert image_tokens(3840, 2160) == 1105
    assert "was not sent" in refused.reason and "4,4" in refused.reason
    assert server.requests_to("responses") == []
    await session.close()

    server.enqueue(Reply(text="ok"))
    session = await Session.open(make_config(context_window=100_000))
    await run(session, ops.UserTurn(text="x", attachments=[str(shots[0])]))
    user = [e for e in session.context_view() if e.role == "user"][-1]
    assert user.tokens >= 1105  # the image's cost is in the gauge's count of the message
    assert "sent as an image, PNG 1365x768 (from 3840x2160)" in user.attachments[0]
    await session.close()


async def test_bad_inputs_are_refused_in_words_and_nothing_is_sent(
    server, make_config, tmp_path
):
    binary = tmp_path / "data.txt"
    binary.write_bytes(bytes(range(256)) * 4)
    corrupt = tmp_path / "broken.png"
    corrupt.write_bytes(b"\x89PNG\r\n\x1a\n" + b"junk" * 50)
    encrypted = tmp_path / "secret.pdf"
    encrypted.write_bytes(pdf_bytes([["hidden"]], password="pw"))
    bad_pdf = tmp_path / "bad.pdf"
    bad_pdf.write_bytes(b"%PDF-1.7\nnot really")
    folder = tmp_path / "folder"
    folder.mkdir()
    huge = tmp_path / "huge.log"
    with huge.open("wb") as handle:  # a 2 GB file, sparse: nothing is written
        handle.truncate(2 * 2**30)
    cases = {
        binary: "not a text file", corrupt: "could not be read as an image",
        encrypted: "password-protected", bad_pdf: "could not be read as a PDF",
        folder: "is a folder", huge: "too large to attach (2.0 GB)",
        tmp_path / "gone.txt": "no longer exists",
    }
    session = await Session.open(make_config())
    for path, words in cases.items():
        events = await run(session, ops.UserTurn(text="see", attachments=[str(path)]))
        refused = of_type(events, "message_not_sent")
        assert refused and words in refused[0].reason, (path, refused)
        assert of_type(events, "error")[0].kind == "attachment"
    assert server.requests_to("responses") == []
    assert session.history() == []
    server.enqueue(Reply(text="still here"))
    events = await run(session, ops.UserTurn(text="plain"))
    assert events[-1].status == "completed"
    await session.close()


async def test_stored_once_by_hash_and_missing_files_shown_missing_on_resume(
    server, make_config, tmp_path
):
    shot = write_png(tmp_path / "a.png", 800, 600)
    copy = tmp_path / "b.png"
    copy.write_bytes(shot.read_bytes())
    server.enqueue(Reply(text="one"))
    server.enqueue(Reply(text="two"))
    config = make_config()
    session = await Session.open(config)
    await run(session, ops.UserTurn(text="first", attachments=[str(shot)]))
    await run(session, ops.UserTurn(text="again", attachments=[str(copy)]))
    rollout = session.rollout_path
    await session.close()

    folder = rollout.with_name(rollout.stem + ".files")
    stored = sorted(p.name for p in folder.iterdir())
    assert len(stored) == 1 and stored[0].endswith(".png")  # the same bytes, stored once
    assert "base64" not in rollout.read_text()  # the rollout names it, never holds it
    (folder / stored[0]).unlink()

    server.enqueue(Reply(text="three"))
    reopened = await Session.open(config, session.id)
    shown = [
        e.item.data["attachments"]
        for e in reopened.replay_events()
        if e.type == "item_completed" and e.item.data.get("attachments")
    ]
    assert len(shown) == 2 and all(a[0]["missing"] for a in shown)
    events = await run(reopened, ops.UserTurn(text="go on"))
    assert events[-1].status == "completed"
    texts = [
        part.get("text", "")
        for item in server.requests_to("responses")[-1].body["input"]
        for part in (item.get("content") or [])
        if isinstance(part, dict)
    ]
    assert any("a.png" in t and "missing" in t for t in texts)
    await reopened.close()


async def test_compaction_names_attachments_and_recall_finds_a_files_text(
    server, make_config, tmp_path
):
    report = tmp_path / "report.pdf"
    report.write_bytes(pdf_bytes([["Quarterly figures"], ["zebracorn revenue rose"]]))
    shot = write_png(tmp_path / "chart.png", 1024, 512)
    server.enqueue(Reply(text="Read it."))
    server.enqueue(Reply(text="SUMMARY: a report and a chart were discussed."))
    session = await Session.open(make_config())
    await run(session, ops.UserTurn(text="read", attachments=[str(report), str(shot)]))
    await run(session, ops.Compact(), timeout=10)

    summary_request = server.requests_to("responses")[-1].body
    sent = str(summary_request["input"])
    assert "zebracorn" not in sent and "base64" not in sent
    assert "report.pdf, PDF, 2 pages" in sent and "chart.png, PNG image 1024x512" in sent
    history = str(session.history())
    assert "report.pdf, PDF, 2 pages" in history and "chart.png, PNG image 1024x512" in history
    assert "zebracorn" not in history

    await session.submit(ops.FindInConversation(query="zebracorn"))
    from tests.conftest import collect

    found = (await collect(session, "conversation_matches"))[-1]
    assert found.matches and "zebracorn" in found.matches[0].excerpt
    assert found.matches[0].role == "user"
    await session.close()


def test_rollout_stays_small_with_twenty_screenshots(tmp_path: Path) -> None:
    from app.core.attachments.session_files import SessionAttachments

    files = SessionAttachments(tmp_path / "s.files", len)
    import asyncio

    paths = [str(write_png(tmp_path / f"{n}.png", 1920, 1080)) for n in range(20)]
    parts = asyncio.run(files.read(paths))
    assert all(len(str(part)) < 1000 for part in parts)  # a part names its file, no bytes
