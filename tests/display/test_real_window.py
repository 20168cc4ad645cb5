"""Coco on a real display, driven by real keys and mouse (issue 25): a conversation of long
messages typed in, an automatic compaction, scrolling, a restart; through all of it the app
shows exactly one window, and what the user types lands in the composer, unsent text too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings

from app.core.settings import AppSettings, SettingsStore

from .conftest import Coco, wait_for

pytestmark = pytest.mark.display

WINDOW = 4_096  # tokens: a few long messages fill it and compaction runs by itself
DRAFT = "a thought typed but not sent"


def long_message(n: int) -> str:
    """One paragraph of about 2 300 characters: shown in parts (``long_text``)."""
    words = " ".join(f"word{n}x{i}" for i in range(260))
    return f"Long message {n}: {words} end of message {n}."


def records(profile: Path) -> list[dict[str, Any]]:
    """Every record of the session's rollout (one session in this profile)."""
    files = [p for p in profile.rglob("*.jsonl") if "trash" not in p.parts]
    out: list[dict[str, Any]] = []
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.append(json.loads(line))
    return out


def said(profile: Path, role: str) -> list[str]:
    texts = []
    for record in records(profile):
        item = (record.get("payload") or {}).get("item") or {}
        if record.get("type") == "response_item" and item.get("role") == role:
            texts.append("".join(part.get("text", "") for part in item.get("content") or []))
    return texts


def compactions(profile: Path) -> list[dict[str, Any]]:
    return [r["payload"] for r in records(profile) if r.get("type") == "compacted"]


def draft_saved(profile: Path) -> str:
    value = QSettings(str(profile / "config" / "window.ini"), QSettings.Format.IniFormat).value(
        "composer/draft"
    )
    return value if isinstance(value, str) else ""


def click_composer(app: Coco) -> None:
    _, _, width, height = app.geometry()
    app.click(width // 2 - 60, height - 45)


def scroll_transcript(app: Coco) -> None:
    """The wheel over the transcript: up to the top, then back down."""
    _, _, width, height = app.geometry()
    app.display.xdotool("mousemove", "--window", app.window, str(width // 2), str(height // 2))
    app.display.xdotool("click", "--repeat", "25", "--delay", "20", "4")
    app.display.xdotool("click", "--repeat", "25", "--delay", "20", "5")


def test_a_conversation_compaction_and_restart_keep_one_window_and_the_typing(
    coco: Any, tmp_path: Path
) -> None:
    profile = tmp_path / "profile"
    SettingsStore(profile / "config").save(AppSettings(provider="demo", context_window=WINDOW))
    app = coco()
    assert app.visible_windows() == [app.window]

    sent: list[str] = []
    n = 0
    while not compactions(profile):
        n += 1
        assert n <= 8, "the context never filled up"
        click_composer(app)
        message = long_message(n)
        app.type(message)
        app.key("Return")
        sent.append(message)
        wait_for(lambda: len(said(profile, "assistant")) >= len(sent), f"the answer to {n}")
        # Every key typed reached the composer, and the message went out exactly as typed.
        assert said(profile, "user")[-1] == message
    assert compactions(profile)[-1].get("trigger") == "auto"
    # Long messages, compacted: the window shows them in parts, dimmed, tagged, and scrolls.
    scroll_transcript(app)
    assert app.visible_windows() == [app.window]

    click_composer(app)
    app.type(DRAFT)  # not sent
    app.quit()
    assert draft_saved(profile) == DRAFT  # what was typed was in the composer

    app = coco()  # the same profile: the last session and the draft come back
    scroll_transcript(app)
    assert app.visible_windows() == [app.window]
    app.quit()
    assert draft_saved(profile) == DRAFT  # shown again in the composer, so kept again
    assert said(profile, "user")[: len(sent)] == sent
