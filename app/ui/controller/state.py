"""What the open session is doing right now, derived from core events (no Qt).

The window asks this object whether a reply is streaming (to gate ``/compact``), whether a
compaction runs (for the status spinner) and what its stage is. It is fed every event in order.
``Controls`` is what the window's controls allow, made from it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from .format import retry_text

if TYPE_CHECKING:
    from app.core import protocol as p


class ActivityState:
    """The running turn and compaction, as the events describe them.

    (A plain class, not a dataclass: it is made before the window's first paint, and creating
    a dataclass compiles its methods, ~0.5 ms each class.)"""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.turn_id: str | None = None
        self.turn_kind: str | None = None
        self.compacting = False
        self.compaction_automatic = False
        self.compaction_item_id: str | None = None
        self.compaction_started = 0.0
        self.stage = "starting"
        self.stage_message = ""
        self.trimmed = 0
        self.last_compacted: tuple[int, int] | None = None  # tokens before, after
        self.last_compacted_at: float | None = None
        self.changes: list[str] = []  # what the last apply() changed
        # The MCP servers' states as last told (the settings page lists them).
        self.mcp_servers: list[p.McpServerInfo] = []

    @property
    def busy(self) -> bool:
        """A turn of any kind is running."""
        return self.turn_id is not None

    @property
    def compacting_on_its_own(self) -> bool:
        """An automatic compaction runs as a task of its own (a turn ended over the limit): a
        message sent meanwhile waits behind it."""
        return self.turn_kind == "compact" and self.compacting and self.compaction_automatic

    @property
    def streaming(self) -> bool:
        """A regular reply is being produced (``/compact`` is refused then)."""
        return self.busy and self.turn_kind == "regular" and not self.compacting

    @property
    def compaction_elapsed(self) -> float:
        return max(0.0, self.clock() - self.compaction_started) if self.compacting else 0.0

    def _start_compaction(self, automatic: bool, item_id: str | None) -> None:
        if self.compacting and item_id and self.compaction_item_id in (None, item_id):
            self.compaction_item_id = item_id
            if automatic and not self.compaction_automatic:
                # A compaction turn the core began on its own (a turn ended over the limit).
                self.compaction_automatic = True
                self.changes.append("compaction_started")
            return
        self.compacting = True
        self.compaction_automatic = automatic
        self.compaction_item_id = item_id
        self.compaction_started = self.clock()
        self.stage = "starting"  # until the core names the path it chose
        self.stage_message = ""
        self.trimmed = 0
        self.changes.append("compaction_started")

    def _end_compaction(self) -> None:
        if self.compacting:
            self.compacting = False
            self.compaction_item_id = None
            self.changes.append("compaction_ended")

    def apply(self, event: p.Event) -> None:
        """Update from one core event; ``changes`` lists what moved."""
        self.changes = []
        if event.type == "turn_started":
            self.turn_id = event.turn_id
            self.turn_kind = event.kind
            self.changes.append("turn_started")
            if event.kind == "compact":
                self._start_compaction(automatic=False, item_id=None)
        elif event.type == "item_started" and event.item.kind == "context_compaction":
            data = event.item.data
            automatic = self.turn_kind != "compact" or data.get("trigger", "manual") != "manual"
            self._start_compaction(automatic=automatic, item_id=event.item.id)
        elif event.type == "compaction_progress":
            if not self.compacting:
                self._start_compaction(automatic=self.turn_kind != "compact", item_id=None)
            self.stage = event.stage
            self.stage_message = event.message
            if event.trimmed:
                self.trimmed = event.trimmed
            self.changes.append("stage")
        elif event.type == "stream_error" and self.compacting:
            self.stage = "retrying"
            self.stage_message = retry_text(event.message, event.attempt, event.max_attempts)
            self.changes.append("stage")
        elif event.type == "context_compacted":
            self.last_compacted = (event.tokens_before, event.tokens_after)
            self.last_compacted_at = self.clock()
            self._end_compaction()
            self.changes.append("compacted")
        elif event.type == "turn_complete":
            self._end_compaction()
            self.turn_id = None
            self.turn_kind = None
            self.changes.append("turn_complete")
        elif event.type == "mcp_servers":
            self.mcp_servers = list(event.servers)
            self.changes.append("mcp_servers")


CONTROL_EVENTS = ("turn_started", "turn_complete", "context_compacted", "compaction_undone",
                   "undo_available")  # the events after which the controls allow other things


class Controls(NamedTuple):
    """What the window's controls allow right now. (A named tuple rather than a frozen
    dataclass: made before the window's first paint, where a dataclass costs compiling its
    methods.)"""

    busy: bool  # a turn runs or was asked for: the composer waits, Stop is offered
    compact_enabled: bool
    compact_reason: str  # why Compact is refused ("" when it is allowed)
    undo_enabled: bool
    send_queued: bool = False  # a message may go, to wait behind what runs (one at a time)
