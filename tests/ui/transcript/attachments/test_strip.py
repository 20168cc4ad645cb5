"""A sent message's attachments in the real window against the scripted server: a thumbnail
per image (decoded off the window's thread, kept), a chip per file (name, size), a click that
opens the image at full size or the file's text, and "missing" for a stored file that is gone,
live and on resume alike."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from PySide6.QtCore import QMimeData, Qt, QUrl

from app.demo import Reply
from app.ui.transcript.attachments import thumbnails
from app.ui.transcript.attachments.sizes import fit
from tests.attachment_files import write_png

from ...helpers import type_and_send, wait_idle


def _send_with_files(qtbot: Any, window: Any, server: Any, paths: list[Path]) -> None:
    data = QMimeData()
    data.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    window.composer.edit.insertFromMimeData(data)
    chips = window.composer.attachments
    qtbot.waitUntil(lambda: all(c.ready for c in chips.chips) and bool(chips.chips), timeout=5000)
    server.enqueue(Reply(text="Seen."))
    type_and_send(qtbot, window, "look at these")
    wait_idle(qtbot, window)


def _strip(qtbot: Any, window: Any) -> Any:
    row = window.transcript.message_rows("user")[-1]
    window.transcript.scroll_to_row(row)
    qtbot.waitUntil(lambda: row._widget is not None and row.widget.attachments is not None)
    return row.widget.attachments


def test_sent_images_show_as_thumbnails_and_files_as_chips_that_open(
    qtbot: Any, make_window: Any, server: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    threads: list[str] = []
    decode = thumbnails.decode

    def recorded(path: str, width: int, height: int) -> Any:
        threads.append(threading.current_thread().name)
        return decode(path, width, height)

    monkeypatch.setattr(thumbnails, "decode", recorded)
    notes = tmp_path / "notes.md"
    notes.write_text("alpha\nbeta\n")
    shot = write_png(tmp_path / "shot.png", 1600, 900)
    window = make_window()
    _send_with_files(qtbot, window, server, [notes, shot])

    strip = _strip(qtbot, window)
    assert [c.text() for c in strip.chips] == ["notes.md · 11 B"]
    thumb = strip.thumbnails[0]
    assert (thumb.width(), thumb.height()) == (171, 96)  # 16:9 in the thumbnail's box
    qtbot.waitUntil(lambda: thumb.loaded, timeout=5000)
    assert not thumb.icon().isNull()
    assert threads and all(name != threading.main_thread().name for name in threads)

    qtbot.mouseClick(thumb, Qt.MouseButton.LeftButton)
    viewer = strip.viewer
    assert viewer is not None and viewer.windowTitle() == "shot.png"
    qtbot.waitUntil(lambda: viewer.loaded, timeout=5000)
    # At full size, scaled down only to fit the screen (offscreen's is 800 pixels wide).
    assert viewer.picture.pixmap().size().toTuple() == fit(1600, 900, *viewer.box)
    assert viewer.picture.pixmap().width() > thumb.width()
    viewer.close()

    qtbot.mouseClick(strip.chips[0], Qt.MouseButton.LeftButton)
    text_viewer = strip.viewer
    assert text_viewer.view.toPlainText() == "alpha\nbeta\n"
    text_viewer.close()

    # A thumbnail decoded once is kept: another widget for the row decodes nothing again.
    decoded = len(threads)
    assert window.transcript.images.image(thumb.source, 240, 96) is not None
    assert len(threads) == decoded


def test_on_resume_the_same_attachments_show_and_a_gone_file_says_missing(
    qtbot: Any, make_window: Any, server: Any, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("gamma\n")
    shot = write_png(tmp_path / "shot.png", 300, 300)
    window = make_window(root=tmp_path / "one")
    _send_with_files(qtbot, window, server, [notes, shot])
    session_id = window.session.id
    folder = window.session.rollout_path.with_name(window.session.id + ".files")
    window.close()
    for stored in folder.glob("*.txt"):
        stored.unlink()  # the text file's stored copy is gone; the image's stays

    reopened = make_window(root=tmp_path / "one", session_id=session_id)
    strip = _strip(qtbot, reopened)
    assert [c.text() for c in strip.chips] == ["notes.md · missing"]
    assert strip.chips[0].missing
    thumb = strip.thumbnails[0]
    assert (thumb.width(), thumb.height()) == (96, 96)
    qtbot.waitUntil(lambda: thumb.loaded, timeout=5000)
    assert strip.open(strip.chips[0].shown) is None  # nothing to open
