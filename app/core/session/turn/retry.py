"""Running a failed turn again: the offer (when its message was recorded and is still the last
one the model would see), the refusal in words, and the op that re-runs it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ... import protocol as p
from ...compaction.rebuild import real_user_messages

if TYPE_CHECKING:
    from ...conversation.history import ContextHistory


class TurnRetry:
    """The one failed turn that may be sent again, if any."""

    def __init__(self, history: ContextHistory, emit: Callable[[p.Event], None]) -> None:
        self._history = history
        self._emit = emit
        # The last turn, when it failed after its message was recorded: (turn id, message).
        self.point: tuple[str, str] | None = None
        self._op: p.UserTurn | None = None  # the turn that runs the failed one again

    def refusal(self) -> str:
        """Why ``RetryTurn`` would do nothing now ("" when it would run the failed turn)."""
        if self.point is None:
            return "There is no failed message to send again."
        users = real_user_messages(self._history.raw_items())
        if not users or users[-1] != self.point[1]:
            return "The failed message is no longer the last one in the conversation."
        return ""

    def offer(self, turn_id: str, text: str) -> None:
        """The turn failed with its message recorded: offer to run it again, when the message
        is still the last one the model would see."""
        self.point = (turn_id, text)
        refusal = self.refusal()
        if refusal:
            self.forget(refusal)
        else:
            self._emit(p.RetryAvailable(turn_id=turn_id))

    def offer_again(self) -> None:
        """A failed message survives a compaction that kept it: offered again (or withdrawn)."""
        if self.point is not None:
            self.offer(*self.point)

    def forget(self, reason: str | None = None) -> None:
        """A turn starts: the failed turn can no longer be retried."""
        if self.point is not None:
            self.point = None
            self._emit(p.RetryAvailable(turn_id=None, reason=reason or "A newer turn started."))

    def request(self, busy: bool) -> p.UserTurn | None:
        """``RetryTurn``: the turn to run (its message already recorded), or None when the
        refusal was said."""
        if busy:
            self._emit(
                p.Error(message="Wait for the current turn to finish before retrying.",
                        kind="invalid_op")
            )
            return None
        refusal = self.refusal()
        if refusal or self.point is None:
            self._emit(p.Error(message=refusal, kind="invalid_op"))
            self.forget(refusal)
            return None
        # The same turn runner, told by this very op that the message is already recorded.
        self._op = p.UserTurn(text=self.point[1])
        return self._op

    def is_retry(self, op: p.UserTurn) -> bool:
        """Whether ``op`` is the re-run of the failed turn (not a new message)."""
        return op is self._op
