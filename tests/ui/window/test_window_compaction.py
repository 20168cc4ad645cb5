"""Compaction in the real window: the button, /compact, the gauge, the spinner, auto, undo."""

from __future__ import annotations

import traceback
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QGuiApplication

from app.core.compaction.prompts import summary_prefix
from app.core.items import message_text
from app.demo import Fault, Reply
from app.ui.controller.commands import COMPACT_STREAMING_REASON
from app.ui.controller.format import format_tokens

from ..helpers import last_user_text, type_and_send, wait_idle


def after_each_event(window: Any, read: Any, kind: str) -> list[Any]:
    """``read()`` each time the window has handled a core event of type ``kind``."""
    seen: list[Any] = []
    window.bridge.event_received.connect(
        lambda event: seen.append(read()) if event.type == kind else None
    )
    return seen


def chat(qtbot: Any, window: Any, server: Any, text: str, reply: str = "ok", **kw: Any) -> None:
    server.enqueue(Reply(text=reply, **kw))
    type_and_send(qtbot, window, text)
    wait_idle(qtbot, window)


def test_compact_button_submits_compact_and_shows_a_marker_row(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    chat(qtbot, window, server, "first question", "first answer")
    server.enqueue(Reply(text="SUMMARY: the user asked a first question."))
    assert window.compact_button.isEnabled()

    qtbot.mouseClick(window.compact_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, window)

    markers = window.transcript.compaction_rows()
    assert len(markers) == 1
    marker = markers[0]
    assert marker.state == "done"
    assert "manual" in marker.title_label.text()
    assert "→" in marker.figures_label.text()
    body = server.requests_to("responses")[-1].body
    assert "Additional focus" not in last_user_text(body)  # no focus from the button
    # The answer above the marker is dimmed and labelled; the question, kept verbatim, is still
    # what the model sees. The summary is behind the toggle.
    above = window.transcript.rows[: window.transcript.rows.index(marker)]
    question, answer = above
    assert question.in_context and not question.context_tag.isVisibleTo(question.widget)
    assert not answer.in_context and answer.context_tag.isVisibleTo(answer.widget)
    assert not marker.expanded
    qtbot.mouseClick(marker.summary_button, Qt.MouseButton.LeftButton)
    assert marker.expanded
    assert "the user asked a first question" in marker.summary_view.toPlainText()
    # The status bar says what happened.
    assert window.indicator.text().startswith("Context compacted ")
    assert "→" in window.indicator.text()


def test_slash_compact_with_focus_submits_the_focus(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    chat(qtbot, window, server, "we talked about the API names", "noted")
    server.enqueue(Reply(text="summary with focus"))

    type_and_send(qtbot, window, "/compact keep the API names exact")
    wait_idle(qtbot, window)

    assert window.transcript.message_rows("user")[-1].text == "we talked about the API names"
    body = server.requests_to("responses")[-1].body
    assert "keep the API names exact" in last_user_text(body)
    marker = window.transcript.compaction_rows()[0]
    assert marker.state == "done"
    assert "focus: keep the API names exact" in marker.info_label.text()


def test_gauge_shows_context_use_from_token_counts(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()  # context window 100 000, auto-compact at 90 %
    # The session's first token count reaches the window through the bridge, after it opened.
    qtbot.waitUntil(lambda: "auto-compact at 90 %" in window.indicator.text(), timeout=5000)
    chat(qtbot, window, server, "hello", "hi",
         usage={"input_tokens": 40_000, "output_tokens": 1_000, "total_tokens": 41_000})
    assert window.indicator.text() == "41 % of context used · auto-compact at 90 %"
    assert window.indicator.level == "ok"
    chat(qtbot, window, server, "more", "sure",
         usage={"input_tokens": 85_000, "output_tokens": 1_000, "total_tokens": 86_000})
    assert window.indicator.text().startswith("86 % of context used")
    assert window.indicator.level == "near"


class _BarPaints(QObject):
    """The gauge bar's paints: the value painted, and whether the paint ran inside
    ``set_usage`` (a repaint at once, in the block that handled the token count)."""

    def __init__(self) -> None:
        super().__init__()
        self.values: list[int] = []
        self.at_once: list[bool] = []

    def eventFilter(self, watched: Any, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.values.append(watched.value())
            self.at_once.append(any(f.name == "set_usage" for f in traceback.extract_stack()))
        return False


def test_a_gauge_change_is_painted_with_the_next_frame_not_in_the_count_s_block(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    qtbot.waitUntil(lambda: "auto-compact at 90 %" in window.indicator.text(), timeout=5000)
    chat(qtbot, window, server, "hello", "hi",
         usage={"input_tokens": 40_000, "output_tokens": 1_000, "total_tokens": 41_000})
    qtbot.waitUntil(lambda: window.indicator.bar.isVisible(), timeout=5000)
    paints = _BarPaints()
    window.indicator.bar.installEventFilter(paints)
    chat(qtbot, window, server, "more", "sure",
         usage={"input_tokens": 85_000, "output_tokens": 1_000, "total_tokens": 86_000})
    qtbot.waitUntil(lambda: 86 in paints.values, timeout=5000)
    assert not any(paints.at_once)


def test_gauge_marks_an_approximate_count(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    # A chat-completions server that sends no usage leaves the count to an estimate; once it
    # reports usage the count is exact again.
    window = make_window(settings={"wire_api": "chat"})
    server.enqueue(Reply(text="hi", include_usage=False), "chat")
    server.enqueue(Reply(text="sure", usage={"input_tokens": 5_000, "output_tokens": 10,
                                             "total_tokens": 5_010}), "chat")
    # The state after each turn, not the first count seen: a count from the session's opening
    # (the tokenizer becoming ready) may still be on its way when the window is shown.
    type_and_send(qtbot, window, "hello")
    wait_idle(qtbot, window)
    counts = after_each_event(window, window.indicator.text, "token_count")
    after_first = window.indicator.text()
    assert after_first.startswith("≈") and after_first.endswith(" · auto-compact at 90 %")
    type_and_send(qtbot, window, "again")
    wait_idle(qtbot, window)
    assert counts and counts[-1] == "5 % of context used · auto-compact at 90 %"


def test_compact_is_disabled_while_a_reply_streams(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    server.enqueue(Reply(text="word " * 200, chunk_size=5, delay_per_chunk=0.03))
    type_and_send(qtbot, window, "stream a lot")
    qtbot.waitUntil(lambda: window.state.streaming, timeout=5000)
    # The window marks the turn as streaming as soon as the core starts it,
    # which can be before the request reaches the server: wait for it there.
    qtbot.waitUntil(lambda: len(server.requests_to("responses")) == 1, timeout=5000)

    assert not window.compact_action.isEnabled()
    assert window.compact_button.toolTip() == COMPACT_STREAMING_REASON
    requests_before = len(server.requests_to("responses"))
    type_and_send(qtbot, window, "/compact now")
    assert window.composer.hint.isVisible()
    assert window.composer.hint.text() == COMPACT_STREAMING_REASON
    assert window.composer.text() == "/compact now"  # nothing lost
    # The popup says it too.
    window.composer.set_text("/comp")
    assert COMPACT_STREAMING_REASON in window.composer.popup.item(0).text()

    window.stop()
    wait_idle(qtbot, window)
    assert len(server.requests_to("responses")) == requests_before
    assert server.requests_to("compact") == []
    assert window.compact_action.isEnabled()
    assert window.transcript.compaction_rows() == []


def test_automatic_compaction_shows_the_indicator_and_marker_without_a_click(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window(settings={"context_window": 10_000})  # auto-compact at 9 000
    server.enqueue(Reply(text="filled", usage={"input_tokens": 9_400, "output_tokens": 100,
                                               "total_tokens": 9_500}))
    # The turn ended over the limit: it compacts at once, while the person reads and types.
    # The summary request is slow so the spinner can be seen.
    server.enqueue(Reply(text="auto summary", initial_delay=0.6))
    type_and_send(qtbot, window, "fill the context")

    qtbot.waitUntil(lambda: window.indicator.mode == "compacting", timeout=5000)
    # An automatic compaction first looks (in a worker) whether pruning old tool outputs is
    # enough; until it says which path it takes, the indicator says it is compacting.
    qtbot.waitUntil(
        lambda: window.indicator.text().startswith("Auto-compacting · Summarising locally…"),
        timeout=5000,
    )
    assert window.indicator.spinner.spinning
    running = window.transcript.compaction_rows()[0]
    assert running.state == "running"
    # A message sent meanwhile waits behind the compaction, then goes straight to the model.
    server.enqueue(Reply(text="answer after compaction"))
    type_and_send(qtbot, window, "next question")
    qtbot.waitUntil(lambda: len(window.transcript.message_rows("assistant")) == 2, timeout=10_000)
    wait_idle(qtbot, window)

    marker = window.transcript.compaction_rows()[0]
    assert marker.state == "done"
    assert "automatic" in marker.title_label.text()
    bodies = [r.body for r in server.requests_to("responses")]
    assert len(bodies) == 3  # the turn, the compaction, the next turn: no second compaction
    assert last_user_text(bodies[2]) == "next question"
    # The answer that filled the context is out of the model's view; the new question and its
    # answer come after the marker and are in it.
    rows = window.transcript.rows
    user_row = window.transcript.message_rows("user")[-1]
    assert user_row.text == "next question" and user_row.in_context
    answer = window.transcript.message_rows("assistant")[-1]
    assert rows.index(answer) > rows.index(marker) and answer.in_context
    first_answer = window.transcript.message_rows("assistant")[0]
    assert first_answer.text == "filled" and not first_answer.in_context
    assert answer.text == "answer after compaction"


def test_an_automatic_compaction_after_a_turn_can_be_undone_until_the_next_message(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window(settings={"context_window": 10_000})
    server.enqueue(Reply(text="filled", usage={"input_tokens": 9_400, "output_tokens": 100,
                                               "total_tokens": 9_500}))
    server.enqueue(Reply(text="summary"))
    type_and_send(qtbot, window, "fill the context")
    qtbot.waitUntil(lambda: bool(window.transcript.compaction_rows()), timeout=5000)
    marker = window.transcript.compaction_rows()[0]
    qtbot.waitUntil(lambda: marker.state == "done" and not window.busy, timeout=5000)
    assert marker.undo_button.isVisibleTo(marker.widget)


def test_stop_cancels_a_running_compaction(qtbot: Any, make_window: Any, server: Any) -> None:
    window = make_window()
    chat(qtbot, window, server, "something to compact", "fine")
    history_before = window.session.history()
    server.enqueue(Reply(text="slow summary", initial_delay=3.0))
    window.compact()
    qtbot.waitUntil(lambda: window.indicator.mode == "compacting", timeout=5000)
    assert window.indicator.stop_button.isVisible()
    assert window.indicator.text().startswith("Summarising locally…")

    qtbot.mouseClick(window.indicator.stop_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, window, timeout=2000)

    marker = window.transcript.compaction_rows()[0]
    assert marker.state == "stopped"
    assert "nothing changed" in marker.title_label.text()
    assert window.session.history() == history_before
    assert window.indicator.mode == "gauge"
    assert all(r.in_context for r in window.transcript.message_rows())


def test_undo_restores_the_history_and_the_rows(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    chat(qtbot, window, server, "keep me", "kept")
    history_before = window.session.history()
    server.enqueue(Reply(text="short summary"))
    window.compact()
    wait_idle(qtbot, window)
    marker = window.transcript.compaction_rows()[0]
    assert marker.undo_button.isVisibleTo(marker.widget)
    assert window.undo_action.isEnabled()
    assert window.session.history() != history_before

    qtbot.mouseClick(marker.undo_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: marker.state == "undone", timeout=5000)

    assert window.session.history() == history_before
    assert not marker.undo_button.isVisibleTo(marker.widget)
    assert all(r.in_context for r in window.transcript.message_rows())


def test_undo_is_no_longer_offered_once_the_next_turn_starts(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    chat(qtbot, window, server, "one", "two")
    server.enqueue(Reply(text="summary"))
    type_and_send(qtbot, window, "/compact")
    wait_idle(qtbot, window)
    marker = window.transcript.compaction_rows()[0]
    assert marker.undoable
    chat(qtbot, window, server, "three", "four")
    assert not marker.undoable
    assert not marker.undo_button.isVisibleTo(marker.widget)
    assert not window.undo_action.isEnabled()


def test_a_refused_compact_leaves_undo_offered(qtbot: Any, make_window: Any, server: Any) -> None:
    window = make_window()
    chat(qtbot, window, server, "one", "two")
    server.enqueue(Reply(text="summary"))
    type_and_send(qtbot, window, "/compact")
    wait_idle(qtbot, window)
    marker = window.transcript.compaction_rows()[0]
    type_and_send(qtbot, window, "/compact")  # nothing new: refused, as information
    wait_idle(qtbot, window)
    assert marker.undoable and marker.undo_button.isVisibleTo(marker.widget)
    assert window.undo_action.isEnabled()
    requests = len(server.requests)
    type_and_send(qtbot, window, "/undo-compact")
    qtbot.waitUntil(lambda: marker.state == "undone", timeout=5000)
    assert len(server.requests) == requests  # undo asks no model
    assert not window.undo_action.isEnabled()


def test_model_view_shows_the_rewritten_history_with_the_summary_highlighted(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    window.model_view_action.trigger()
    # While a reply is awaited the message just sent is already listed (the reply takes 5 s:
    # the panel must show it well before).
    server.enqueue(Reply(text="late", initial_delay=5.0))
    type_and_send(qtbot, window, "a first try")
    qtbot.waitUntil(lambda: any(r["preview"] == "a first try" for r in window.model_view.rows),
                    timeout=4000)
    window.stop()
    wait_idle(qtbot, window)
    chat(qtbot, window, server, "question one", "answer one")
    assert window.model_view.isVisible()
    kinds = [(r["role"], r["kind"]) for r in window.model_view.rows]
    assert ("user", "message") in kinds and ("assistant", "message") in kinds
    server.enqueue(Reply(text="the summary"))
    window.compact()
    wait_idle(qtbot, window)
    rows = window.model_view.rows
    assert len(rows) == len(window.session.history())
    summaries = [r for r in rows if r["summary"]]
    assert len(summaries) == 1 and summaries[0]["kind"] == "summary"
    assert rows[-1]["summary"]  # the summary is the last item
    assert all(r["tokens"] > 0 for r in rows)
    # Counted by the core, with the gauge's counter, not guessed by the window.
    assert [r["tokens"] for r in rows] == [e.tokens for e in window.session.context_view()]
    assert "1 summary message" in window.model_view.totals.text()
    last = window.session.history()[-1]
    assert message_text(last).startswith(summary_prefix())


def test_indicator_names_each_compaction_stage(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window(settings={"remote_compaction": True})
    chat(qtbot, window, server, "something to compact", "fine")
    shown = after_each_event(
        window,
        lambda: (window.indicator.text(), window.transcript.compaction_rows()[0].figures,
                 window.compact_action.isEnabled()),
        "compaction_progress",
    )
    # Both remote forms are refused, the local summary overflows once and is retried trimmed,
    # then the user stops it while it runs.
    server.enqueue(Fault.status(400, "Invalid value: 'compaction_trigger'."))
    server.enqueue(Fault.status(400, "no remote compaction here"), "compact")
    server.enqueue(Fault.overflow())
    server.enqueue(Reply(text="slow summary", initial_delay=5.0))
    window.compact()
    qtbot.waitUntil(lambda: len(shown) == 4, timeout=5000)
    window.stop()
    wait_idle(qtbot, window)

    stages = [(text.rsplit(" ", 2)[0], figures, enabled) for text, figures, enabled in shown]
    # The stage texts come complete from the core: which remote form, then the local path.
    trigger = "Compacting remotely (compaction trigger)…"
    standalone = "Compacting remotely (/responses/compact)…"
    trimmed = "Making room for the summary (left out 1 older item)…"
    assert stages == [
        (trigger, trigger, False),
        (standalone, standalone, False),
        ("Summarising locally…", "Summarising locally…", False),
        (trimmed, trimmed, False),
    ]
    assert all(text.endswith(" s") for text, _f, _e in shown)  # with the elapsed time
    assert window.indicator.mode == "gauge"
    assert window.transcript.compaction_rows()[0].state == "stopped"
    assert window.compact_action.isEnabled()


def test_a_marker_names_the_remote_form_that_ran(qtbot: Any, make_window: Any, server: Any) -> None:
    window = make_window(settings={"remote_compaction": True})
    chat(qtbot, window, server, "hello there", "hi")
    server.enqueue(Reply(compaction="ENC"))
    type_and_send(qtbot, window, "/compact")
    wait_idle(qtbot, window)
    marker = window.transcript.compaction_rows()[0]
    assert "remote (compaction trigger)" in marker.title_label.text()
    # A two-message chat gains nothing from compacting: the figures say so, not in green.
    assert marker.freed_little and "no room freed" in marker.figures_label.text()
    assert window.indicator.label.styleSheet() != ""  # coloured, as a warning


def test_the_servers_compaction_sits_above_the_answer_it_came_with(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window(
        settings={"remote_compaction": True, "server_side_compaction": True,
                  "context_window": 4096}
    )
    chat(qtbot, window, server, "hello there", "hi")
    chat(qtbot, window, server, "and more", "the answer", compaction="ENC")
    marker = window.transcript.compaction_rows()[0]
    rows = window.transcript.rows
    answer = window.transcript.message_rows("assistant")[-1]
    assert answer.text == "the answer"
    assert rows.index(marker) < rows.index(answer) and answer.in_context
    assert "by the server" in marker.title_label.text()
    assert not any(r.in_context for r in rows[: rows.index(marker)])
    # As a reopened session draws it: the marker before the answer.
    kinds = [e["kind"] for e in window.session.transcript()]
    assert kinds.index("compaction") < len(kinds) - 1


def test_a_message_too_large_for_the_window_comes_back_to_the_composer(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window(settings={"context_window": 4096})
    huge = "paste " * 6000  # far more than a 4k window holds
    window.composer.set_text(huge)
    window.composer.submit()
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: window.composer.text() == huge, timeout=5000)
    notices = [row.message for row in window.transcript.notice_rows("error")]
    assert any("not sent" in n and "4,096" in n for n in notices)
    assert not window.transcript.message_rows("user")  # nothing was added to the conversation
    assert server.requests_to("responses") == []


def test_the_indicator_shows_the_path_the_core_chose_not_the_settings(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window(settings={"remote_compaction": True})
    chat(qtbot, window, server, "something to compact", "fine")
    # The server refuses both remote forms: the core remembers that and compacts locally.
    server.enqueue(Fault.status(400, "Invalid value: 'compaction_trigger'."))
    server.enqueue(Fault.status(404, "Not Found"), "compact")
    server.enqueue(Reply(text="SUMMARY: first."))
    window.compact()
    wait_idle(qtbot, window)
    chat(qtbot, window, server, "more to compact", "fine")
    requests = len(server.requests)

    shown: list[str] = []
    window.bridge.event_received.connect(
        lambda event: shown.append(window.indicator.text())
        if event.type in ("item_started", "compaction_progress") else None
    )
    server.enqueue(Reply(text="SUMMARY: second."))
    window.compact()
    wait_idle(qtbot, window)

    assert len(server.requests) == requests + 1  # no remote attempt this time
    assert shown and not any("remotely" in text for text in shown), shown
    assert any(text.startswith("Summarising locally…") for text in shown), shown


def test_a_long_kept_message_stays_in_view_in_every_part(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    long_question = "\n\n".join(f"Paragraph {n}: " + "words to keep " * 40 for n in range(12))
    QGuiApplication.clipboard().setText(long_question)  # pasted, as such a message is
    window.composer.edit.setFocus()
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    server.enqueue(Reply(text="first answer"))
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return)
    wait_idle(qtbot, window)
    question = window.transcript.message_rows()[0]
    assert question.segments  # drawn in parts
    server.enqueue(Reply(text="SUMMARY: a long question."))
    window.compact()
    wait_idle(qtbot, window)

    marker = window.transcript.compaction_rows()[0]
    above = window.transcript.rows[: window.transcript.rows.index(marker)]
    assert question in above and all(part in above for part in question.segments)
    # Kept verbatim by the compaction: the message and each of its parts are still in view.
    assert window.session.history()[0]["content"][0]["text"] == long_question
    assert question.in_context and all(part.in_context for part in question.segments)
    answer = next(r for r in above if getattr(r, "role", None) == "assistant")
    assert not answer.in_context


def test_the_marker_says_how_long_undo_lasts_and_then_why_it_is_gone(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    chat(qtbot, window, server, "first question", "first answer")
    server.enqueue(Reply(text="SUMMARY"))
    window.compact()
    wait_idle(qtbot, window)
    marker = window.transcript.compaction_rows()[0]
    note = marker.undo_note_label
    assert marker.undo_button.isVisibleTo(marker.widget)
    assert note.isVisibleTo(marker.widget)
    assert note.text() == "Undo stays available until you send your next message."

    chat(qtbot, window, server, "second question", "second answer")
    assert not marker.undo_button.isVisibleTo(marker.widget)
    assert note.isVisibleTo(marker.widget)
    assert note.text().startswith("Undo is no longer available: a message was sent after")


def test_the_undo_note_is_told_again_when_the_session_is_reopened(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    chat(qtbot, window, server, "first question", "first answer")
    server.enqueue(Reply(text="SUMMARY"))
    window.compact()
    wait_idle(qtbot, window)
    chat(qtbot, window, server, "second question", "second answer")
    session_id, before = window.session.id, window.transcript.compaction_rows()[0]
    from ..conftest import run

    assert run(qtbot, window.open_session(None))  # another conversation, then back
    assert run(qtbot, window.open_session(session_id))
    qtbot.waitUntil(lambda: bool(window.transcript.compaction_rows()), timeout=5000)
    marker = window.transcript.compaction_rows()[0]
    assert marker is not before  # drawn again from the reopened session's events
    qtbot.waitUntil(lambda: marker.undo_note != "", timeout=5000)
    assert marker.undo_note.startswith("Undo is no longer available")


def larger_warnings(window: Any) -> list[str]:
    return [r.message for r in window.transcript.notice_rows("warning")
            if "made the context larger" in r.message]


def test_the_larger_context_warning_goes_once_the_compaction_is_undone(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    chat(qtbot, window, server, "hi", "hello")
    summary = " ".join(f"Point {i}: the user said hi, and {i * 7} other words." for i in range(150))
    server.enqueue(Reply(text=summary))  # longer than the short talk it replaces
    window.compact()
    wait_idle(qtbot, window)
    assert len(larger_warnings(window)) == 1
    window.undo_compaction()
    qtbot.waitUntil(lambda: window.transcript.compaction_rows()[0].state == "undone")
    assert larger_warnings(window) == []
    # Reopened, the conversation says the same.
    from ..conftest import run

    session_id = window.session.id
    assert run(qtbot, window.open_session(None))
    assert run(qtbot, window.open_session(session_id))
    qtbot.waitUntil(lambda: bool(window.transcript.compaction_rows()), timeout=5000)
    assert window.transcript.compaction_rows()[0].state == "undone"
    assert larger_warnings(window) == []


def test_the_marker_figures_are_recomputed_after_the_summary_is_edited(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    for n in range(3):
        chat(qtbot, window, server, f"question {n} " + "about the garden " * 30, "ok")
    summary = " ".join(f"Fact {i}: the garden bed {i} needs {i % 5} litres." for i in range(60))
    server.enqueue(Reply(text=summary))
    window.compact()
    wait_idle(qtbot, window)
    marker = window.transcript.compaction_rows()[0]
    figures = marker.figures_label.text()
    marker.request_edit("Garden beds.")  # what the summary editor's Save asks
    qtbot.waitUntil(lambda: marker.edited, timeout=5000)
    assert marker.figures_label.text() != figures
    after = window.session.token_usage().total
    assert f"→ {format_tokens(after)} tokens" in marker.figures_label.text()
