"""Export with attachments: the files copied beside the export, the Markdown linking them (an
image shown), a missing file said missing."""

from __future__ import annotations

from pathlib import Path

from app.core import Session, ops
from app.demo import Reply
from app.ui.sessions.export import attachments_folder, copy_attachments, transcript_to_markdown
from tests.attachment_files import write_png
from tests.conftest import run


async def test_export_copies_and_links_the_attachments(server, make_config, tmp_path: Path):
    shot = write_png(tmp_path / "chart.png", 200, 100)
    notes = tmp_path / "notes.txt"
    notes.write_text("one\ntwo\n")
    server.enqueue(Reply(text="seen"))
    session = await Session.open(make_config())
    await run(session, ops.UserTurn(text="here", attachments=[str(shot), str(notes)]))
    target = tmp_path / "out" / "export.md"
    target.parent.mkdir()
    folder = attachments_folder(target)
    text = transcript_to_markdown(session.replay_events(), files=folder.name)
    assert copy_attachments(session.replay_events(), folder) == 2
    copied = sorted(p.name for p in folder.iterdir())
    image = next(name for name in copied if name.endswith(".png"))
    assert f"![chart.png](<export.files/{image}>)" in text
    assert "- 📎 [notes.txt, text file, 3 lines, 8 bytes](<export.files/" in text
    assert (folder / image).read_bytes() == shot.read_bytes()

    for stored in session.rollout_path.with_name(session.id + ".files").iterdir():
        stored.unlink()
    missing = transcript_to_markdown(session.replay_events(), files=folder.name)
    assert "chart.png, PNG image 200x100, " in missing and "_(file missing)_" in missing
    await session.close()


def test_the_json_export_copies_the_files_and_says_where_each_copy_is(
    qtbot, make_window, server, tmp_path: Path
) -> None:
    import json

    from tests.ui.transcript.attachments.test_strip import _send_with_files

    shot = write_png(tmp_path / "chart.png", 200, 100)
    notes = tmp_path / "notes.txt"
    notes.write_text("one\ntwo\n")
    window = make_window()
    _send_with_files(qtbot, window, server, [shot, notes])
    target = tmp_path / "out" / "session.json"
    target.parent.mkdir()
    window.choose_export_path = lambda kind: (target, "json")
    window.export_json_action.trigger()

    document = json.loads(target.read_text(encoding="utf-8"))
    assert document["files"] == "session.files"
    parts = [
        part for entry in document["transcript"]
        for part in (entry.get("item") or {}).get("content") or []
        if isinstance(part, dict) and part.get("type") == "coco_attachment"
    ]
    assert [part["name"] for part in parts] == ["chart.png", "notes.txt"]
    copies = [target.parent / part["export_path"] for part in parts]
    assert copies[0].read_bytes() == shot.read_bytes()
    assert copies[1].read_text() == "one\ntwo\n"

    # A stored file gone before the export: said missing in the JSON, nothing copied for it.
    for stored in window.session.rollout_path.with_name(window.session.id + ".files").iterdir():
        if stored.suffix == ".txt":
            stored.unlink()
    again = tmp_path / "out" / "again.json"
    window.choose_export_path = lambda kind: (again, "json")
    window.export_json_action.trigger()
    parts = [
        part for entry in json.loads(again.read_text(encoding="utf-8"))["transcript"]
        for part in (entry.get("item") or {}).get("content") or []
        if isinstance(part, dict) and part.get("type") == "coco_attachment"
    ]
    assert parts[1]["missing"] is True and "export_path" not in parts[1]
    assert (target.parent / parts[0]["export_path"]).is_file()
