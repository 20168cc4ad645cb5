"""The boxes of a sent message's attachments (``attachments.boxes``), in the real window
against the scripted server: made a few at a time after their row, each in the place kept for
it, so nothing moves when they come; drawn with their own frame (a file's chip whose stored
copy is gone framed in the error colour)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtGui import QColor
from PySide6.QtWidgets import QWidget

from app.ui.style.theme import colors
from app.ui.transcript.attachments.strip import BOXES_A_TURN, AttachmentStrip
from tests.attachment_files import write_image, write_png

from .test_strip import _send_with_files, _strip


def _files(tmp_path: Path, images: int) -> list[Path]:
    notes = tmp_path / "notes.md"
    notes.write_text("alpha\nbeta\n")
    return [notes, *(write_png(tmp_path / f"shot-{n}.png", 320 + 40 * n, 200) for n in range(images))]


def test_boxes_come_a_few_a_turn_after_their_row_each_where_its_place_was_kept(
    qtbot: Any, make_window: Any, server: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    window = make_window()
    _send_with_files(qtbot, window, server, _files(tmp_path, 2 * BOXES_A_TURN + 1))
    attachments = window.transcript.message_rows("user")[-1].attachments
    count = len(attachments)

    host = QWidget()
    qtbot.addWidget(host)
    host.resize(520, 400)
    strip = AttachmentStrip(attachments, window.transcript.images, host)
    strip.resize(520, strip.flow.heightForWidth(520))
    host.show()
    flow = strip.flow
    kept = [flow.itemAt(i).geometry() for i in range(count)]
    height = flow.heightForWidth(520)
    assert strip._thumbnails == [] and strip._chips == []  # nothing made with the strip
    assert all(flow.itemAt(i).widget() is None for i in range(count))

    made: list[int] = []
    make = AttachmentStrip.make_boxes

    def counted(self: AttachmentStrip, most: int | None = None) -> None:
        make(self, most)
        made.append(len(self._thumbnails) + len(self._chips))

    monkeypatch.setattr(AttachmentStrip, "make_boxes", counted)
    qtbot.waitUntil(lambda: bool(made) and made[-1] == count, timeout=5000)
    # Each turn of the event loop made at most BOXES_A_TURN more, until all were made.
    assert made == [min(count, BOXES_A_TURN * n) for n in range(1, len(made) + 1)]
    boxes = [flow.itemAt(i).widget() for i in range(count)]
    assert [box.geometry() for box in boxes] == kept
    assert all(box.isVisible() for box in boxes)
    assert flow.heightForWidth(520) == height
    # The images first, then the file, in the order they were attached.
    assert [box.shown["name"] for box in boxes] == [
        *(a["name"] for a in attachments if a["kind"] == "image"), "notes.md"
    ]


def test_asking_for_the_boxes_makes_them_all_at_once(
    qtbot: Any, make_window: Any, server: Any, tmp_path: Path
) -> None:
    window = make_window()
    _send_with_files(qtbot, window, server, _files(tmp_path, BOXES_A_TURN + 1))
    attachments = window.transcript.message_rows("user")[-1].attachments
    host = QWidget()
    qtbot.addWidget(host)
    strip = AttachmentStrip(attachments, window.transcript.images, host)
    assert len(strip.thumbnails) == BOXES_A_TURN + 1
    assert [chip.text() for chip in strip.chips] == ["notes.md · 11 B"]


def _border(box: QWidget) -> QColor:
    """The colour of the frame's left edge, half way down."""
    return box.grab().toImage().pixelColor(0, box.height() // 2)


def test_a_thumbnails_frame_is_drawn_over_its_pictures_edge(
    qtbot: Any, make_window: Any, server: Any, tmp_path: Path
) -> None:
    shot = write_image(tmp_path / "blue.png", 300, 300, "PNG")  # fills its square box
    window = make_window()
    _send_with_files(qtbot, window, server, [shot])
    thumb = _strip(qtbot, window).thumbnails[0]
    qtbot.waitUntil(lambda: thumb.loaded, timeout=5000)
    image = thumb.grab().toImage()
    assert _border(thumb) == QColor(colors().border)
    assert image.pixelColor(thumb.width() // 2, thumb.height() // 2) == QColor(10, 120, 200)


def test_a_chip_is_framed_in_the_error_colour_when_its_file_is_gone(
    qtbot: Any, make_window: Any, server: Any, tmp_path: Path
) -> None:
    window = make_window(root=tmp_path / "one")
    _send_with_files(qtbot, window, server, _files(tmp_path, 1))
    assert _border(_strip(qtbot, window).chips[0]) == QColor(colors().border)
    session_id = window.session.id
    folder = window.session.rollout_path.with_name(window.session.id + ".files")
    window.close()
    for stored in folder.glob("*.txt"):
        stored.unlink()

    reopened = make_window(root=tmp_path / "one", session_id=session_id)
    chip = _strip(qtbot, reopened).chips[0]
    assert chip.missing
    assert _border(chip) == QColor(colors().error)
