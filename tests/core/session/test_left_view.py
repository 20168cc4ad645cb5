"""The view of the branch left last: given back for that branch while nothing written since
belongs to its view, awake (the instructions in force, its refiner counting again)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from app.core.conversation.tree import TurnTree
from app.core.session.left_view import LeftView


class _Parts:
    """A view's parts as far as putting one back touches them."""

    def __init__(self) -> None:
        self.woken: list[str] = []
        self.history = SimpleNamespace(set_instructions=lambda text: self.woken.append(text))
        self.refiner = SimpleNamespace(reopen=lambda: self.woken.append("reopened"))


def _tree() -> TurnTree:
    """t1, then t2 after it; t3 a second branch from t1, active."""
    tree = TurnTree()
    tree.note("session_meta", {"id": "s"})
    for turn, parent in (("t1", None), ("t2", "t1"), ("t3", "t1")):
        tree.note("turn_context", {"turn_id": turn, "parent": parent})
        tree.note("response_item", {"item": {"type": "message", "role": "user"}})
    return tree


@pytest.fixture
def tree() -> TurnTree:
    return _tree()


def _left(tree: TurnTree) -> LeftView:
    shared: Any = SimpleNamespace(tree=tree, config=lambda: SimpleNamespace(instructions="brief"))
    return LeftView(shared)


def test_the_view_left_comes_back_awake_while_only_another_branch_grew(tree: TurnTree) -> None:
    left, parts = _left(tree), _Parts()
    left.keep("t2", parts)  # type: ignore[arg-type]
    tree.note("response_item", {"item": {"type": "message", "role": "assistant"}})  # on t3
    tree.note("turn_context", {"turn_id": "t4", "parent": "t3"})
    assert left.take("t2") is parts and parts.woken == []  # still asleep
    assert left.take("t2") is None  # given back once: nothing is kept any more
    left.wake(parts)  # as it is put in place
    assert parts.woken == ["brief", "reopened"]


def test_nothing_written_since_gives_it_back(tree: TurnTree) -> None:
    left, parts = _left(tree), _Parts()
    left.keep("t2", parts)  # type: ignore[arg-type]
    assert left.take("t2") is parts


def test_another_branch_asked_for_lets_it_go(tree: TurnTree) -> None:
    left, parts = _left(tree), _Parts()
    left.keep("t2", parts)  # type: ignore[arg-type]
    assert left.take("t3") is None
    assert left.take("t2") is None and parts.woken == []


@pytest.mark.parametrize(
    ("kind", "payload"),
    [
        ("session_title", {"title": "renamed"}),  # the whole session's: in every view
        ("branch_switched", {"turn_id": "t1"}),  # then a record anchored on t1, on t2's path
    ],
)
def test_a_record_since_in_its_view_has_it_rebuilt(
    tree: TurnTree, kind: str, payload: dict[str, Any]
) -> None:
    left, parts = _left(tree), _Parts()
    left.keep("t2", parts)  # type: ignore[arg-type]
    tree.note(kind, payload)
    tree.note("response_item", {"item": {"type": "message", "role": "user"}})
    assert left.take("t2") is None and parts.woken == []


def test_a_record_on_the_branch_itself_has_it_rebuilt(tree: TurnTree) -> None:
    left, parts = _left(tree), _Parts()
    tree.note("branch_switched", {"turn_id": "t2"})
    left.keep("t3", parts)  # type: ignore[arg-type]
    tree.note("response_item", {"item": {"type": "message", "role": "user"}})  # on t2
    assert left.take("t3") is not None  # t2 is not on t3's path
    left.keep("t2", parts)  # type: ignore[arg-type]
    tree.note("response_item", {"item": {"type": "message", "role": "user"}})  # on t2 itself
    assert left.take("t2") is None


def test_the_view_before_any_turn_comes_back_while_turns_grew_elsewhere() -> None:
    tree = TurnTree()
    tree.note("session_meta", {"id": "s"})
    left, parts = _left(tree), _Parts()
    left.keep(None, parts)  # type: ignore[arg-type]
    tree.note("turn_context", {"turn_id": "t1", "parent": None})
    assert left.take(None) is parts


def test_a_dropped_view_is_not_given_back(tree: TurnTree) -> None:
    left, parts = _left(tree), _Parts()
    left.keep("t2", parts)  # type: ignore[arg-type]
    left.drop()
    assert left.take("t2") is None
