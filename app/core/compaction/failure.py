"""A compaction that ends without compacting: failing fast on a server that cannot be reached,
the words for its failure, and the record that shows it again when the session is reopened.

- **Fail fast.** Against a server that cannot be reached at all (nothing listening, no such
  host, no network), waiting out the retries, then the other remote form, then the local
  fallback (all on the same server) took half a minute and said the same sentence four times.
  A compaction tries once and says it once; the window offers to try again. A timeout is not
  "unreachable" (a slow server may answer the next attempt): it is retried as before.
- **Recorded.** A failed or stopped compaction is an ``event`` record of kind
  ``compaction_ended`` in the rollout (item id, trigger, status, focus): resume replays it as
  the marker the window showed live (``CompactionEnded``), not only the error line beside it.
"""

from __future__ import annotations

from typing import Any, Literal

from .. import protocol as p
from ..conversation.transcript import ENDED_KIND
from ..providers.base import ProviderError
from ..providers.sampling import RetryNotice

Ended = Literal["failed", "stopped"]


def server_unreachable(error: ProviderError) -> bool:
    """The server could not be reached at all (a timeout is not this: it is retried)."""
    return error.category == "connection" and error.code != "timeout"


def fail_fast(notice: RetryNotice) -> RetryNotice:
    """``notice`` for a compaction's retries, except that an unreachable server ends the
    attempt at once (raised before any wait) instead of being retried."""

    def on_retry(attempt: int, most: int, error: ProviderError) -> None:
        if server_unreachable(error):
            raise error
        notice(attempt, most, error)

    return on_retry


def failure_text(error: ProviderError, path: str) -> str:
    """The one sentence a failed compaction says (Codex's words, unless the server could not
    be reached: then the reason in words, which already says what to check)."""
    if server_unreachable(error):
        return f"Could not compact: {error.message}"
    return f"Error running {path} compact task: {error.message}"


def ended_record(item_id: str, trigger: str, status: Ended, focus: str | None) -> dict[str, Any]:
    """The rollout ``event`` payload (and transcript entry) of a compaction that changed
    nothing."""
    record: dict[str, Any] = {
        "kind": ENDED_KIND, "item_id": item_id, "trigger": trigger, "status": status,
    }
    if focus:
        record["focus"] = focus
    return record


def ended_events(entry: dict[str, Any], turn_id: str | None) -> list[p.Event]:
    """The events that draw a recorded ``compaction_ended`` entry: the marker's start, then
    how it ended (the same two events the window got live)."""
    item_id = str(entry.get("item_id") or "")
    trigger = entry.get("trigger")
    if trigger not in ("manual", "auto", "overflow", "server"):
        trigger = "auto"
    status: Ended = "stopped" if entry.get("status") == "stopped" else "failed"
    focus = entry.get("focus")
    return [
        p.ItemStarted(
            turn_id=turn_id or "",
            item=p.TurnItem(id=item_id, kind="context_compaction", data={"trigger": trigger}),
        ),
        p.CompactionEnded(
            turn_id=turn_id, item_id=item_id, status=status,
            focus=focus if isinstance(focus, str) else None,
        ),
    ]
