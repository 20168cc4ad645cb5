"""The session list's forks grouped under the conversation they came from."""

from __future__ import annotations

from app.core.sessions.library import SessionInfo
from app.ui.sessions.fork_groups import FORK_MARK, grouped, indented


def info(session_id: str, forked_from: str = "") -> SessionInfo:
    return SessionInfo(
        id=session_id, title=session_id.upper(), created_at="2026-01-01T00:00:00+00:00",
        updated_at="2026-01-01T00:00:00+00:00", forked_from=forked_from,
    )


def order(infos: list[SessionInfo]) -> list[tuple[str, int]]:
    return [(i.id, depth) for i, depth in grouped(infos)]


def test_a_fork_is_listed_under_its_source_and_a_fork_of_a_fork_under_it() -> None:
    # Newest first, as the list reads them: the forks are newer than their source.
    infos = [info("f2", "a"), info("b"), info("ff", "f1"), info("f1", "a"), info("a")]
    assert order(infos) == [("b", 0), ("a", 0), ("f2", 1), ("f1", 1), ("ff", 2)]


def test_a_fork_whose_source_is_not_listed_keeps_its_place() -> None:
    assert order([info("f", "gone"), info("a")]) == [("f", 0), ("a", 0)]


def test_forks_of_each_other_in_a_damaged_index_are_each_listed_once() -> None:
    assert sorted(order([info("x", "y"), info("y", "x"), info("a")])) == [
        ("a", 0), ("x", 0), ("y", 0)
    ]


def test_a_fork_is_marked_and_indented_by_depth() -> None:
    assert indented("Plan", 0) == "Plan"
    assert indented("Plan", 1) == f"{FORK_MARK}Plan"
    assert indented("Plan", 2) == f"    {FORK_MARK}Plan"
