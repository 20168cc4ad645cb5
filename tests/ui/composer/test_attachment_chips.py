"""Attaching in the real window against the scripted server: chips with their cost, paste of
files and of an image, a drop on the window, a file that cannot be sent, remove, send."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QMimeData, Qt, QUrl
from PySide6.QtGui import QImage

from app.demo import Reply
from tests.attachment_files import write_png

from ..helpers import wait_idle


def _chips_ready(window: Any) -> bool:
    chips = window.composer.attachments.chips
    return bool(chips) and all(c.ready or c.error for c in chips)


def test_pasting_files_shows_chips_with_their_cost_and_sends_them(
    qtbot: Any, make_window: Any, server: Any, tmp_path: Path
) -> None:
    window = make_window()
    notes = tmp_path / "notes.md"
    notes.write_text("alpha\nbeta\n")
    shot = write_png(tmp_path / "shot.png", 3840, 2160)
    data = QMimeData()
    data.setUrls([QUrl.fromLocalFile(str(notes)), QUrl.fromLocalFile(str(shot))])
    window.composer.edit.insertFromMimeData(data)  # what Ctrl+V does with copied files
    qtbot.waitUntil(lambda: _chips_ready(window), timeout=5000)
    # The thumbnails' decoder is started with the attaching, not while the sent message's
    # row is built (its start then waited for the request's workers).
    assert window.transcript.images.started
    labels = [c.label.text() for c in window.composer.attachments.chips]
    assert labels[0].startswith("notes.md · 11 B · ") and labels[0].endswith(" tokens")
    assert labels[1].endswith("· 1,105 tokens")
    assert window.composer.text() == ""  # attached, not typed

    server.enqueue(Reply(text="Seen both."))
    qtbot.keyClicks(window.composer.edit, "what are these")
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return)
    wait_idle(qtbot, window)
    assert window.composer.attachments.paths() == []
    parts = server.requests_to("responses")[-1].body["input"][-1]["content"]
    assert [p["type"] for p in parts] == ["input_text", "input_text", "input_image"]


def test_a_pasted_image_attaches_as_a_png(
    qtbot: Any, make_window: Any, server: Any, tmp_path: Path
) -> None:
    window = make_window()
    image = QImage(40, 30, QImage.Format.Format_RGB32)
    image.fill(0x3366CC)
    data = QMimeData()
    data.setImageData(image)
    window.composer.edit.insertFromMimeData(data)
    qtbot.waitUntil(lambda: _chips_ready(window), timeout=5000)
    chip = window.composer.attachments.chips[0]
    assert chip.label.text().endswith("· 255 tokens")  # 40x30: 85 + one 512-pixel tile
    assert chip.path.endswith(".png") and Path(chip.path).is_file()

    # Qt delivers no synthetic drop offscreen; a drop reaches the same rule as a paste
    # (tests/display drives a real one). The window takes drops.
    assert window.acceptDrops()


def test_a_file_that_cannot_be_sent_blocks_sending_until_removed(
    qtbot: Any, make_window: Any, server: Any, tmp_path: Path
) -> None:
    window = make_window()
    folder = tmp_path / "a folder"
    folder.mkdir()
    window.composer.attachments.add_paths([str(folder)])
    qtbot.waitUntil(lambda: _chips_ready(window), timeout=5000)
    chip = window.composer.attachments.chips[0]
    assert "cannot be sent" in chip.label.text() and "is a folder" in chip.toolTip()

    qtbot.keyClicks(window.composer.edit, "hello")
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return)
    assert "is a folder" in window.composer.hint.text()
    assert window.composer.text() == "hello"  # nothing sent, nothing lost
    assert server.requests_to("responses") == []

    chip.remove_button.click()
    assert window.composer.attachments.chips == []
    server.enqueue(Reply(text="ok"))
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return)
    wait_idle(qtbot, window)
    assert len(server.requests_to("responses")) == 1


def test_a_refused_message_comes_back_with_its_attachments(
    qtbot: Any, make_window: Any, server: Any, tmp_path: Path
) -> None:
    window = make_window(overrides={"accepts_images": False})
    shot = write_png(tmp_path / "a.png", 64, 64)
    window.composer.attachments.add_paths([str(shot)])
    qtbot.waitUntil(lambda: _chips_ready(window), timeout=5000)
    qtbot.keyClicks(window.composer.edit, "see this")
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return)
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: window.composer.attachments.paths() == [str(shot)], timeout=5000)
    assert window.composer.text() == "see this"
    assert server.requests_to("responses") == []
