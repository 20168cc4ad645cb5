"""The conversation tree panel (View → Conversation tree): every turn of every branch, the
branch points and compactions, the active path in bold; a click on another branch's turn
switches to it. And a find match on another branch: the bar says so, choosing it switches
there and shows it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from app.demo import Reply

from ..helpers import type_and_send, wait_idle


def chat(qtbot: Any, window: Any, server: Any, text: str, answer: str) -> None:
    server.enqueue(Reply(text=answer))
    type_and_send(qtbot, window, text)
    wait_idle(qtbot, window)


def texts(window: Any) -> list[str]:
    return [row.text for row in window.transcript.message_rows()]


def drawn(window: Any, count: int) -> bool:
    redraw = window.controller.redraw
    return redraw is not None and redraw.drawn >= count and not redraw.holding


def branched(qtbot: Any, window: Any, server: Any) -> None:
    """A conversation of two turns whose second was edited: two branches, the edit active."""
    chat(qtbot, window, server, "which fruit is red?", "Apples.")
    chat(qtbot, window, server, "what about the orchard plums?", "Purple.")
    row = next(r for r in window.transcript.message_rows("user") if "plums" in r.text)
    qtbot.mouseClick(row.widget.branch.action, Qt.MouseButton.LeftButton)
    box = row.widget.branch.editor.box
    box.selectAll()
    qtbot.keyClicks(box, "which fruit is yellow?")
    server.enqueue(Reply(text="Bananas."))
    qtbot.keyClick(box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: drawn(window, 1), timeout=5000)
    wait_idle(qtbot, window)


def item_texts(panel: Any) -> list[tuple[str, int, bool]]:
    """(text, depth, bold) of every item, in order."""
    found: list[tuple[str, int, bool]] = []

    def walk(item: Any, depth: int) -> None:
        found.append((item.text(0), depth, item.font(0).bold()))
        for n in range(item.childCount()):
            walk(item.child(n), depth + 1)

    for n in range(panel.tree.topLevelItemCount()):
        walk(panel.tree.topLevelItem(n), 0)
    return found


def test_the_tree_panel_shows_the_branches_and_a_click_switches(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    branched(qtbot, window, server)
    window.branch_view.tree_action.trigger()  # View → Conversation tree
    panel = window.branch_view.panel
    qtbot.waitUntil(panel.isVisible, timeout=2000)
    assert item_texts(panel) == [
        ("1. which fruit is red? · ⑂ 2 branches", 0, True),
        ("2. what about the orchard plums?", 1, False),
        ("2. which fruit is yellow?", 1, True),
    ]
    assert "1 branch point" in panel.caption.text()

    old = panel.items[next(t for t, i in panel.items.items() if "plums" in i.text(0))]
    rect = panel.tree.visualItemRect(old)
    qtbot.mouseClick(panel.tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: drawn(window, 2), timeout=5000)
    assert texts(window)[2:] == ["what about the orchard plums?", "Purple."]
    # Redrawn from the core: the other branch is now the bold one.
    qtbot.waitUntil(lambda: item_texts(panel)[1][2], timeout=5000)
    assert [bold for _text, _depth, bold in item_texts(panel)] == [True, True, False]
    # A new turn appears in the tree while it is shown.
    chat(qtbot, window, server, "and cherries?", "Red.")
    qtbot.waitUntil(lambda: len(item_texts(panel)) == 4, timeout=5000)
    assert item_texts(panel)[2] == ("3. and cherries?", 2, True)  # under its branch's first turn


def test_a_find_match_on_another_branch_says_so_and_switches_there(
    qtbot: Any, make_window: Any, server: Any
) -> None:
    window = make_window()
    branched(qtbot, window, server)
    assert "orchard" not in " ".join(texts(window))
    window.find_action.trigger()
    bar = window.find_bar
    qtbot.keyClicks(bar.query, "orchard plums")
    qtbot.keyClick(bar.query, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: bool(bar.matches), timeout=5000)
    assert "on another branch" in bar.status.text()
    qtbot.waitUntil(lambda: drawn(window, 2), timeout=5000)
    assert texts(window)[2:] == ["what about the orchard plums?", "Purple."]


def test_export_writes_the_active_branch_as_markdown_and_the_whole_tree_as_json(
    qtbot: Any, make_window: Any, server: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    window = make_window()
    branched(qtbot, window, server)
    for kind in ("markdown", "json"):
        target = tmp_path / f"out.{'md' if kind == 'markdown' else 'json'}"
        monkeypatch.setattr(window, "choose_export_path", lambda _k, t=target, k=kind: (t, k))
        assert window.export(kind) == target
    markdown = (tmp_path / "out.md").read_text(encoding="utf-8")
    assert "which fruit is yellow?" in markdown and "Bananas." in markdown
    assert "plums" not in markdown and "Purple." not in markdown
    document = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    turns = document["tree"]["turns"]
    assert [t["label"] for t in turns] == [
        "which fruit is red?", "what about the orchard plums?", "which fruit is yellow?",
    ]
    first = turns[0]["turn_id"]
    assert [t["parent"] for t in turns] == [None, first, first]
    assert [t["active"] for t in turns] == [True, False, True]
    assert document["tree"]["active"] == turns[2]["turn_id"]
    # Each turn holds its own items, whole, on every branch (the other branch's answer too).
    said = [
        [(i["role"], i["content"][0]["text"]) for i in t["items"] if i.get("type") == "message"]
        for t in turns
    ]
    assert said[1] == [("user", "what about the orchard plums?"), ("assistant", "Purple.")]
    assert said[2] == [("user", "which fruit is yellow?"), ("assistant", "Bananas.")]
    shown = json.dumps(document["transcript"])
    assert "Bananas." in shown and "Purple." not in shown
