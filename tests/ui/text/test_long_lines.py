"""Long unbroken lines are shown with break opportunities and in parts laid out on demand,
while the text itself (what is copied, saved and sent) stays exactly as it was. The time they
take is measured in bench/bench_long_lines.py, not here."""

from __future__ import annotations

import random
import re
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from app.demo import Reply
from app.ui.text.long_text import (
    LONG_RUN,
    MAX_SEGMENT_CHARS,
    SEGMENT_CHARS,
    ZWSP,
    break_runs,
    break_runs_html,
    display_cuts,
    segment_source,
    segment_text,
    strip_breaks,
)

from ..conftest import run
from ..helpers import RemeasureLog, wait_idle


def unbroken(chars: int, alphabet: str = "abcdefghijklmnopqrstuvwxyz0123456789/.:") -> str:
    """``chars`` characters without whitespace (nor Markdown syntax, so it shows as is)."""
    rng = random.Random(chars)
    return "".join(rng.choices(alphabet, k=chars))


def longest_run(shown: str) -> int:
    """The longest stretch a line cannot be broken in (no whitespace, no ZWSP)."""
    return max((len(run) for run in re.split(rf"[\s{ZWSP}]+", shown)), default=0)


def parts_of(row: Any) -> list[Any]:
    return [row, *row.segments]


def check_display(row: Any, original: str) -> None:
    """Every part shows breakable text, and the parts together are the original text."""
    assert row.text == original  # the message itself is never changed
    assert row.segments, "a long message is shown in parts"
    shown = [part.body.toPlainText() for part in parts_of(row)]
    assert all(ZWSP in text for text in shown if len(text) > LONG_RUN)
    assert max(longest_run(text) for text in shown) <= LONG_RUN
    assert strip_breaks("".join(shown)) == original


def test_a_long_unbroken_reply_is_shown_breakable_and_copied_unchanged(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    line = unbroken(3 * SEGMENT_CHARS + 500)  # one line: cut every SEGMENT_CHARS
    server.enqueue(Reply(text=line, chunk_size=4096))
    window.send_message("one long line please")
    wait_idle(qtbot, window)

    row = window.transcript.message_rows("assistant")[-1]
    check_display(row, line)
    assert len(row.segments) == 3
    assert all(part.joined for part in row.segments)  # one message, no gaps between parts
    # The copy button copies the text itself.
    clipboard = QGuiApplication.clipboard()
    qtbot.mouseClick(row.copy_button, Qt.MouseButton.LeftButton)
    assert clipboard.text() == line
    # So does selecting a part and copying it (the break opportunities are display only).
    part = row.segments[1]
    part.body.selectAll()
    part.body.copy()
    assert clipboard.text() == part.shown_text
    assert ZWSP not in clipboard.text()
    # What the session saved is the text as received.
    saved = window.session.transcript()[-1]["item"]["content"][0]["text"]
    assert saved == line


def test_a_long_hex_user_message_is_split_for_display_and_reopens_lazily(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    message = unbroken(12 * SEGMENT_CHARS + 1, alphabet="0123456789abcdef")
    server.enqueue(Reply(text="Noted."))
    window.send_message(message)
    wait_idle(qtbot, window)
    row = window.transcript.message_rows("user")[-1]
    assert [r.text for r in window.transcript.message_rows()] == [message, "Noted."]
    assert len(row.segments) == 12
    assert server.requests_to("responses")[-1].body["input"][-1]["content"][0]["text"] == message

    session_id = window.session.id
    run(qtbot, window.open_session(None))
    run(qtbot, window.open_session(session_id))
    row = window.transcript.message_rows("user")[-1]
    assert row.text == message and len(row.segments) == 12
    # Only the parts on screen were given widgets (and so laid out) when it reopened.
    with_widgets = [part for part in parts_of(row) if part._widget is not None]
    assert 0 < len(with_widgets) < len(parts_of(row))
    check_display(row, message)


def test_a_long_user_message_arriving_again_unchanged_is_not_laid_out_again(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    # The core sends a user message twice (item_started, then item_completed); laying the
    # parts on screen out again for the second, same text was a third of the longest block
    # after sending 128 KB of hex.
    window = make_window()
    message = unbroken(6 * SEGMENT_CHARS + 1, alphabet="0123456789abcdef")
    log = RemeasureLog(
        window, lambda event: f"{event.type}:{getattr(getattr(event, 'item', None), 'kind', '')}"
    )
    server.enqueue(Reply(text="Noted."))
    window.send_message(message)
    wait_idle(qtbot, window)
    assert log.while_drawing(log.events.index("item_completed:user_message")) == 0
    row = window.transcript.message_rows("user")[-1]
    assert row.text == message and len(row.segments) == 6
    check_display(row, message)


def test_break_opportunities_leave_short_runs_tags_and_entities_alone() -> None:
    assert break_runs("a short line with https://example.com/a") == (
        "a short line with https://example.com/a"
    )
    long_run = "x" * (LONG_RUN + 30)
    assert longest_run(break_runs(long_run)) <= LONG_RUN
    html = f'<p><a href="https://e.com/{long_run}">{long_run}</a> &amp;{long_run}</p>'
    broken = break_runs_html(html)
    assert strip_breaks(broken) == html
    assert f'href="https://e.com/{long_run}"' in broken  # attributes untouched
    assert "&amp;" in broken
    # A run goes on across inline tags (highlighted code is many small spans).
    spans = "<pre>" + "<span>abcd</span>" * 40 + "</pre>"
    assert ZWSP in break_runs_html(spans)


def test_display_cuts_do_not_move_while_a_text_streams_and_keep_code_fenced() -> None:
    code = "\n".join(f"line_{i} = {i}" for i in range(2000))  # longer than a segment holds
    short_code = "\n".join(f"x_{i} = {i}" for i in range(300))  # longer than SEGMENT_CHARS
    paragraphs = "\n\n".join(f"Paragraph {i}: " + "word " * 40 for i in range(60))
    text = (
        "Intro.\n\n" + unbroken(2 * SEGMENT_CHARS) + "\n\n```python\n" + code + "\n```\n\n"
        + paragraphs + "\n\n```\n" + short_code + "\n```\n\nEnd."
    )
    cuts = display_cuts(text)
    known: list[Any] = []
    for end in range(0, len(text) + 997, 997):
        known = display_cuts(text[:end], known=known)
    assert known == cuts
    parts = [segment_text(text, cuts, i) for i in range(len(cuts) + 1)]
    assert "".join(parts) == text
    assert all(len(part) <= MAX_SEGMENT_CHARS for part in parts)
    # Between blocks, parts hold about SEGMENT_CHARS; a code block that fits in a part stays
    # whole (one box, one copy link), and so does a long paragraph.
    assert any(part.startswith("```\nx_0 = 0") and "x_299 = 299\n```" in part for part in parts)
    assert any(part.startswith("Paragraph") and len(part) <= SEGMENT_CHARS for part in parts)
    assert unbroken(2 * SEGMENT_CHARS) in parts[0]
    # A part that starts or ends inside the code block renders it as a code block.
    inside = [i for i, cut in enumerate(cuts, start=1) if cut.fence]
    assert inside
    for number in inside:
        source = segment_source(text, cuts, number)
        assert source.startswith("```python\n")
        assert source.count("```") == 2


def test_a_pasted_unbroken_line_wraps_anywhere_in_the_composer_and_is_sent_unchanged(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    from PySide6.QtGui import QTextOption

    from app.ui.composer.edit import LONG_RUN_CHARS

    window = make_window()
    edit = window.composer.edit
    word_wrap = edit.wordWrapMode()
    pasted = unbroken(4 * LONG_RUN_CHARS, alphabet="0123456789abcdef")
    QGuiApplication.clipboard().setText(pasted)
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    assert window.composer.text() == pasted
    # Word-boundary wrapping of such a run is what froze the window; it wraps anywhere.
    assert edit.wordWrapMode() == QTextOption.WrapMode.WrapAnywhere
    server.enqueue(Reply(text="Got it."))
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    wait_idle(qtbot, window)
    assert window.transcript.message_rows("user")[-1].text == pasted
    assert edit.wordWrapMode() == word_wrap  # ordinary typing wraps at words again


def test_a_reopened_long_message_has_one_part_laid_out_in_the_replay_the_rest_later(
    qtbot: Any, make_window: Any, server: Any, monkeypatch: Any
) -> None:
    """The replay ends in one layout pass, which lays out one long part (a second pass, to
    scroll to the end, laid out a second one in the same block) and the short ones below it
    (the message's last part, the answer); the parts still on screen follow in later passes,
    and the view ends at the bottom."""
    window = make_window()
    message = unbroken(12 * SEGMENT_CHARS + 1, alphabet="0123456789abcdef")
    server.enqueue(Reply(text="Noted."))
    window.send_message(message)
    wait_idle(qtbot, window)
    session_id = window.session.id
    run(qtbot, window.open_session(None))

    transcript = window.transcript
    built: list[Any] = []
    in_replay: list[int] = []
    create, finish = transcript.create_row_widget, transcript.finish_replay
    monkeypatch.setattr(transcript, "create_row_widget", lambda row: (built.append(row), create(row))[1])
    # The replay's layout is its second step (``replay_in_steps``).
    monkeypatch.setattr(transcript, "finish_replay", lambda: (finish(), in_replay.append(len(built))))
    run(qtbot, window.open_session(session_id))
    row = transcript.message_rows("user")[-1]
    parts_built = [part for part in built[: in_replay[0]] if part in parts_of(row)]
    assert len([part for part in parts_built if len(part.shown_text) >= SEGMENT_CHARS]) == 1
    bar = transcript.verticalScrollBar()
    qtbot.waitUntil(lambda: not transcript._deferred, timeout=5000)
    assert len([part for part in built if part in parts_of(row)]) > 1  # the others followed
    assert bar.value() == bar.maximum()
