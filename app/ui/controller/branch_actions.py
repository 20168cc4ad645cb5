"""What the user asks of the conversation as a tree, turned into ops: edit a message,
regenerate an answer, switch to another version, fork into a new conversation (``/fork`` at
the last turn). No widget code.

The core refuses each in words while a turn runs, for an unknown turn or a read-only session;
the window says it sooner, next to the composer, while a reply is streaming. A fork that was
written (``session_forked``) is opened at once, as a new conversation would be.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from app.core import Session
    from app.core import protocol as p

BRANCH_BUSY_HINT = "Wait for the reply to finish first: then edit, regenerate, switch or fork."
NOTHING_TO_FORK = "There is nothing to fork yet: send a message first."


class Controller(Protocol):
    """What the branch actions use of the ``SessionController``."""

    session: Session | None
    hint: Any  # a Qt signal: why a request was refused, next to the composer

    @property
    def busy(self) -> bool: ...

    def submit(self, op: p.Op) -> bool: ...

    def expect_turn(self) -> None: ...


class BranchActions:
    """The tree's ops for the controller's open session."""

    def __init__(self, controller: Controller) -> None:
        self._controller = controller

    def submit(self, op: p.Op) -> bool:
        """Submit a branch op (edit, regenerate, switch, fork) unless a turn runs (then say
        why); an edit or a regeneration starts a turn, which the composer waits for."""
        controller = self._controller
        if controller.busy:
            controller.hint.emit(BRANCH_BUSY_HINT)
            return False
        if not controller.submit(op):
            return False
        if op.op in ("edit_turn", "regenerate_turn"):
            controller.expect_turn()
        return True

    def fork_last(self) -> bool:
        """``/fork``: a new conversation holding this one up to its last turn."""
        session = self._controller.session
        last = session.tree().active if session is not None else None
        if not last:
            self._controller.hint.emit(NOTHING_TO_FORK)
            return False
        from app.core import ops

        return self.submit(ops.ForkSession(turn_id=last))
