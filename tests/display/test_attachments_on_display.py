"""Attaching on a real display with real input (issue 38): files dragged from another program
(a real XDND drag, the pointer pressed, moved and released by xdotool) attach to the message,
and an image on the clipboard (xclip) attaches with Ctrl+V in the text box; the message then
goes with all three, and its row shows them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.attachment_files import write_png

from .conftest import Probe, XDisplay, stop, wait_for

pytestmark = pytest.mark.display


@pytest.fixture
def helpers(x_display: XDisplay) -> Iterator[list[subprocess.Popen[bytes]]]:
    """The other programs a test starts on the display (a drag source, xclip), ended after."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        stop(process)


def _chips(probe: Probe) -> list[dict[str, Any]]:
    return list(probe.ask("rows")["chips"])


def _ready(probe: Probe, count: int) -> list[dict[str, Any]] | None:
    chips = _chips(probe)
    return chips if len(chips) == count and all(c["ready"] for c in chips) else None


def test_files_dragged_from_another_program_and_a_pasted_image_are_sent_with_the_message(
    x_display: XDisplay, tmp_path: Path, helpers: list[subprocess.Popen[bytes]]
) -> None:
    if shutil.which("xclip") is None:
        pytest.skip("pasting an image on a real display needs xclip (apt-get install xclip)")
    files = tmp_path / "files"
    files.mkdir()
    notes = files / "notes.md"
    notes.write_text("the release is on Friday\n", encoding="utf-8")
    shot = write_png(files / "shot.png", 320, 200)
    pasted = write_png(files / "clipboard.png", 64, 48)
    folder = tmp_path / "probe"
    folder.mkdir()
    probe = Probe(x_display, folder, ["I see a note and two images."])
    try:
        display = x_display
        display.xdotool("windowmove", "--sync", probe.window, "0", "0")

        # A file manager's drag: pressed on the source, moved over Coco, released.
        marker = tmp_path / "drag-source"
        source = subprocess.Popen(
            [sys.executable, "-m", "tests.display.drag_source", str(marker), str(notes),
             str(shot)],
            env=display.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        helpers.append(source)
        source_window = wait_for(
            lambda: display.xdotool("search", "--onlyvisible", "--pid", str(source.pid),
                                    "--name", "Drag source", check=False).split()[:1],
            "the drag source's window",
        )[0]
        wait_for(lambda: marker.exists(), "the drag source's window up")
        display.xdotool("windowmove", "--sync", source_window, "1060", "100")
        display.xdotool("mousemove", "--window", source_window, "100", "100")
        display.xdotool("mousedown", "1")
        # The pointer moves once the drag has begun (a drag begun after it had moved on saw
        # no motion over Coco, and nothing was dropped).
        wait_for(lambda: marker.read_text(encoding="utf-8") == "dragging", "the drag begun")
        target = probe.ask("where transcript -")
        for step in range(1, 11):  # XDND follows the pointer's motion
            x = 1160 + (target[0] - 1160) * step // 10
            y = 200 + (target[1] - 200) * step // 10
            display.xdotool("mousemove", "--sync", str(x), str(y))
        display.xdotool("mouseup", "1")
        chips = wait_for(lambda: _ready(probe, 2), "the dropped files as two read chips")
        assert [c["name"] for c in chips] == ["notes.md", "shot.png"]
        assert "tokens" in chips[1]["label"]

        # An image on the clipboard (a screenshot copied), pasted into the text box.
        clip = subprocess.Popen(
            ["xclip", "-quiet", "-selection", "clipboard", "-t", "image/png", "-i", str(pasted)],
            env=display.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        helpers.append(clip)
        display.xdotool("windowactivate", "--sync", probe.window)
        probe.click("composer", "-")
        probe.key("ctrl+v")
        chips = wait_for(lambda: _ready(probe, 3), "the pasted image as a third chip")
        assert chips[2]["name"].startswith("pasted-") and chips[2]["name"].endswith(".png")

        probe.type("what are these")
        probe.key("Return")
        wait_for(lambda: probe.idle() and len(probe.rows()) == 2, "the answer")
        user = probe.ask("rows")["rows"][0]
        assert user["text"] == "what are these"
        assert user["attachments"][:2] == ["notes.md", "shot.png"]
        assert user["attachments"][2].startswith("pasted-")
        assert _chips(probe) == []  # sent with the message, the tray empty again
    finally:
        probe.process.terminate()
        probe.process.wait(timeout=10)
