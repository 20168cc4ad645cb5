"""Renaming and deleting sessions from the sidebar go through the core's session library, in
step with the open session: one writer per rollout, and a file closed before it moves."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from app.core.rollout.lock import lock_path
from app.demo import Reply
from tests.file_handles import count_writers, needs_proc, open_handles, windows_like_replace

from ..conftest import run
from ..helpers import assistant_texts, type_and_send, wait_idle


def chat(qtbot: Any, window: Any, server: Any, text: str) -> None:
    server.enqueue(Reply(text=f"answer to {text}"))
    type_and_send(qtbot, window, text)
    wait_idle(qtbot, window)


def list_item(panel: Any, session_id: str) -> Any:
    return panel.list.item(panel.session_ids().index(session_id))


@needs_proc
def test_renaming_the_open_session_keeps_one_writer_and_the_title(
    qtbot: Any, make_window: Any, server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    handles = count_writers(monkeypatch)  # per record appended: handles on its rollout
    window = make_window()
    chat(qtbot, window, server, "first question")
    session_id = window.session.id
    path = window.session.rollout_path
    panel = window.sessions

    list_item(panel, session_id).setText("Project X")  # what the in-place editor does
    assert panel.titles() == ["Project X"]
    assert window.windowTitle() == "Project X — Coco"
    chat(qtbot, window, server, "second question")  # the open session goes on writing
    assert panel.titles() == ["Project X"]

    opened = window.start_new_session()
    qtbot.waitUntil(opened.done, timeout=5000)
    reopened = window._schedule_open(session_id)
    qtbot.waitUntil(reopened.done, timeout=5000)
    assert window.windowTitle() == "Project X — Coco"
    assert [r.text for r in window.transcript.message_rows("user")] == [
        "first question", "second question"
    ]

    assert handles and max(handles) == 1  # never a second writer beside the session's own
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b""
    rows = [json.loads(line) for line in lines[:-1]]  # every line one whole record
    assert len({row["id"] for row in rows}) == len(rows)
    assert [row["payload"] for row in rows if row["type"] == "session_title"] == [
        {"title": "Project X"}
    ]


@needs_proc
def test_deleting_the_open_session_closes_it_first_and_the_window_goes_on(
    qtbot: Any, make_window: Any, server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Windows refuses to move a file that is still open; emulate it so the order is checked.
    monkeypatch.setattr(os, "replace", windows_like_replace(os.replace))
    window = make_window()
    chat(qtbot, window, server, "a session to delete")
    session_id = window.session.id
    path = window.session.rollout_path
    assert open_handles(path) == 1
    panel = window.sessions
    panel.confirm_delete = lambda title: True

    assert run(qtbot, panel.delete_session(session_id, "a session to delete"))

    trashed = tmp_path / "data" / "sessions" / "trash" / f"{session_id}.jsonl"
    assert trashed.exists() and not path.exists()
    assert open_handles(trashed) == 0 and not lock_path(path).exists()
    assert window.session is not None and window.session.id != session_id
    assert window.transcript.rows == []
    assert window.transcript.notice_rows("error") == []
    chat(qtbot, window, server, "still here?")  # the window goes on, in a new session
    assert assistant_texts(window) == ["answer to still here?"]
    assert panel.session_ids() == [window.session.id]


def test_a_failed_deletion_says_why_and_the_conversation_goes_on(
    qtbot: Any, make_window: Any, server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_replace = os.replace

    def refuse(src: Any, dst: Any, **kw: Any) -> None:
        if str(src).endswith(".jsonl"):
            raise PermissionError(13, "Permission denied", str(src))
        real_replace(src, dst, **kw)

    monkeypatch.setattr(os, "replace", refuse)
    window = make_window()
    chat(qtbot, window, server, "keep me")
    session_id = window.session.id
    panel = window.sessions
    panel.confirm_delete = lambda title: True

    assert not run(qtbot, panel.delete_session(session_id, "keep me"))

    assert "Could not delete the session: Permission denied" in (
        window.transcript.notice_rows("error")[-1].message
    )
    assert window.session.id == session_id  # opened again, as it was
    assert panel.session_ids() == [session_id]
    chat(qtbot, window, server, "and more")
    assert assistant_texts(window) == ["answer to keep me", "answer to and more"]
