"""Take the README's screenshots from the real window, so they never go stale.

    python docs/screenshots.py            # writes docs/screenshot-light.png and -dark.png

Needs Xvfb, openbox and xdotool (``apt-get install xvfb openbox xdotool x11-utils``). For each
theme it starts Coco on the offline demo model in a fresh profile on a virtual display, types a
short conversation with real key presses, runs ``/compact`` so the compaction marker shows, and
grabs the window (Qt's own screen grab, no other tool needed).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SIZE = ("1100", "720")
PROMPTS = (
    "Show me a short Python code block and a Markdown table comparing compaction paths",
    "/compact keep the code",
)
GUARD_SECONDS = 120.0


def wait_for(check: object, what: str) -> object:
    deadline = time.monotonic() + GUARD_SECONDS
    while True:
        value = check()  # type: ignore[operator]
        if value:
            return value
        if time.monotonic() > deadline:
            raise SystemExit(f"screenshots: never happened: {what}")
        time.sleep(0.1)


def xdotool(env: dict[str, str], *args: str) -> str:
    return subprocess.run(
        ["xdotool", *args], env=env, capture_output=True, text=True, check=False
    ).stdout


def rollout_types(profile: Path) -> list[str]:
    types: list[str] = []
    for path in profile.rglob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                item = (record.get("payload") or {}).get("item") or {}
                types.append(f"{record.get('type')}:{item.get('role', '')}")
    return types


def shoot(env: dict[str, str], theme: str, out: Path) -> None:
    sys.path.insert(0, str(REPO))
    from app.core.settings import AppSettings, SettingsStore

    with tempfile.TemporaryDirectory() as folder:
        profile = Path(folder)
        SettingsStore(profile / "config").save(AppSettings(provider="demo", theme=theme))
        app = subprocess.Popen(
            [sys.executable, "-m", "app.main", "--offline", "--data-dir", str(profile)],
            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            window = str(wait_for(
                lambda: xdotool(env, "search", "--onlyvisible", "--pid", str(app.pid),
                                "--name", "Coco").split()[:1],
                "Coco's window",
            )[0])  # type: ignore[index]
            xdotool(env, "windowsize", "--sync", window, *SIZE)
            xdotool(env, "windowactivate", "--sync", window)
            for number, prompt in enumerate(PROMPTS, start=1):
                xdotool(env, "mousemove", "--window", window, "400", str(int(SIZE[1]) - 45))
                xdotool(env, "click", "1")
                xdotool(env, "type", "--delay", "8", prompt)  # real key presses (XTEST)
                if prompt.startswith("/"):
                    xdotool(env, "key", "Escape")  # the command popup
                xdotool(env, "key", "Return")
                if prompt.startswith("/compact"):
                    wait_for(lambda: "compacted:" in rollout_types(profile), "the compaction")
                else:
                    wait_for(
                        lambda n=number: rollout_types(profile).count(
                            "response_item:assistant") >= n,
                        "the answer",
                    )
            xdotool(env, "mousemove", "--window", window, "5", "5")  # no hover, no tooltip
            grab(env, window, out)
        finally:
            app.terminate()
            try:
                app.wait(timeout=30)
            except subprocess.TimeoutExpired:
                app.kill()


def grab(env: dict[str, str], window: str, out: Path) -> None:
    """The window's pixels, grabbed by a separate Qt process on the same display (after the
    window has drawn what it just got)."""
    code = (
        "import sys, time\n"
        "from PySide6.QtWidgets import QApplication\n"
        "app = QApplication(['grab'])\n"
        "time.sleep(1.0)\n"  # the last repaint (the marker, the gauge) has reached the screen
        "pixmap = app.primaryScreen().grabWindow(int(sys.argv[1]))\n"
        "sys.exit(0 if pixmap.save(sys.argv[2]) else 1)\n"
    )
    subprocess.run([sys.executable, "-c", code, window, str(out)], env=env, check=True)
    print(f"wrote {out}")


def main() -> None:
    read, write = os.pipe()
    xvfb = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write), "-screen", "0", "1280x800x24", "-nolisten", "tcp",
         "-noreset"],
        pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    os.close(write)
    with os.fdopen(read) as pipe:
        number = pipe.readline().strip()
    env = {**os.environ, "DISPLAY": f":{number}", "QT_QPA_PLATFORM": "xcb"}
    env.pop("WAYLAND_DISPLAY", None)
    openbox = subprocess.Popen(["openbox"], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        wait_for(
            lambda: "window id" in subprocess.run(
                ["xprop", "-root", "_NET_SUPPORTING_WM_CHECK"], env=env, capture_output=True,
                text=True, check=False,
            ).stdout,
            "the window manager",
        )
        for theme in ("light", "dark"):
            shoot(env, theme, REPO / "docs" / f"screenshot-{theme}.png")
    finally:
        openbox.terminate()
        xvfb.terminate()
        openbox.wait()
        xvfb.wait()


if __name__ == "__main__":
    main()
