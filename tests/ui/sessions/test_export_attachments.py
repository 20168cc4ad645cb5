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
