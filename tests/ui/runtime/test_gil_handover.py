"""While a session opens or a turn runs, worker threads hand the interpreter back to the
window's thread within a millisecond (the switch interval), and the interval is restored
afterwards."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from app.demo import Reply, ToolCall
from app.ui.controller import replay_prep
from app.ui.runtime.gil_handover import HANDOVER_S, quick_handover

from ..conftest import run
from ..helpers import assistant_texts, saved_session_ending_with, type_and_send, wait_idle


def test_the_interval_is_short_inside_and_restored_after_the_outermost_block() -> None:
    before = sys.getswitchinterval()
    assert before > HANDOVER_S
    with quick_handover():
        assert sys.getswitchinterval() == pytest.approx(HANDOVER_S)
        with quick_handover():
            assert sys.getswitchinterval() == pytest.approx(HANDOVER_S)
        assert sys.getswitchinterval() == pytest.approx(HANDOVER_S)  # the outer one goes on
    assert sys.getswitchinterval() == before
    with pytest.raises(RuntimeError), quick_handover():
        raise RuntimeError("an open that failed")
    assert sys.getswitchinterval() == before


def test_a_session_is_read_and_prepared_with_the_short_interval(
    qtbot: Any, make_window: Any, server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    window = make_window()
    huge = "log line: request served in 12 ms, cache hit, 200 OK\n" * 1000
    session_id, _rollout = saved_session_ending_with(qtbot, window, server, huge)
    seen: list[float] = []
    parts = replay_prep._parts

    def noting(*args: Any) -> Any:
        seen.append(sys.getswitchinterval())  # in the worker thread preparing the message
        return parts(*args)

    monkeypatch.setattr(replay_prep, "_parts", noting)
    before = sys.getswitchinterval()
    assert run(qtbot, window.open_session(session_id), timeout=30)
    assert seen == [pytest.approx(HANDOVER_S)]
    assert sys.getswitchinterval() == before
    assert window.transcript.message_rows("assistant")[-1].text == huge


def test_a_tool_calls_turn_runs_with_the_short_interval_a_plain_answer_without(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    before = sys.getswitchinterval()
    # A plain answer: the window's drawing is the work, the interval stays as it was.
    server.enqueue(Reply(text="held open", pause_after_items=1))  # the turn runs until Stop
    type_and_send(qtbot, window, "hello")
    qtbot.waitUntil(lambda: bool(assistant_texts(window)), timeout=5000)
    assert sys.getswitchinterval() == before
    window.stop()
    wait_idle(qtbot, window)
    # A tool's output is parsed, saved and indexed in workers: short from the call on.
    server.enqueue(Reply(function_calls=[ToolCall("recall", {"query": "hello"}, "c1")]))
    server.enqueue(Reply(text="found it", pause_after_items=1))
    type_and_send(qtbot, window, "what did I say?")
    qtbot.waitUntil(lambda: len(assistant_texts(window)) == 2, timeout=5000)
    assert sys.getswitchinterval() == pytest.approx(HANDOVER_S)
    window.stop()
    wait_idle(qtbot, window)
    assert sys.getswitchinterval() == before


def test_a_compaction_asked_for_runs_with_the_short_interval_too(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    server.enqueue(Reply(text="Hello."))
    type_and_send(qtbot, window, "hello")
    wait_idle(qtbot, window)
    before = sys.getswitchinterval()
    server.enqueue(Reply(text="SUMMARY: held", pause_after_items=1))  # the summary held open
    assert window.compact()
    qtbot.waitUntil(lambda: window.controller.state.compacting, timeout=5000)
    qtbot.waitUntil(lambda: len(server.requests_to("responses")) == 2, timeout=5000)
    assert sys.getswitchinterval() == pytest.approx(HANDOVER_S)
    window.stop()
    wait_idle(qtbot, window)
    assert sys.getswitchinterval() == before


def test_an_edit_runs_with_the_short_interval_until_its_turn_ends(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    from app.core import ops

    window = make_window()
    server.enqueue(Reply(text="First answer."))
    type_and_send(qtbot, window, "hello")
    wait_idle(qtbot, window)
    before = sys.getswitchinterval()
    turn_id = window.transcript.message_rows("user")[0].turn_id
    server.enqueue(Reply(text="held open", pause_after_items=1))
    assert window.controller.submit(ops.EditTurn(turn_id=turn_id, text="hello again"))
    qtbot.waitUntil(lambda: len(server.requests_to("responses")) == 2, timeout=5000)
    assert sys.getswitchinterval() == pytest.approx(HANDOVER_S)  # the branch rebuilt in workers
    window.stop()
    wait_idle(qtbot, window)
    assert sys.getswitchinterval() == before
