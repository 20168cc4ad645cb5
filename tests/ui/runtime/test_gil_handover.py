"""While a session opens or a turn runs, worker threads hand the interpreter back to the
window's thread within a millisecond (the switch interval), and the interval is restored
afterwards."""

from __future__ import annotations

import sys
from collections.abc import Callable
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


def interval_while_held(
    qtbot: Any, window: Any, server: Any, start: Callable[[], Any], started: Callable[[], bool]
) -> float:
    """The switch interval while the work ``start`` begins is held open by the server (its
    answer paused until Stop); the work is then stopped and the window left idle."""
    server.enqueue(Reply(text="held open", pause_after_items=1))
    start()
    qtbot.waitUntil(started, timeout=5000)
    during = sys.getswitchinterval()
    window.stop()
    wait_idle(qtbot, window)
    return during


def chatted(qtbot: Any, make_window: Any, server: Any) -> Any:
    """A window whose session holds one short exchange, idle."""
    window = make_window()
    server.enqueue(Reply(text="First answer."))
    type_and_send(qtbot, window, "hello")
    wait_idle(qtbot, window)
    return window


def test_a_tool_calls_turn_runs_with_the_short_interval_a_plain_answer_without(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    before = sys.getswitchinterval()
    # A plain answer: the window's drawing is the work, the interval stays as it was.
    assert interval_while_held(
        qtbot, window, server, lambda: type_and_send(qtbot, window, "hello"),
        lambda: bool(assistant_texts(window)),
    ) == before
    # A tool's output is parsed, saved and indexed in workers: short from the call on.
    server.enqueue(Reply(function_calls=[ToolCall("recall", {"query": "hello"}, "c1")]))
    assert interval_while_held(
        qtbot, window, server, lambda: type_and_send(qtbot, window, "what did I say?"),
        lambda: len(assistant_texts(window)) == 2,
    ) == pytest.approx(HANDOVER_S)
    assert sys.getswitchinterval() == before


def test_a_compaction_asked_for_runs_with_the_short_interval_too(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = chatted(qtbot, make_window, server)
    before = sys.getswitchinterval()
    # The summary's request held open.
    assert interval_while_held(
        qtbot, window, server, lambda: window.compact(),
        lambda: window.controller.state.compacting
        and len(server.requests_to("responses")) == 2,
    ) == pytest.approx(HANDOVER_S)
    assert sys.getswitchinterval() == before


def test_an_edit_runs_with_the_short_interval_until_its_turn_ends(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    from app.core import ops

    window = chatted(qtbot, make_window, server)
    before = sys.getswitchinterval()
    turn_id = window.transcript.message_rows("user")[0].turn_id
    # The branch is rebuilt in workers, then its turn runs.
    assert interval_while_held(
        qtbot, window, server,
        lambda: window.controller.submit(ops.EditTurn(turn_id=turn_id, text="hello again")),
        lambda: len(server.requests_to("responses")) == 2,
    ) == pytest.approx(HANDOVER_S)
    assert sys.getswitchinterval() == before


def test_a_fork_gives_the_interval_back_once_written(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = chatted(qtbot, make_window, server)
    before = sys.getswitchinterval()
    source = window.session.id
    # Until the fork is open: the opening holds a quick hand-over of its own until it ends
    # (the session is set before its conversation is drawn).
    with qtbot.waitSignal(window.controller.session_opened, timeout=5000,
                          check_params_cb=lambda opened: opened != source):
        assert window.controller.branches.fork_last()
    wait_idle(qtbot, window)
    assert sys.getswitchinterval() == before
