"""The conversation's tree read from rollout records: parents, the active branch, anchors and
the records of a branch's view."""

from __future__ import annotations

from typing import Any, NamedTuple

from app.core.conversation.tree import TurnTree, on_path_of


class Rec(NamedTuple):
    type: str
    payload: dict[str, Any]


def turn(turn_id: str, **fields: Any) -> Rec:
    return Rec("turn_context", {"turn_id": turn_id, **fields})


def user(turn_id: str, text: str) -> Rec:
    item = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
    return Rec("response_item", {"turn_id": turn_id, "item": item})


def switch(turn_id: str | None) -> Rec:
    return Rec("branch_switched", {"turn_id": turn_id})


META = Rec("session_meta", {"id": "s"})


def read_tree(records: list[Rec]) -> TurnTree:
    """The tree a session notes as it reads these records."""
    tree = TurnTree()
    for record in records:
        tree.note(record.type, record.payload)
    return tree


def records_on_path(records: list[Rec], tree: TurnTree, leaf: str | None) -> list[Rec]:
    """The records of ``leaf``'s view, as resume, a switch and a fork choose them."""
    keep = on_path_of(tree, leaf)
    return [record for seq, record in enumerate(records) if keep(seq, record)]


def test_a_rollout_written_before_branches_reads_as_one_branch() -> None:
    records = [META, turn("a"), user("a", "one"), turn("b"), user("b", "two"), turn("c")]
    tree = read_tree(records)
    assert tree.parents == {"a": None, "b": "a", "c": "b"}
    assert tree.active == "c" and tree.path() == ["a", "b", "c"]
    assert records_on_path(records, tree, tree.active) == records
    assert tree.anchors == [None, "a", "a", "b", "b", "c"]


def test_records_belong_to_the_newest_turn_of_the_branch_active_when_written() -> None:
    records = [
        META, turn("a", parent=None), user("a", "one"),
        turn("b", parent="a"), user("b", "two"),
        turn("b2", parent="a", branch_reason="edit"), user("b2", "two, edited"),
        Rec("pin", {"key": "k"}),  # made on b2's branch
        switch("b"),
        Rec("pin", {"key": "other"}),  # made on b's branch
        Rec("session_title", {"title": "t"}),  # the whole session's
    ]
    tree = read_tree(records)
    assert tree.active == "b" and tree.siblings("b2") == ["b", "b2"]
    assert tree.reasons == {"b2": "edit"}
    on_b = [r.payload.get("key") or r.payload.get("title") or r.type for r in
            records_on_path(records, tree, "b") if r.type != "response_item"]
    assert on_b == ["session_meta", "turn_context", "turn_context", "other", "t"]
    texts = [r.payload["item"]["content"][0]["text"] for r in records_on_path(records, tree, "b2")
             if r.type == "response_item"]
    assert texts == ["one", "two, edited"]
    # Before the first turn: only what belongs to the whole session.
    assert records_on_path(records, tree, None) == [META, records[-1]]


def test_the_active_path_decides_which_record_numbers_are_in_view() -> None:
    tree = read_tree([META, turn("a", parent=None), turn("b", parent="a"),
                      turn("c", parent="a"), Rec("event", {})])
    assert [tree.record_on_active_path(n) for n in range(5)] == [True, True, False, True, True]
    assert tree.anchor_of(2) == "b" and tree.anchor_of(4) == "c"
    assert tree.record_on_active_path(5)  # written after the tree was read: the active branch
    tree.note("branch_switched", {"turn_id": "b"})
    assert [tree.record_on_active_path(n) for n in range(5)] == [True, True, True, False, False]


def test_switching_to_a_turn_goes_to_the_newest_turn_of_its_branches() -> None:
    tree = TurnTree()
    for turn_id, parent in (("a", None), ("b", "a"), ("c", "b"), ("d", "a"), ("e", "b")):
        tree.add_turn(turn_id, parent)
    assert tree.newest_leaf("a") == "e"  # made last, under a
    assert tree.newest_leaf("c") == "c"
    assert tree.newest_leaf("d") == "d"
    assert tree.branch_points() == ["b", "e"]  # the active path: a, b, e
    tree.note("branch_switched", {"turn_id": "c"})  # a, b, c: b forked after a did
    assert tree.branch_points() == ["b", "c"]
    tree.note("branch_switched", {"turn_id": "d"})
    assert tree.branch_points() == ["d"]


def test_labels_and_compactions_are_noted_per_turn() -> None:
    tree = read_tree([
        turn("a", parent=None),
        user("a", "<environment_context>...</environment_context>"),
        user("a", "  a   first\nquestion " + "x" * 200),
        Rec("compacted", {}), Rec("compacted", {}),
    ])
    assert tree.labels["a"].startswith("a first question x") and len(tree.labels["a"]) == 80
    assert tree.compactions == {"a": 2}


def test_a_turn_naming_an_unknown_parent_starts_at_the_root() -> None:
    tree = read_tree([turn("a", parent=None), turn("b", parent="gone")])
    assert tree.parents["b"] is None and tree.path() == ["b"]


def test_adopt_takes_another_tree_whole() -> None:
    tree, other = TurnTree(), read_tree([turn("a", parent=None), turn("b", parent="a")])
    tree.add_turn("x", None)
    tree.adopt(other)
    assert tree.active == "b" and tree.path() == ["a", "b"] and "x" not in tree


def test_each_record_has_its_line_read_back_or_written_after_the_last() -> None:
    tree = TurnTree()
    tree.note(META.type, META.payload, 1)
    tree.note("turn_context", {"turn_id": "a"}, 3)  # line 2: blank, or a bad line
    tree.note("response_item", user("a", "one").payload, 4)
    tree.read_to(6)  # two lines more that hold no record
    tree.note("turn_context", {"turn_id": "b", "parent": "a"})  # written now
    tree.note("response_item", user("b", "two").payload)
    assert list(tree.lines) == [1, 3, 4, 7, 8]
    assert tree.lines_at([1, 3, 4]) == ([3, 7, 8], 8)
    other = TurnTree()
    other.adopt(tree)
    other.note("branch_switched", {"turn_id": "a"})
    assert other.lines_at([5]) == ([9], 9)


def test_the_records_a_view_reads_are_those_on_its_path_and_those_asked_for() -> None:
    records = [
        META, turn("a", parent=None), user("a", "one"),            # 0 1 2
        turn("b", parent="a"), user("b", "two"),                    # 3 4
        turn("b2", parent="a", branch_reason="edit"), user("b2", "2"),  # 5 6
        switch("b"), Rec("session_title", {"title": "t"}),          # 7 8
    ]
    tree = read_tree(records)
    assert tree.path_records("b") == [0, 1, 2, 3, 4, 7, 8]  # the switch too: left out by type
    assert tree.path_records("b2") == [0, 1, 2, 5, 6, 8]
    assert tree.path_records("a", also="b2") == [0, 1, 2, 5, 6, 8]
    assert tree.path_records(None) == [0, 8]
    keep = on_path_of(tree, "b")
    assert [seq for seq in tree.path_records("b") if keep(seq, records[seq])] == [
        0, 1, 2, 3, 4, 8
    ]
