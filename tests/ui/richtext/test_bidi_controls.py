"""Direction controls (right-to-left overrides, isolates, marks) cannot disguise a link or a
file name in a reply: they are shown as visible marks, and a link's target is its tooltip."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QTextDocument

from app.demo import Reply
from app.ui.richtext.markdown import BIDI_CONTROLS, MarkdownRenderer, show_bidi_controls
from app.ui.style.theme import colors

from ..helpers import type_and_send, wait_idle

RLO = "\u202e"


def anchors(document: QTextDocument) -> list[tuple[str, str, str]]:
    """(text, target, tooltip) of every link fragment in ``document``."""
    found: list[tuple[str, str, str]] = []
    block = document.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            fmt = fragment.charFormat()
            if fmt.isAnchor():
                found.append((fragment.text(), fmt.anchorHref(), fmt.toolTip()))
            it += 1
        block = block.next()
    return found


def test_every_direction_control_gets_a_visible_mark() -> None:
    expected = {
        0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069,
        0x200E, 0x200F, 0x061C,
    }
    assert {ord(ch) for ch in BIDI_CONTROLS} == expected
    shown = show_bidi_controls("".join(sorted(BIDI_CONTROLS)))
    assert not set(shown) & BIDI_CONTROLS
    assert show_bidi_controls(f"invoice{RLO}fdp.exe") == "invoice⟨U+202E⟩fdp.exe"
    # Right-to-left text itself is left alone.
    assert show_bidi_controls("שלום مرحبا") == "שלום مرحبا"


def test_link_text_target_and_code_show_the_controls(qapp: Any) -> None:
    renderer = MarkdownRenderer(colors(), "default")
    text = (
        f"Open [invoice{RLO}fdp.exe](https://example.com/a{RLO}b) or `run{RLO}me.sh`.\n\n"
        f"```\nprint('a{RLO}b')\n```\n"
    )
    rendered = renderer.render(text)
    assert RLO not in rendered.html
    document = QTextDocument()
    document.setHtml(rendered.html)
    links = [link for link in anchors(document) if link[1].startswith("https:")]
    assert links == [
        ("invoice⟨U+202E⟩fdp.exe", "https://example.com/a%E2%80%AEb",
         "https://example.com/a⟨U+202E⟩b"),
    ]
    assert "run⟨U+202E⟩me.sh" in document.toPlainText()
    assert "print('a⟨U+202E⟩b')" in document.toPlainText()
    # Copying the code block gives the code exactly as the model wrote it.
    assert rendered.code_blocks == [f"print('a{RLO}b')"]


def test_a_reply_with_an_override_in_a_link_shows_it(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    server.enqueue(Reply(text=f"Here: [report{RLO}fdp.exe](https://example.com/report{RLO}x)"))
    type_and_send(qtbot, window, "where is the report?")
    wait_idle(qtbot, window)
    row = window.transcript.message_rows("assistant")[0]
    assert row.text.count(RLO) == 2  # the reply itself is unchanged
    shown = row.body.document()
    assert "report⟨U+202E⟩fdp.exe" in shown.toPlainText()
    assert RLO not in shown.toPlainText()
    assert [tip for _t, _h, tip in anchors(shown)] == ["https://example.com/report⟨U+202E⟩x"]
