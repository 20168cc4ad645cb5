"""The events of compaction: its progress, the marker of what one compaction did (the event,
the rollout record and the transcript entry are built from it), its undo, end, and summary edits."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .base import _Event

Trigger = Literal["manual", "auto", "overflow", "server"]
Strategy = Literal["local", "remote", "remote_then_local", "prune"]


class CompactionProgress(_Event):
    """A stage change inside a running compaction, for the status indicator."""

    type: Literal["compaction_progress"] = "compaction_progress"
    turn_id: str
    stage: Literal["remote", "local", "retrying", "trimming", "prune"]
    message: str = ""
    trimmed: int = 0


class CompactionMarker(BaseModel):
    """What one compaction did: the marker the window draws, the figures a ``compacted``
    rollout record keeps and a transcript entry holds. Its fields are named here only; the
    event, the record and the transcript are built from it."""

    model_config = ConfigDict(frozen=True)

    item_id: str
    turn_id: str = ""
    trigger: Trigger = "manual"
    strategy: Strategy = "local"
    tokens_before: int = 0
    tokens_after: int = 0
    duration_ms: int = 0
    kept_user_messages: int = 0
    kept_truncated: bool = False
    trimmed_items: int = 0
    focus: str | None = None
    summary: str = ""
    style: str = "handoff"
    # The most instructions, tools and the compacted history may hold (half the auto-compact
    # limit, less the incoming message); None when the window is unknown.
    target: int | None = None
    # The user's new message, left out of a pre-turn compaction and put back after it: part of
    # ``tokens_after``, not of the compacted history.
    incoming_tokens: int = 0
    freed_share: float = 0.0  # (before - after) / before
    # It freed less than a fifth of the context: shown as a warning, never as a success.
    freed_little: bool = False
    # The model's summary was a fragment even after a retry with more room; with
    # ``kept_previous_summary`` the earlier summary was kept beside it.
    summary_cut_short: bool = False
    kept_previous_summary: bool = False
    # The model's summary was unusable even after a retry: why ("empty": only
    # Coco's wrapper text, "repetition", "echo": the instructions or the prompt given back).
    # It was not installed; with ``kept_previous_summary`` the earlier summary stayed.
    summary_unusable: str | None = None
    pruned_outputs: int = 0  # strategy "prune": how many tool outputs became stubs
    # Strategy "remote" / "remote_then_local": which form the server was asked in ("trigger":
    # a compaction_trigger item on /responses, "standalone": /responses/compact, "server":
    # compaction inside a turn's response); for remote_then_local, the last form tried.
    remote_form: str | None = None
    # What checking the result against the target cut: dropped_messages, truncated_messages,
    # summary_truncated. None when nothing was cut.
    shrunk: dict[str, Any] | None = None
    # The keys of the pinned messages this compaction carried, verbatim, before the summary.
    carried_pins: list[str] = Field(default_factory=list)
    # Which message each of them is, in a few words (``your message “Deploy to…”``).
    carried_pin_names: list[str] = Field(default_factory=list)
    # What the carried-notes block holds after this compaction: the user's facts in
    # their own words (oldest first), the files read or changed ("path (changed)") and the
    # commands run, and how many notes its budget forced out this time.
    carried_notes: list[str] = Field(default_factory=list)
    carried_files: list[str] = Field(default_factory=list)
    carried_commands: list[str] = Field(default_factory=list)
    carried_dropped: int = 0

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> CompactionMarker:
        """The marker a ``compacted`` rollout record (or a transcript entry) holds; fields an
        older record lacks or holds as null take their defaults."""
        fields = {
            key: value
            for key, value in record.items()
            if key in _MARKER_FIELDS and value is not None
        }
        fields["item_id"] = str(record.get("item_id") or "")
        return cls.model_validate(fields)

    def record(self) -> dict[str, Any]:
        """The marker's fields as plain data, for a rollout record or a transcript entry."""
        return self.model_dump()


_MARKER_FIELDS = frozenset(CompactionMarker.model_fields)


class ContextCompacted(CompactionMarker):
    """A compaction finished: its marker (this event is one), whether Undo would undo it now,
    and ``in_view``, the user messages the compacted history still holds verbatim (kept, or put
    back after it), whose rows above the marker are still in the model's view."""

    type: Literal["context_compacted"] = "context_compacted"
    undoable: bool = True
    in_view: list[str] = Field(default_factory=list)

    @classmethod
    def of(
        cls, marker: CompactionMarker, *, undoable: bool, in_view: list[str]
    ) -> ContextCompacted:
        return cls(**marker.record(), undoable=undoable, in_view=in_view)


class CompactionUndone(_Event):
    type: Literal["compaction_undone"] = "compaction_undone"
    item_id: str
    tokens: int


class CompactionEnded(_Event):
    """A compaction ended without changing anything: ``failed`` (its error is said beside it)
    or ``stopped`` by the user; ``focus`` is the one it was asked for (to try it again)."""

    type: Literal["compaction_ended"] = "compaction_ended"
    turn_id: str | None = None
    item_id: str
    status: Literal["failed", "stopped"]
    focus: str | None = None


class UndoAvailable(_Event):
    """Whether ``UndoCompaction`` would do something now: after a turn starts, a compaction,
    an undo or a refusal, and when a session opens. The window shows Undo from this alone."""

    type: Literal["undo_available"] = "undo_available"
    item_id: str | None = None  # the compaction it would undo; None when nothing can be
    reason: str = ""  # why not, in words, when ``item_id`` is None
    # The last compaction (undoable or not) and what its marker says about Undo now: how long
    # it stays available, or why it no longer is ("" when there is nothing to say).
    last_compaction: str | None = None
    note: str = ""


class SummaryEdited(_Event):
    """The summary compaction ``item_id`` left in the model's view is now ``summary``:
    ``edited`` (it differs from what the model wrote), ``undoable`` (``UndoSummaryEdit`` would
    put back the text before the last edit)."""

    type: Literal["summary_edited"] = "summary_edited"
    item_id: str
    summary: str
    edited: bool = True
    undoable: bool = True
    tokens: int = 0
    # The compaction's marker with its figures recomputed for the new summary (live edits).
    marker: CompactionMarker | None = None
