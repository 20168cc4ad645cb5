"""What a turn that starts a new branch is told: the turn it follows, the turn it replaces and
why, and how its input is put in place once the turn is recorded."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal


@dataclass(frozen=True)
class BranchStart:
    """``parent``: the turn the new branch follows (``None`` at the conversation's start);
    ``source``: the turn it is an edit or a regeneration of (``reason``). ``put_input`` records
    the new turn's input (its message, and what the source turn compacted before its first
    request) under the new turn's id, puts it in the model's view and announces the branch."""

    parent: str | None
    source: str
    reason: Literal["edit", "regenerate"]
    put_input: Callable[[str], None]

    def record(self) -> dict[str, Any]:
        """What the new turn's ``turn_context`` record says of where it comes from."""
        return {"branch_of": self.source, "branch_reason": self.reason}

    def started(self, turn_id: str) -> None:
        self.put_input(turn_id)
