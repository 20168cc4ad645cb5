"""The view of the branch a person just left, kept so that going back to it is immediate.

Going between two versions of a message (``‹ 1/2 ›``, or an edit and back) rebuilt the view
each way from the rollout: on a 5 000-turn session, as long as opening it. The view a branch op
leaves (one: the last left) is kept as it was, and put in place again when its branch becomes
active once more, as long as no record written since belongs to that branch's view. None can
be on a path not active (a record is anchored on the active branch's newest turn), unless it is
the whole session's (a rename): then the view is rebuilt, as before.

A kept view is asleep: its count refiner is closed. Put back, it counts again, takes the exact
counts made meanwhile of the huge texts it holds as estimates, and the instructions in force
(the tools follow when the session attaches its history).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..conversation.tree import TurnTree
    from .parts import BranchParts, Shared


class LeftView:
    """The view of the branch left last, and what the tree held then."""

    def __init__(self, shared: Shared) -> None:
        self._shared = shared
        self._kept: tuple[str | None, BranchParts, int] | None = None

    def keep(self, leaf: str | None, parts: BranchParts) -> None:
        """``parts`` show ``leaf``'s branch, which is being left (the view kept before is let go)."""
        self._kept = (leaf, parts, len(self._shared.tree.anchors))

    def drop(self) -> None:
        self._kept = None

    def take(self, leaf: str | None) -> BranchParts | None:
        """The kept view if it is ``leaf``'s branch's and nothing written since belongs to
        it, else ``None``; either way nothing is kept any more. It is still asleep:
        :meth:`wake` it as it is put in place."""
        kept, self._kept = self._kept, None
        if kept is None or kept[0] != leaf or not _untouched(self._shared.tree, leaf, kept[2]):
            return None
        return kept[1]

    def wake(self, parts: BranchParts) -> None:
        """``parts`` (taken) are the active branch's again: the instructions in force, and
        its refiner counting again with the exact counts made meanwhile."""
        parts.history.set_instructions(self._shared.config().instructions)
        parts.refiner.reopen()


def _untouched(tree: TurnTree, leaf: str | None, seen: int) -> bool:
    """True when no record after the first ``seen`` is in ``leaf``'s branch's view."""
    since = tree.anchors[seen:]
    if not since:
        return True
    on_path = frozenset(tree.path(leaf)) if leaf is not None else frozenset()
    return all(anchor is not None and anchor not in on_path for anchor in since)
