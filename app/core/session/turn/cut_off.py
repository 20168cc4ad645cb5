"""A reply cut off by the server: what was shown stays.

When the server dies in the middle of an answer and the reconnect attempts give up, the turn
fails; the text the last attempt had streamed (what the window was showing) is kept in the
transcript, marked cut off, as an ``event`` record of kind :data:`CUT_OFF_KIND`. It is not put
in the model's view: the model never finished it. A retry of the failed turn that answers
replaces it (a second record, ``replaced``); the window removes its row (``ReplyReplaced``).
A reopened session tells the same: the transcript entry replays as the same cut-off item.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ... import protocol as p
from ...conversation.transcript import CUT_OFF_KIND
from ..replay import cut_off_event

if TYPE_CHECKING:
    from ...conversation.transcript import Transcript
    from ...providers.sampling import StreamAttempt


class CutOffReplies:
    """Keeps the replies a failed stream cut off, and drops them when a retry answers."""

    def __init__(
        self,
        *,
        record: Callable[[str, dict[str, Any]], None],
        transcript: Transcript,
        emit: Callable[[p.Event], None],
    ) -> None:
        self._record = record
        self._transcript = transcript
        self._emit = emit

    def keep(self, turn_id: str, attempts: Iterable[StreamAttempt]) -> None:
        """The turn ``turn_id`` failed: keep what the last attempt that streamed text had
        shown (an earlier attempt's text was replaced on screen by the next one's)."""
        shown: dict[str, str] = {}
        for attempt in attempts:
            texts = {key: text for key, text in attempt.partial_text.items() if text.strip()}
            if texts:
                shown = texts
        for item_id, text in shown.items():
            payload = {"kind": CUT_OFF_KIND, "turn_id": turn_id, "item_id": item_id, "text": text}
            self._record("event", payload)
            self._transcript.add_recorded_entry(payload)
            self._emit(cut_off_event(payload))

    def replace(self, turn_id: str) -> None:
        """A retry of ``turn_id`` answered: its cut-off replies go."""
        for entry in self._transcript.drop_entries(CUT_OFF_KIND, turn_id):
            item_id = str(entry.get("item_id", ""))
            self._record(
                "event",
                {"kind": CUT_OFF_KIND, "turn_id": turn_id, "item_id": item_id, "replaced": True},
            )
            self._emit(p.ReplyReplaced(turn_id=turn_id, item_id=item_id))


def restore(transcript: Transcript, payload: dict[str, Any]) -> None:
    """A ``reply_cut_off`` record read back on resume: the entry kept, or dropped again."""
    if payload.get("replaced"):
        transcript.drop_entries(CUT_OFF_KIND, str(payload.get("turn_id", "")))
    else:
        transcript.add_recorded_entry(payload)
