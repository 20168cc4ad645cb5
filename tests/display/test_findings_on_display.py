"""What a person saw in an hour with a small local model (issue 39), on a real display with
real input: Find taking you to each match and highlighting it, markers that say what is true
now and are not clipped, the status bar's hint never over the model label, the notes of a small
window whole, and the default compaction prompt wrapped at the box's width."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from .conftest import Probe as BaseProbe
from .conftest import wait_for

pytestmark = pytest.mark.display


class Probe(BaseProbe):
    """The window of ``findings_probe`` on ``display``; asks it what it shows."""

    MODULE = "tests.display.findings_probe"

    def state(self) -> dict[str, Any]:
        return self.ask("state")  # type: ignore[no-any-return]

    def idle(self) -> bool:
        return not self.state()["busy"]

    def resize(self, width: int, height: int) -> None:
        self.display.xdotool("windowsize", "--sync", self.window, str(width), str(height))
        wait_for(lambda: self.state()["size"] == [width, height], f"the window at {width}×{height}")

    def point(self, control: str) -> list[int]:
        return wait_for(lambda: self.ask(f"where {control}"), f"the {control} control")  # type: ignore[no-any-return]

    def click(self, control: str, text: str = "") -> None:  # the controls have no message
        at = self.point(control)
        self.display.xdotool("mousemove", "--sync", str(at[0]), str(at[1]))
        self.display.xdotool("click", "1")

    def send(self, text: str) -> None:
        self.key("ctrl+l")  # the composer
        self.type(text)
        self.key("Return")

    def shot(self, name: str) -> Path:
        """A screenshot of the X screen; also kept in ``$COCO_DISPLAY_SHOTS`` when set (to
        look at what a person saw after the test's folder is gone)."""
        path = self.folder / f"{name}.png"
        assert self.ask(f"shot {path}")
        if keep := os.environ.get("COCO_DISPLAY_SHOTS"):
            Path(keep).mkdir(parents=True, exist_ok=True)
            shutil.copy(path, Path(keep) / path.name)
        return path


@pytest.fixture
def probe_class() -> type[Probe]:
    return Probe


def chat(app: Probe, text: str, count: int) -> None:
    app.send(text)
    wait_for(lambda: len(app.state()["messages"]) == count and app.idle(), f"the answer to {text}")


def test_the_compact_hint_is_never_drawn_over_the_model_label(probe: Any) -> None:
    app = probe(["Hello there.", "SUMMARY: the user said hello."])
    app.resize(1400, 900)
    chat(app, "hello", 2)
    app.click("compact")  # the pointer stays on the button: its hint is in the status bar
    wait_for(lambda: app.state()["markers"] and app.idle(), "the compaction")
    wait_for(lambda: app.state()["status_message"], "the button's hint in the status bar")
    app.shot("status-bar-after-compact")
    state = app.state()
    # The hint is drawn where the model label sits: the label gives way while it shows.
    assert not state["model_label_visible"], state
    app.display.xdotool("mousemove", "--sync", "700", "400")  # away: the hint goes
    wait_for(lambda: not app.state()["status_message"], "the hint gone")
    assert app.state()["model_label_visible"]


def long_answer() -> str:
    paragraphs = [f"Paragraph {n} says nothing in particular about soil." for n in range(400)]
    paragraphs[330] = "Here the answer names the quokkafruit orchard at last."
    return "\n\n".join(paragraphs)


SUMMARY = "The user plans a trip to the lighthouse of Zanzibarra in May and asked about soil."


def test_find_takes_you_to_each_match_opens_it_and_highlights_it(probe: Any) -> None:
    fillers = [f"Filler answer {n}." for n in range(8)]
    app = probe([long_answer(), "Noted.", SUMMARY, *fillers])
    chat(app, "Tell me everything about the garden.", 2)
    chat(app, "And the trip?", 4)
    app.click("compact")
    wait_for(lambda: app.state()["markers"] and app.idle(), "the compaction")
    for n in range(8):
        chat(app, f"Filler question {n}", 6 + 2 * n)

    app.key("ctrl+f")
    app.type("quokkafruit")
    app.key("Return")
    found = wait_for(lambda: (app.state().get("find") or {}).get("highlight"), "a match shown")
    width = app.state()["find"]["query_width"]
    assert found["marked"] == ["quokkafruit"] and found["visible"], found
    assert found["kind"] == "MessageSegmentRow"  # the part of the long answer it is in
    app.shot("find-in-a-long-answer")

    app.key("ctrl+a")
    app.type("Zanzibarra")
    app.key("Return")
    found = wait_for(
        lambda: (h := (app.state().get("find") or {}).get("highlight")) and h["kind"] ==
        "CompactionRow" and h, "the match in the summary shown",
    )
    assert found["marked"] == ["Zanzibarra"] and found["visible"], found
    state = app.state()
    assert state["markers"][0]["expanded"]  # the collapsed summary was opened
    assert "a compaction summary" in state["find"]["status"]
    assert state["find"]["query_width"] == width  # the field kept its width
    app.shot("find-in-a-summary")


def test_an_undone_compactions_title_is_whole_in_a_narrow_window(probe: Any) -> None:
    app = probe(["Hello there.", "SUMMARY: the user said hello and asked about the soil."])
    chat(app, "hello", 2)
    app.click("compact")
    wait_for(lambda: app.state()["markers"] and app.idle(), "the compaction")
    state = app.state()
    assert state["markers"][0]["undo_note"].startswith("Undo stays available until")
    assert any("made the context larger" in w for w in state["warnings"])  # a short talk
    assert state["indicator_text"].startswith("Context compacted")
    app.click("undo")
    wait_for(lambda: app.state()["markers"][0]["state"] == "undone", "the compaction undone")
    # What is said of the compaction now holds: the "larger… Undo puts it back" warning went,
    # and the status bar no longer says the context was compacted (its figures are undone).
    state = app.state()
    assert not any("made the context larger" in w for w in state["warnings"])
    assert "compacted" not in state["indicator_text"], state["indicator_text"]
    # Then the window made narrow, the Model view beside the chat: its narrowest column.
    app.resize(700, 500)
    app.key("ctrl+m")
    wait_for(lambda: app.state()["status_message"], "the session list giving way")
    marker = wait_for(
        lambda: "title_height" in (m := app.state()["markers"][0]) and m, "the marker drawn",
    )
    app.shot("undone-at-700x500")
    assert marker["title"].startswith("Compaction undone")
    assert marker["title_height"] >= marker["title_needs"], marker  # every line of it shown
    x, _, width, _ = marker["title_rect"]
    window = app.state()
    assert width > 0 and x + width <= window["indicator_rect"][0] + window["indicator_rect"][2]


def test_a_small_windows_notes_and_the_default_prompt_read_whole(probe: Any) -> None:
    app = probe(["Hello there."])
    chat(app, "hello", 2)
    app.resize(700, 500)
    app.key("ctrl+m")  # the Model view asks for room: the session list gives way
    state = wait_for(lambda: (s := app.state())["status_message"] and s, "the note")
    app.shot("note-at-700x500")
    assert state["status_message"] == "Session list hidden: too narrow"
    assert state["status_shown"] == state["status_message"]  # whole, no "…"

    app.resize(1000, 700)
    shown = app.ask("settings")
    app.shot("settings-compaction-prompt")
    first = shown["text"].split("\n\n")[0]
    assert "\n" not in first  # one paragraph, wrapped by the box, not by the file
    assert shown["first_paragraph_lines"] > 1
