"""The conversation as a tree of turns, read from the rollout and kept in step as it grows.

The rollout stays append-only and the one source of truth. Each ``turn_context`` record names
the turn it follows (``parent``; a record written before branches existed follows the turn
before it in the file), and a ``branch_switched`` record says which branch became active. Every
other record belongs where the conversation stood when it was written: the active branch's
newest turn then, its *anchor*. A branch's view is the records anchored on its path (root to
leaf), in file order, plus the records that belong to the whole session (meta, title, fork).

Anchors follow the file: a turn's records all come before its children's first record, since
a turn is made on the active branch's newest turn or as a new branch, which is then active. So
the records on a path are read in the order they were written, whatever branches lie between.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import Any, Protocol

from ..items import is_injected_text, is_message, message_text

TURN_RECORD = "turn_context"
BRANCH_RECORD = "branch_switched"
# Records about the whole session, in every branch's view.
SESSION_RECORDS = frozenset(("session_meta", "session_title", "session_forked"))
LABEL_CHARS = 80


class Record(Protocol):
    @property
    def type(self) -> str: ...

    @property
    def payload(self) -> dict[str, Any]: ...


class TurnTree:
    """Turns by the turn they follow, the active branch's newest turn, and each record's
    anchor (by the record's place in the rollout, as the recall index numbers them)."""

    def __init__(self) -> None:
        self.parents: dict[str, str | None] = {}
        self.children: dict[str | None, list[str]] = {}
        self.active: str | None = None  # the active branch's newest turn
        self.anchors: list[str | None] = []  # record number -> its anchor (None: session-wide)
        # record number -> its line in the file (1-based): a branch's records are read by line,
        # the others' lines not even parsed (``lines_at``)
        self.lines: array[int] = array("I")  # 4 bytes a record
        self._next_line = 1  # the line the next record written goes to
        self._labels: dict[str, str] = {}  # a turn's message, clipped (see ``labels``)
        # The user-role items of turns not labelled yet: labels are made when first asked for
        # (the tree panel, an export, a fork), not for each of a long session's turns on open.
        self._unlabelled: dict[str, list[Any]] = {}
        self.reasons: dict[str, str] = {}  # "edit" / "regenerate" for a turn that made a branch
        self.compactions: dict[str, int] = {}  # compactions that ran in a turn
        self._path_cache: tuple[str | None, frozenset[str]] | None = None
        self._made: dict[str, int] = {}  # each turn's place in the order turns were made
        self._forked: list[str | None] = []  # the turns (None: the start) with several children

    # ------------------------------------------------------------------ building

    def note(self, kind: str, payload: dict[str, Any], line: int | None = None) -> None:
        """The next record of the rollout (read back from ``line``, or just written: on the
        line after the last)."""
        if line is None:
            line = self._next_line
        self._next_line = line + 1
        self.lines.append(line)
        if kind == "response_item":  # most records: read first, with as little as can be
            active = self.active
            if active is not None and active not in self._labels:
                item = payload.get("item")
                if isinstance(item, dict) and item.get("role") == "user":
                    self._unlabelled.setdefault(active, []).append(item)
            self.anchors.append(active)
            return
        if kind == TURN_RECORD:
            turn_id = str(payload.get("turn_id") or "")
            if turn_id and turn_id not in self.parents:
                parent = payload.get("parent", self.active)  # none named: the turn before
                self.add_turn(turn_id, parent if parent in self.parents else None)
                if reason := payload.get("branch_reason"):
                    self.reasons[turn_id] = str(reason)
            elif turn_id:
                self._activate(turn_id)
        elif kind == "compacted" and self.active is not None:
            self.compactions[self.active] = self.compactions.get(self.active, 0) + 1
        elif kind == BRANCH_RECORD:
            leaf = payload.get("turn_id")
            if leaf in self.parents or leaf is None:
                self._activate(leaf)
        self.anchors.append(None if kind in SESSION_RECORDS else self.active)

    def read_to(self, lines: int) -> None:
        """The file read back held ``lines`` lines (bad and blank ones too): the next record
        written goes after them."""
        self._next_line = lines + 1

    def add_turn(self, turn_id: str, parent: str | None) -> None:
        self.parents[turn_id] = parent
        self._made[turn_id] = len(self._made)
        children = self.children.setdefault(parent, [])
        children.append(turn_id)
        if len(children) == 2:
            self._forked.append(parent)
        self._activate(turn_id)

    @property
    def labels(self) -> dict[str, str]:
        """Each turn's message, clipped: the person's own first message in it (not one Coco
        injected)."""
        if self._unlabelled:
            for turn, items in self._unlabelled.items():
                label = _label_of(items)
                if label is not None:
                    self._labels[turn] = label
            self._unlabelled = {}  # a turn still without one keeps gathering its items
        return self._labels

    def _activate(self, leaf: str | None) -> None:
        self.active = leaf
        self._path_cache = None

    def adopt(self, other: TurnTree) -> None:
        """Take ``other``'s content (read again from the rollout) in one step."""
        self.parents, self.children, self.anchors = other.parents, other.children, other.anchors
        self.lines, self._next_line = other.lines, other._next_line
        self._labels, self._unlabelled = other._labels, other._unlabelled
        self.reasons, self.compactions = other.reasons, other.compactions
        self._made, self._forked = other._made, other._forked
        self._activate(other.active)

    # ------------------------------------------------------------------ reading

    def __contains__(self, turn_id: object) -> bool:
        return turn_id in self.parents

    def __len__(self) -> int:
        return len(self.parents)

    def path(self, leaf: str | None = None) -> list[str]:
        """The turns from the root to ``leaf`` (the active branch's newest turn by default)."""
        turn = self.active if leaf is None else leaf
        path: list[str] = []
        while turn is not None:
            path.append(turn)
            turn = self.parents.get(turn)
        path.reverse()
        return path

    def on_path(self) -> frozenset[str]:
        """The active path's turns, as a set (kept until the active branch changes)."""
        if self._path_cache is None or self._path_cache[0] != self.active:
            self._path_cache = (self.active, frozenset(self.path()))
        return self._path_cache[1]

    def record_on_active_path(self, seq: int) -> bool:
        """True when record ``seq`` is part of the active branch's view."""
        if not 0 <= seq < len(self.anchors):
            return True  # not read yet: written after the tree was (on the active branch)
        anchor = self.anchors[seq]
        return anchor is None or anchor in self.on_path()

    def path_records(self, leaf: str | None, also: str | None = None) -> list[int]:
        """The numbers of the records anchored on ``leaf``'s path or on none (the session's
        own), and those of turn ``also``: what a view or a fork reads (the switches among them
        are left out by their type, see :func:`on_path_of`)."""
        on_path = frozenset(self.path(leaf)) if leaf is not None else frozenset()
        return [
            seq for seq, anchor in enumerate(self.anchors)
            if anchor is None or anchor in on_path or (also is not None and anchor == also)
        ]

    def lines_at(self, seqs: list[int]) -> tuple[list[int], int]:
        """The lines of records ``seqs`` and how many lines the file holds, as far as this
        tree knows it (its records read back and written since)."""
        lines = self.lines
        return [lines[seq] for seq in seqs], self._next_line - 1

    def anchor_of(self, seq: int) -> str | None:
        return self.anchors[seq] if 0 <= seq < len(self.anchors) else self.active

    def siblings(self, turn_id: str) -> list[str]:
        return list(self.children.get(self.parents.get(turn_id), [])) if turn_id in self else []

    def newest_leaf(self, turn_id: str) -> str:
        """The newest turn of the branches that hold ``turn_id``: the last made of its
        descendants (itself when it has none)."""
        newest, stack = turn_id, [turn_id]
        order = {turn: n for n, turn in enumerate(self.parents)}
        while stack:
            turn = stack.pop()
            if order[turn] > order[newest]:
                newest = turn
            stack.extend(self.children.get(turn, ()))
        return newest

    def branch_points(self) -> list[str]:
        """The turns of the active path that have siblings, from its start: found among the
        children of the turns that forked (a few), not by walking a path of thousands."""
        on_path = self.on_path()
        found = [turn for parent in self._forked for turn in self.children[parent]
                 if turn in on_path]
        return sorted(found, key=self._made.__getitem__)  # a turn is made after its parent


def _label_of(items: list[Any]) -> str | None:
    """The label of a turn whose user-role items are ``items``: its first message the person
    wrote, clipped (``None`` when it has none)."""
    for item in items:
        if not is_message(item):
            continue
        whole = message_text(item)
        if is_injected_text(whole):
            continue
        text = " ".join(whole[: LABEL_CHARS * 4].split())  # a huge one clipped first
        return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"
    return None


def on_path_of(tree: TurnTree, leaf: str | None) -> Callable[[int, Record], bool]:
    """Whether record number ``seq`` of the file ``tree`` was noted from belongs to ``leaf``'s
    view (a record beyond those noted was written after: on the active branch)."""
    on_path = frozenset(tree.path(leaf)) if leaf is not None else frozenset()
    anchors = tree.anchors

    def on_path_record(seq: int, record: Record) -> bool:
        anchor = anchors[seq] if seq < len(anchors) else None
        return (anchor is None or anchor in on_path) and record.type != BRANCH_RECORD

    return on_path_record

