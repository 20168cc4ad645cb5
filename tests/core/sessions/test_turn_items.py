"""Every turn's items on every branch, read from the rollout with the session's tree (what a
JSON export of the whole tree holds)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.core.conversation.tree import TurnTree
from app.core.rollout.store import read_rollout
from app.core.sessions.turn_items import items_by_turn


def message(role: str, text: str) -> dict[str, Any]:
    return {"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]}


def line(kind: str, payload: dict[str, Any]) -> str:
    return json.dumps({"timestamp": "t", "type": kind, "payload": payload})


def test_each_turn_holds_its_own_items_on_every_branch(tmp_path: Path) -> None:
    environment = message("user", "<environment_context>cwd</environment_context>")
    lines = [
        line("session_meta", {"id": "s"}),
        line("turn_context", {"turn_id": "a"}),
        line("response_item", {"turn_id": "a", "item": environment}),
        line("response_item", {"turn_id": "a", "item": message("user", "q1")}),
        line("response_item", {"turn_id": "a", "item": message("assistant", "A1")}),
        line("turn_context", {"turn_id": "b", "parent": "a"}),
        line("response_item", {"turn_id": "b", "item": message("user", "q2")}),
        line("turn_context", {"turn_id": "c", "parent": "a", "branch_reason": "edit"}),
        line("response_item", {"turn_id": "c", "item": message("user", "q2, edited")}),
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    records, _warnings = read_rollout(path)
    tree = TurnTree()
    for record in records:
        tree.note(record.type, record.payload)
    # A record written after the tree was read: the active turn's.
    with path.open("a", encoding="utf-8") as file:
        file.write(line("response_item", {"turn_id": "c", "item": message("assistant", "A2")}))
        file.write("\n")

    found = items_by_turn(path, tree)

    def texts(turn: str) -> list[str]:
        return [item["content"][0]["text"] for item in found[turn]]

    assert texts("a") == ["q1", "A1"]  # not the environment block Coco adds
    assert texts("b") == ["q2"]  # the branch left behind, whole
    assert texts("c") == ["q2, edited", "A2"]
