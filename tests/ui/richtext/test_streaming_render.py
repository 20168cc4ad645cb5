"""Streaming without re-rendering everything: deltas merged in the bridge, Markdown rendered
incrementally yet exactly as a whole render."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from PySide6.QtGui import QTextDocument

from app.core import protocol as p
from app.ui.controller.bridge import SessionBridge, merge_deltas
from app.ui.richtext.markdown import MarkdownRenderer
from app.ui.richtext.markdown_document import MarkdownDocument
from app.ui.style.theme import colors, pygments_style_name
from app.ui.text.markdown_blocks import closed_end

SAMPLES = [
    "# Title\n\nSome *para* text.\n\n```python\nprint(1)\n\nprint(2)\n```\n\n- a\n- b\n\nEnd.\n",
    "Intro\n\n1. one\n2. two\n\n3. three\n\nafter the list\n",
    "- item\n\n  continued\n\n  ```\n  in the item\n\n  still\n  ```\n\nOutside.\n",
    "| a | b |\n|---|---|\n| 1 | 2 |\nragged row\n\nText after the table.\n",
    "Para\n\n***\n\n> quote\n\n> another\n\n    indented code\n\n    more code\n\nlast",
    "Two blocks:\n\n```sh\nls -la\n```\n\n```python\nprint(2)\n```\n\n~~~\nunclosed fence\n\n",
]


@pytest.fixture
def renderer(qapp: Any) -> MarkdownRenderer:
    return MarkdownRenderer(colors(), pygments_style_name())


def _blocks(doc: QTextDocument) -> list[tuple[Any, ...]]:
    out = []
    block = doc.begin()
    while block.isValid():
        fmt = block.blockFormat()
        listed = block.textList()
        out.append((block.text().rstrip(), fmt.headingLevel(), round(fmt.topMargin()),
                    round(fmt.bottomMargin()), fmt.indent(),
                    listed.format().style() if listed is not None else None))
        block = block.next()
    return out


def _rendered_whole(renderer: MarkdownRenderer, text: str) -> QTextDocument:
    """``text`` rendered whole into one document, laid out 500 pixels wide."""
    whole = QTextDocument()
    whole.setDefaultStyleSheet(renderer.style_sheet())
    whole.setHtml(renderer.render(text).html)
    whole.setTextWidth(500)
    return whole


def _styled(renderer: MarkdownRenderer) -> MarkdownDocument:
    doc = QTextDocument()
    doc.setDefaultStyleSheet(renderer.style_sheet())
    return MarkdownDocument(doc, renderer)


@pytest.mark.parametrize("text", SAMPLES)
def test_markdown_streamed_in_pieces_shows_what_a_whole_render_shows(
    renderer: MarkdownRenderer, text: str
) -> None:
    whole = _rendered_whole(renderer, text)
    for step in (1, 7):
        markdown = _styled(renderer)
        for end in range(step, len(text) + step, step):
            markdown.update(text[:end])
        doc = markdown.document
        doc.setTextWidth(500)
        assert _blocks(doc) == _blocks(whole)
        assert doc.size() == whole.size()
        assert markdown.code_blocks == renderer.render(text).code_blocks


@pytest.mark.parametrize("text", SAMPLES)
def test_a_complete_text_is_rendered_in_one_piece_as_a_whole_render_shows(
    renderer: MarkdownRenderer, text: str
) -> None:
    # A part of a long message that ends at a cut will not grow: one Markdown render (not a
    # closed part and a tail), with the same document, whether it arrives whole or finishes
    # a part that was streaming.
    whole = _rendered_whole(renderer, text)
    at_once = _styled(renderer)
    at_once.update(text, complete=True)
    assert at_once.renders == 1
    streamed = _styled(renderer)
    half = len(text) // 2
    streamed.update(text[:half])
    before = streamed.renders
    streamed.update(text, complete=True)
    assert streamed.renders == before + 1  # what followed the closed part, in one piece
    for markdown in (at_once, streamed):
        markdown.document.setTextWidth(500)
        assert _blocks(markdown.document) == _blocks(whole)
        assert markdown.document.size() == whole.size()
        assert markdown.code_blocks == renderer.render(text).code_blocks


def test_a_complete_text_that_changes_after_all_is_rendered_anew(
    renderer: MarkdownRenderer,
) -> None:
    markdown = MarkdownDocument(QTextDocument(), renderer)
    markdown.update("- one\n- two\n", complete=True)
    markdown.update("- one\n- two\n- three\n")  # the list goes on: not a second list
    assert markdown.document.toPlainText().split() == ["one", "two", "three"]
    whole = MarkdownDocument(QTextDocument(), renderer)
    whole.update("- one\n- two\n- three\n")
    assert _blocks(markdown.document) == _blocks(whole.document)


def test_each_update_renders_only_the_open_end(
    renderer: MarkdownRenderer, monkeypatch: pytest.MonkeyPatch
) -> None:
    paragraphs = [f"Paragraph {i}: " + "words " * 30 + "\n\n" for i in range(200)]
    rendered: list[int] = []
    original = renderer.render
    monkeypatch.setattr(renderer, "render",
                        lambda text, first=0: rendered.append(len(text)) or original(text, first))
    doc = QTextDocument()
    markdown = MarkdownDocument(doc, renderer)
    text = ""
    for paragraph in paragraphs:
        text += paragraph
        markdown.update(text)
    assert doc.toPlainText().count("Paragraph") == 200
    # Never the whole reply again: at most the new paragraph and the open one.
    assert max(rendered) <= 2 * len(paragraphs[-1])


def test_cuts_fall_between_closed_blocks_only() -> None:
    text = "para\n\n```\ncode\n\nmore\n```\n\n- a\n\n- b\n\n    indented\n\nnext\n\nopen"
    cut = closed_end(text)
    # "next" is closed only once the line after it is complete.
    assert text[:cut].endswith("\n\n") and text[cut:] == "next\n\nopen"
    assert closed_end(text + "\n") == len(text) + 1 - len("open\n")
    cuts = {i for i in range(len(text)) if closed_end(text[:i]) == i and i}
    inside_fence = range(text.index("```"), text.index("```\n\n-") + 3)
    assert not cuts & set(inside_fence)
    assert text.index("- b") not in cuts  # would split one list into two
    assert text.index("    indented") not in cuts  # might continue the item above
    assert closed_end("para\n\nno newline yet") == 0  # an unfinished line decides nothing


def _delta(item: str, text: str, turn: str = "t1") -> p.AgentMessageDelta:
    return p.AgentMessageDelta(turn_id=turn, item_id=item, delta=text)


def test_consecutive_deltas_of_one_message_are_merged_in_order() -> None:
    count = p.TokenCount(total=1, context_window=10, auto_compact_limit=9)
    events = [_delta("a", "He"), _delta("a", "llo"), count, _delta("a", " there"),
              _delta("b", "x"), _delta("b", "y")]
    merged = merge_deltas(events)
    assert [(e.type, getattr(e, "delta", None)) for e in merged] == [
        ("agent_message_delta", "Hello"), ("token_count", None),
        ("agent_message_delta", " there"), ("agent_message_delta", "xy"),
    ]
    assert merged[3].item_id == "b"


class _QueuedSession:
    """A session whose events are all queued before anyone reads them."""

    def __init__(self, events: list[Any]) -> None:
        self._events = events

    async def events(self) -> AsyncIterator[Any]:
        for event in self._events:
            yield event


def test_the_bridge_emits_one_signal_for_the_deltas_already_queued(
    qtbot: Any, qloop: asyncio.AbstractEventLoop
) -> None:
    deltas = [_delta("a", f"{i} ") for i in range(500)]
    done = p.TurnComplete(turn_id="t1", kind="regular", status="completed")
    bridge = SessionBridge(_QueuedSession([*deltas, done]))  # type: ignore[arg-type]
    seen: list[Any] = []
    bridge.event_received.connect(seen.append)
    bridge.start()
    qtbot.waitUntil(lambda: not bridge.running, timeout=3000)
    assert [e.type for e in seen] == ["agent_message_delta", "turn_complete"]
    assert seen[0].delta == "".join(d.delta for d in deltas)
    assert bridge.events_seen == 501 and bridge.events_emitted == 2
