"""Tests on a real display: Coco's real window on an X server (Xvfb) with a window manager
(openbox), driven with real input events (xdotool), the way a person uses it.

Offscreen tests cannot see what only a real window system shows: a widget left without a
parent becomes a window of its own there, takes the keyboard focus and loses what the user
types. Skipped, with the reason, where Xvfb, openbox or xdotool is missing (``apt-get install
xvfb openbox xdotool``) or Qt's X11 plugin cannot load; ``.ci/run`` installs them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

TOOLS = ("Xvfb", "openbox", "xdotool", "xprop")
PACKAGES = "xvfb openbox xdotool x11-utils"
SCREEN = "1600x1000x24"  # room for a 1 400 × 900 window
GUARD_SECONDS = 120.0  # only against a hang (a wait that never ends); no test asserts a time


def _missing_tools() -> list[str]:
    return [tool for tool in TOOLS if shutil.which(tool) is None]


def wait_for(condition: Callable[[], Any], what: str, poll: float = 0.1) -> Any:
    """Poll ``condition`` until it gives something true (returned); fail, naming ``what``,
    only if it never does (a hang guard, not a time limit on the behaviour)."""
    deadline = time.monotonic() + GUARD_SECONDS
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"never happened: {what}")
        time.sleep(poll)


def _answers(env: dict[str, str]) -> bool:
    """The X server takes connections (Xvfb names its display a moment before it does)."""
    return subprocess.run(
        ["xprop", "-root", "-len", "0"], env=env, capture_output=True, check=False
    ).returncode == 0


def _window_manager_running(env: dict[str, str]) -> bool:
    """A window manager has announced itself on the root window (EWMH)."""
    out = subprocess.run(
        ["xprop", "-root", "_NET_SUPPORTING_WM_CHECK"], env=env, capture_output=True,
        text=True, check=False,
    ).stdout
    return "window id" in out


@dataclass
class XDisplay:
    """A running X server with a window manager; ``env`` points programs at it."""

    name: str
    env: dict[str, str] = field(default_factory=dict)

    def xdotool(self, *args: str, check: bool = True) -> str:
        done = subprocess.run(
            ["xdotool", *args], env=self.env, capture_output=True, text=True,
            timeout=GUARD_SECONDS, check=False,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"xdotool {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout


@pytest.fixture
def x_display(tmp_path: Path) -> Iterator[XDisplay]:
    missing = _missing_tools()
    if missing:
        pytest.skip(
            f"a real display needs {', '.join(missing)} (apt-get install {PACKAGES})"
        )
    read, write = os.pipe()
    # -noreset: by default the server resets when its last client leaves (the checks below
    # connect and leave), and a window manager connecting just then fails to open the display.
    xvfb = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write), "-screen", "0", SCREEN, "-nolisten", "tcp",
         "-noreset"],
        pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    os.close(write)
    with os.fdopen(read) as pipe:
        number = pipe.readline().strip()  # Xvfb writes the display it chose once it is ready
    processes: list[subprocess.Popen[bytes]] = [xvfb]
    try:
        if not number:
            pytest.skip("Xvfb did not start")
        env = {**os.environ, "DISPLAY": f":{number}", "QT_QPA_PLATFORM": "xcb"}
        env.pop("WAYLAND_DISPLAY", None)
        from app.qt_preflight import check

        problem = check(env)
        if problem is not None:
            pytest.skip(f"Qt cannot open a window on X11 here: {problem.message}")
        wait_for(lambda: _answers(env), f"the X server on :{number} taking connections")
        wm_log = tmp_path / "openbox.log"
        with wm_log.open("wb") as log:
            openbox = subprocess.Popen(["openbox"], env=env, stdout=log, stderr=log)
        processes.append(openbox)
        display = XDisplay(f":{number}", env)

        def managed() -> bool:
            if openbox.poll() is not None:
                pytest.fail(f"openbox exited: {wm_log.read_text(errors='replace')[-1000:]}")
            return _window_manager_running(env)

        wait_for(managed, "openbox managing the screen")
        yield display
    finally:
        for process in reversed(processes):
            stop(process)


@dataclass
class Coco:
    """One run of the real app (``python -m app.main``) on ``display`` with ``profile``."""

    display: XDisplay
    profile: Path
    process: subprocess.Popen[bytes] | None = None
    window: str = ""

    def start(self) -> Coco:
        log = (self.profile / "stderr.log").open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "app.main", "--offline", "--data-dir", str(self.profile)],
            env=self.display.env, stdout=log, stderr=log,
        )
        pid = str(self.process.pid)
        self.window = wait_for(
            lambda: self._alive() and self.display.xdotool(
                "search", "--onlyvisible", "--pid", pid, "--name", "Coco", check=False
            ).split()[:1],
            "Coco's window on the display",
        )[0]
        self.display.xdotool("windowsize", "--sync", self.window, "1000", "700")
        self.display.xdotool("windowactivate", "--sync", self.window)
        return self

    def _alive(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            log = (self.profile / "stderr.log").read_text(errors="replace")
            pytest.fail(f"Coco exited ({self.process.returncode}):\n{log[-2000:]}")
        return True

    def visible_windows(self) -> list[str]:
        """The app's visible top-level windows (what the desktop shows and may focus)."""
        assert self.process is not None
        return self.display.xdotool(
            "search", "--onlyvisible", "--pid", str(self.process.pid), check=False
        ).split()

    def geometry(self) -> tuple[int, int, int, int]:
        """The window's x, y, width and height on the screen."""
        out = self.display.xdotool("getwindowgeometry", "--shell", self.window)
        values = dict(line.split("=", 1) for line in out.split() if "=" in line)
        return int(values["X"]), int(values["Y"]), int(values["WIDTH"]), int(values["HEIGHT"])

    def click(self, x: int, y: int, button: str = "1") -> None:
        """Click at ``x``, ``y`` inside the window (the pointer moves there first)."""
        self.display.xdotool("mousemove", "--window", self.window, str(x), str(y))
        self.display.xdotool("click", button)

    # Keys go through the X server (XTEST) to the window that has the focus, as a keyboard's
    # do: typing lands wherever the focus really is (a stray window would swallow it).

    def type(self, text: str) -> None:
        self.display.xdotool("type", "--delay", "2", text)

    def key(self, *keys: str) -> None:
        self.display.xdotool("key", *keys)

    def quit(self) -> None:
        """Ctrl+Q, as the user quits; waits for the process to end."""
        assert self.process is not None
        self.display.xdotool("windowactivate", "--sync", self.window)
        self.key("ctrl+q")
        self.process.wait(timeout=GUARD_SECONDS)


@pytest.fixture
def coco(x_display: XDisplay, tmp_path: Path) -> Iterator[Callable[[], Coco]]:
    """Start Coco (again) on the display with one profile; every run is ended afterwards."""
    runs: list[Coco] = []

    def start() -> Coco:
        run = Coco(x_display, tmp_path / "profile")
        run.profile.mkdir(exist_ok=True)
        runs.append(run)
        return run.start()

    yield start
    for run in runs:
        if run.process is not None:
            stop(run.process)


def stop(process: subprocess.Popen[bytes]) -> None:
    """End a program the test started (asked first, killed if it does not go)."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class Probe:
    """The window of ``window_probe`` (``MODULE``) on ``display``; asks it where things are."""

    MODULE = "tests.display.window_probe"

    def __init__(self, display: XDisplay, folder: Path, answers: list[str]) -> None:
        self.display, self.folder, self.asked = display, folder, 0
        log = (folder / "stderr.log").open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", self.MODULE, str(folder), *answers],
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
        # Written beside and renamed into place, as the answers are: the probe polls for the
        # file, and one it found created but not yet written was read as an empty question
        # (answered as another one).
        asking = self.folder / f"ask-{n}.tmp"
        asking.write_text(question, encoding="utf-8")
        asking.rename(self.folder / f"ask-{n}")
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
def probe_class() -> type[Probe]:
    """The probe the ``probe`` fixture starts (a test file of another probe says its own)."""
    return Probe


@pytest.fixture
def probe(x_display: XDisplay, tmp_path: Path, probe_class: type[Probe]) -> Iterator[Any]:
    started: list[Probe] = []

    def start(answers: list[str]) -> Probe:
        started.append(probe_class(x_display, tmp_path, answers))
        return started[-1]

    yield start
    for one in started:
        stop(one.process)
