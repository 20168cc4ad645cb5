"""Pure helpers behind the window: formatting, command parsing, export, markdown, state."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from app.core import protocol as p
from app.ui.controller.commands import (
    Command,
    CommandProblem,
    completions,
    parse_command,
    unescape_message,
)
from app.ui.controller.format import (
    compacted_text,
    format_tokens,
    gauge_level,
    gauge_text,
    progress_text,
)
from app.ui.controller.state import ActivityState
from app.ui.sessions.export import transcript_to_json, transcript_to_markdown

# ------------------------------------------------------------------------------- format


def test_token_figures_are_short() -> None:
    assert format_tokens(950) == "950"
    assert format_tokens(1500) == "1.5k"
    assert format_tokens(21_000) == "21k"
    assert format_tokens(182_400) == "182k"
    assert format_tokens(2_300_000) == "2.3M"
    assert compacted_text(182_000, 21_000) == "Context compacted 182k → 21k tokens"


def test_gauge_text_matches_the_spec_and_marks_estimates() -> None:
    assert gauge_text(41_000, 100_000, 90_000, False) == (
        "41 % of context used · auto-compact at 90 %"
    )
    assert gauge_text(41_000, 100_000, 90_000, True).startswith("≈41 %")
    assert gauge_text(41_000, 100_000, None, False, auto_compact=False) == (
        "41 % of context used · auto-compact off"
    )
    assert gauge_text(1_200, None, None, True) == "≈1.2k tokens in context"


def test_gauge_level_colours_near_the_limit() -> None:
    assert gauge_level(10_000, 100_000, 90_000) == "ok"
    assert gauge_level(80_000, 100_000, 90_000) == "near"
    assert gauge_level(90_000, 100_000, 90_000) == "over"


def test_progress_text_names_the_stage_and_elapsed_time() -> None:
    assert progress_text("remote", 2.1) == "Compacting remotely… 2.1 s"
    assert progress_text("local", 4.84) == "Summarising locally… 4.8 s"
    assert progress_text("trimming", 1.0, trimmed=2).startswith("Retrying (trimmed 2 items)…")
    assert progress_text("local", 0.5, automatic=True).startswith("Auto-compacting · ")


# ----------------------------------------------------------------------------- commands


def test_commands_parse_with_arguments_and_refuse_unknown_ones() -> None:
    assert parse_command("/compact") == Command("compact", "")
    assert parse_command("/compact keep the API names") == Command(
        "compact", "keep the API names"
    )
    assert parse_command("/model gpt-5") == Command("model", "gpt-5")
    assert isinstance(parse_command("/model"), CommandProblem)
    assert isinstance(parse_command("/new now"), CommandProblem)
    problem = parse_command("/frob")
    assert isinstance(problem, CommandProblem) and "Unknown command /frob" in problem.hint
    assert parse_command("hello /compact") is None
    assert parse_command("/usr/bin/env is a path") is None
    assert parse_command("//compact is a message") is None
    assert unescape_message("//compact is a message") == "/compact is a message"


def test_completions_filter_by_prefix() -> None:
    assert [c.name for c in completions("/")] == [
        "compact", "new", "undo-compact", "model", "export", "fork"
    ]
    assert [c.name for c in completions("/u")] == ["undo-compact"]
    assert [c.name for c in completions("/f")] == ["fork"]
    assert completions("/zzz") == []


# ------------------------------------------------------------------------------- export

WHEN = datetime(2025, 3, 1, 14, 3, tzinfo=UTC)
ENTRIES: list[dict[str, Any]] = [
    {"kind": "item", "turn_id": "t1", "in_context": False, "interrupted": False,
     "item": {"type": "message", "role": "user",
              "content": [{"type": "input_text", "text": "<environment_context>x"}]}},
    {"kind": "item", "turn_id": "t1", "in_context": False, "interrupted": False,
     "item": {"type": "message", "role": "user",
              "content": [{"type": "input_text", "text": "Show code"}]}},
    {"kind": "item", "turn_id": "t1", "in_context": False, "interrupted": True,
     "item": {"type": "message", "role": "assistant",
              "content": [{"type": "output_text", "text": "```py\nx = 1\n```"}]}},
    {"kind": "item", "turn_id": "t1", "in_context": False, "interrupted": False,
     "item": {"type": "function_call", "name": "read_file",
              "arguments": "{\"path\": \"a.txt\"}", "call_id": "c1"}},
    {"kind": "item", "turn_id": "t1", "in_context": False, "interrupted": False,
     "item": {"type": "function_call_output", "call_id": "c1", "output": "has ``` inside"}},
    {"kind": "compaction", "item_id": "cmp1", "trigger": "manual", "strategy": "remote",
     "tokens_before": 182_000, "tokens_after": 21_000, "duration_ms": 2100, "summary": "",
     "kept_user_messages": 1, "kept_truncated": False, "focus": "names", "undone": False,
     "in_context": False},
    {"kind": "warning", "message": "Heads up", "in_context": True},
]


def test_markdown_export_covers_messages_tools_and_markers() -> None:
    from app.core.session.replay import (
        replay_events,  # what Session.replay_events() gives the window
    )

    undone = {**ENTRIES[5], "item_id": "cmp2", "strategy": "local", "summary": "old", "focus": None,
              "undone": True}
    events = replay_events([*ENTRIES, undone], None)
    text = transcript_to_markdown(events, title="Demo", session_id="s1", model="m",
                                  exported_at=WHEN)
    assert text.startswith("# Demo\n\n_Session s1 · model m · exported 2025-03-01 14:03 UTC_")
    assert "environment_context" not in text
    assert "### You\n\nShow code" in text
    assert "_(interrupted)_" in text
    assert "**Tool call** `read_file`" in text and '"path": "a.txt"' in text
    assert "````\nhas ``` inside\n````" in text  # fence longer than the content's backticks
    assert "**Context compacted** (manual, remote): 182k → 21k tokens in 2.1 s." in text
    assert "Focus: names" in text and "_Summary held by the server._" in text
    assert "> **Warning:** Heads up" in text
    last = text[text.rindex("**Context compacted**"):]
    assert "(manual, local summary)" in last and "_This compaction was undone._" in last
    assert "> old" in last
    assert text.count("_This compaction was undone._") == 1


def test_json_export_keeps_every_entry() -> None:
    document = json.loads(transcript_to_json(ENTRIES, title="Demo", session_id="s1",
                                             exported_at=WHEN))
    assert document["format"] == "coco-session-export"
    assert document["transcript"] == ENTRIES
    assert document["exported_at"] == WHEN.isoformat()


# -------------------------------------------------------------------------------- state


def test_activity_state_tracks_streaming_and_compaction() -> None:
    now = [100.0]
    state = ActivityState(clock=lambda: now[0])
    state.apply(p.TurnStarted(turn_id="t", kind="regular"))
    assert state.streaming and not state.compacting
    state.apply(p.ItemStarted(turn_id="t", item=p.TurnItem(
        id="c", kind="context_compaction", data={"trigger": "auto"})))
    assert state.compacting and state.compaction_automatic and not state.streaming
    now[0] = 102.5
    state.apply(p.CompactionProgress(turn_id="t", stage="trimming", trimmed=2))
    assert (state.stage, state.trimmed, state.compaction_elapsed) == ("trimming", 2, 2.5)
    state.apply(p.ContextCompacted(turn_id="t", item_id="c", trigger="auto", strategy="local",
                                   tokens_before=9, tokens_after=3, duration_ms=1))
    assert not state.compacting and state.streaming
    assert state.last_compacted == (9, 3)
    state.apply(p.TurnComplete(turn_id="t"))
    assert not state.busy


def test_markdown_renderer_escapes_html_and_never_embeds_images() -> None:
    from app.ui.richtext.markdown import MarkdownRenderer
    from app.ui.style.theme import Colors

    c = Colors(*(["#000000"] * 13), dark=False)
    rendered = MarkdownRenderer(c, "default").render(
        "<img src=http://x/y.png><script>alert(1)</script>\n\n![a](http://x/z.png)\n\n"
        "```python\nprint(1)\n```\n"
    )
    assert "<img" not in rendered.html and "<script>" not in rendered.html
    assert "&lt;script&gt;" in rendered.html
    assert '[image: <a href="http://x/z.png">a</a>]' in rendered.html
    assert rendered.code_blocks == ["print(1)"]
    assert 'href="coco-copy:0"' in rendered.html


def test_only_http_links_are_opened() -> None:
    from PySide6.QtCore import QUrl

    from app.ui.style.widgets import is_safe_link

    assert is_safe_link(QUrl("https://example.com/a"))
    assert is_safe_link(QUrl("http://example.com"))
    assert not is_safe_link(QUrl("javascript:alert(1)"))
    assert not is_safe_link(QUrl("file:///etc/passwd"))
    assert not is_safe_link(QUrl("coco-copy:0"))


def test_the_model_line_names_the_demo_only_when_it_runs() -> None:
    from app.ui.controller.format import model_text

    assert model_text("coco-demo", "http://127.0.0.1:5000/v1", demo=True) == (
        "coco-demo · offline demo model"
    )
    # A real server whose model happens to carry the demo's name is named as what it is.
    assert model_text("coco-demo", "http://10.0.0.2:8080/v1") == (
        "coco-demo · http://10.0.0.2:8080/v1"
    )
    assert model_text("gemma-3", "http://127.0.0.1:8080/v1", provider="llama.cpp") == (
        "llama.cpp · gemma-3 · http://127.0.0.1:8080/v1"
    )


def test_the_colours_follow_every_change_of_the_application_palette(qapp: Any) -> None:
    from PySide6.QtGui import QColor, QGuiApplication, QPalette

    from app.ui.style.theme import colors

    before = QGuiApplication.palette()
    try:
        first = colors()
        assert colors() is first  # derived once for a palette
        changed = QPalette(before)
        changed.setColor(QPalette.ColorRole.Base, QColor("#123456"))
        QGuiApplication.setPalette(changed)
        assert colors().base == "#123456"
        changed.setColor(QPalette.ColorRole.Base, QColor("#654321"))  # the same object, edited
        QGuiApplication.setPalette(changed)
        assert colors().base == "#654321"
        assert colors(before) == first  # an explicit palette is honoured
    finally:
        QGuiApplication.setPalette(before)
