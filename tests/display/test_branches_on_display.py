"""Editing and switching branch on a real display (issue 36 item 5), with real input: the
pointer clicks a message's Edit, the keyboard types the new text and Enter resends it, the
pointer clicks ‹ and the first version comes back in place."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import XDisplay, wait_for

pytestmark = pytest.mark.display


class Probe:
    """The window of ``window_probe`` on ``display``; asks it where things are."""

    def __init__(self, display: XDisplay, folder: Path, answers: list[str]) -> None:
        self.display, self.folder, self.asked = display, folder, 0
        log = (folder / "stderr.log").open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.display.window_probe", str(folder), *answers],
            env=display.env, stdout=log, stderr=log,
        )
        wait_for(lambda: self._alive() and (folder / "ready").exists(), "the probe's window")
        self.window = wait_for(
            lambda: display.xdotool("search", "--onlyvisible", "--pid", str(self.process.pid),
                                    "--name", "Coco", check=False).split()[:1],
            "the probe's window on the display",
        )[0]
        display.xdotool("windowactivate", "--sync", self.window)

    def _alive(self) -> bool:
        if self.process.poll() is not None:
            log = (self.folder / "stderr.log").read_text(errors="replace")
            pytest.fail(f"the probe exited ({self.process.returncode}):\n{log[-2000:]}")
        return True

    def ask(self, question: str) -> Any:
        n, self.asked = self.asked, self.asked + 1
        (self.folder / f"ask-{n}").write_text(question, encoding="utf-8")
        answer = self.folder / f"answer-{n}"
        wait_for(lambda: self._alive() and answer.exists(), f"the probe's answer to {question}")
        return json.loads(answer.read_text(encoding="utf-8"))

    def rows(self) -> list[tuple[str, str]]:
        return [(r["role"], r["text"]) for r in self.ask("rows")["rows"]]

    def idle(self) -> bool:
        return not self.ask("rows")["busy"]

    def click(self, control: str, text: str) -> None:
        at = wait_for(lambda: self.ask(f"where {control} {text}"), f"{control} of {text!r}")
        self.display.xdotool("mousemove", "--sync", str(at[0]), str(at[1]))
        self.display.xdotool("click", "1")

    def type(self, text: str) -> None:
        self.display.xdotool("type", "--delay", "2", text)

    def key(self, *keys: str) -> None:
        self.display.xdotool("key", *keys)


@pytest.fixture
def probe(x_display: XDisplay, tmp_path: Path) -> Iterator[Any]:
    started: list[Probe] = []

    def start(answers: list[str]) -> Probe:
        started.append(Probe(x_display, tmp_path, answers))
        return started[-1]

    yield start
    for one in started:
        one.process.terminate()
        try:
            one.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            one.process.kill()
            one.process.wait()


def test_click_edit_type_enter_then_click_previous_to_switch_back(probe: Any) -> None:
    app = probe(["Paris.", "Berlni.", "Berlin."])
    for question, n in (("capital of France?", 2), ("capital of Germny?", 4)):
        app.key("ctrl+l")  # the composer
        app.type(question)
        app.key("Return")
        wait_for(lambda n=n: len(app.rows()) == n and app.idle(), f"the answer to {question}")

    app.click("edit", "capital of Germny?")
    wait_for(lambda: any(r["editing"] for r in app.ask("rows")["rows"]), "the editor open")
    app.key("ctrl+a")
    app.type("capital of Germany?")
    app.key("Return")
    wait_for(lambda: app.rows()[2:] == [("user", "capital of Germany?"),
                                        ("assistant", "Berlin.")] and app.idle(),
             "the edited message answered on its new branch")
    assert app.ask("rows")["rows"][2]["branches"] == [1, 2]

    app.click("previous", "capital of Germany?")
    wait_for(lambda: app.rows()[2:] == [("user", "capital of Germny?"),
                                        ("assistant", "Berlni.")],
             "the first version back in place")
    assert app.ask("rows")["rows"][2]["branches"] == [0, 2]
    assert app.rows()[:2] == [("user", "capital of France?"), ("assistant", "Paris.")]
