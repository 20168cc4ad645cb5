"""The compaction marker's row as a plain object: what a compaction did, in the transcript where
it happened, with no widget code.

``CompactionRow`` holds the marker's state (trigger, strategy, tokens before → after, duration,
the summary, whether Undo, Retry and editing the summary are offered) and the words its figures
and info line are made of; ``compaction_marker`` shows it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ..controller.format import (
    REMOTE_FORM_TEXT,
    STRATEGY_TEXT,
    TRIGGER_TEXT,
    format_duration,
    format_tokens,
)
from .row_models import RowHost, TranscriptRow, text_lines

if TYPE_CHECKING:
    from PySide6.QtWidgets import QLabel, QToolButton

    from app.core.protocol import CompactionMarker

    from ..style.widgets import RichTextView, Spinner
    from .row_layout import TextMetrics
    from .summary_editor import SummaryEditDialog


class CompactionRow(TranscriptRow):
    """The compaction marker: trigger, strategy, tokens before → after, duration, the summary
    (expandable), and Undo while the core still allows it."""

    __slots__ = (
        "automatic", "carried", "dimmed", "edit_undoable", "editable", "edited", "expanded",
        "figures", "figures_tip", "focus", "freed_little", "info", "item_id", "retryable",
        "started", "state", "strategy", "summary", "title", "undo_note", "undoable",
    )

    def __init__(self, host: RowHost, item_id: str, automatic: bool = False) -> None:
        super().__init__(host)
        self.item_id = item_id
        self.state = "running"  # running | done | undone | stopped
        self.automatic = automatic
        self.undoable = False
        self.undo_note = ""  # how long Undo lasts, or why it is gone (the core's words)
        self.retryable = False  # a failed compaction the user can run again (live only)
        self.focus: str | None = None  # the focus it was asked for, to run it again with
        self.freed_little = False
        self.summary = ""
        self.carried = ""  # what the carried notes hold, as Markdown (shown with the summary)
        self.strategy = ""
        self.started = time.monotonic()
        # Rows this marker dimmed, with their state before, so an undo can restore them.
        self.dimmed: list[tuple[TranscriptRow, bool]] = []
        self.title = "Compacting automatically…" if automatic else "Compacting…"
        self.figures = "Starting…"
        self.figures_tip = ""
        self.info = ""
        self.expanded = False
        # The summary the model reads in place of the old history can be edited (the latest
        # compaction's, written by Coco), was edited, and the edit can be undone.
        self.editable = False
        self.edited = False
        self.edit_undoable = False

    # -- state ------------------------------------------------------------------------------

    def set_stage(self, text: str) -> None:
        """What the running compaction is doing (from the progress events)."""
        if self.state == "running":
            self.figures = text
            self._changed()

    def complete(self, marker: CompactionMarker, *, undoable: bool = False) -> None:
        """Fill in the figures of a finished compaction."""
        self.state = "done"
        self.summary = marker.summary
        self.carried = carried_markdown(marker)
        self.strategy = marker.strategy
        self.automatic = marker.trigger != "manual"
        trigger_text = TRIGGER_TEXT.get(marker.trigger, marker.trigger)
        strategy_text = STRATEGY_TEXT.get(marker.strategy, marker.strategy)
        if marker.strategy == "remote" and marker.remote_form in REMOTE_FORM_TEXT:
            strategy_text = REMOTE_FORM_TEXT[marker.remote_form]
        self.title = f"Context compacted · {trigger_text} · {strategy_text}"
        freed = ""
        if marker.tokens_before > 0:
            percent = round(marker.freed_share * 100)
            freed = f" ({'−' if percent >= 0 else '+'}{abs(percent)} %)"
        self.freed_little = marker.freed_little
        before, after = format_tokens(marker.tokens_before), format_tokens(marker.tokens_after)
        self.figures = (
            f"{before} → {after} tokens{freed}"
            f"{_room_note(marker)}"
            f" · {format_duration(marker.duration_ms)}"
        )
        self.figures_tip = (
            f"{marker.tokens_before:,} tokens before, {marker.tokens_after:,} after, "
            f"in {format_duration(marker.duration_ms)}"
        )
        info: list[str] = []
        if marker.kept_user_messages:
            info.append(_kept_words(marker.kept_user_messages, marker.kept_truncated))
        carried = carried_summary(marker)
        if carried:
            info.append(carried)
        if marker.trimmed_items:
            info.append(
                f"{marker.trimmed_items} older item(s) trimmed to fit the compaction request"
            )
        if marker.pruned_outputs:
            noun = "output" if marker.pruned_outputs == 1 else "outputs"
            info.append(f"{marker.pruned_outputs} old tool {noun} replaced by a stub")
        if marker.summary_unusable:
            info.append(
                "the model's summary was unusable: the earlier summary was kept"
                if marker.kept_previous_summary
                else "the model's summary was unusable: none was installed"
            )
        elif marker.summary_cut_short:
            info.append(
                "summary cut short: the earlier summary was kept beside it"
                if marker.kept_previous_summary
                else "summary cut short"
            )
        if marker.shrunk:
            info.append("shortened to leave half the limit free")
        if marker.style == "checkpoint":
            info.append("checkpoint summary")
        if marker.focus:
            info.append(_focus_words(marker.focus))
        self.info = " · ".join(info)
        self.undoable = undoable
        self.editable = bool(marker.summary)
        self._changed()

    def set_undoable(self, undoable: bool) -> None:
        undoable = undoable and self.state == "done"
        if undoable != self.undoable:
            self.undoable = undoable
            self._changed(resized=False)

    def set_undo_note(self, note: str) -> None:
        note = note if self.state == "done" else ""
        if note != self.undo_note:
            self.undo_note = note
            self._changed()

    def set_editable(self, editable: bool) -> None:
        editable = editable and self.state == "done" and bool(self.summary)
        if editable != self.editable:
            self.editable = editable
            self._changed(resized=False)

    def set_summary(self, summary: str, *, edited: bool, undoable: bool) -> None:
        """The core replaced the summary the model reads (an edit, or its undo)."""
        self.summary = summary
        self.edited = edited
        self.edit_undoable = undoable
        self._changed()

    def request_edit(self, text: str) -> None:
        self._host.request_summary_edit(self.item_id, text)

    def request_undo_edit(self) -> None:
        self._host.request_summary_edit(self.item_id, None)

    def mark_undone(self) -> None:
        self.state = "undone"
        self.undoable = False
        self.undo_note = ""
        self.editable = False
        self.title = "Compaction undone · the history is back to what it was before"
        with self._host.hold():
            for row, previous in self.dimmed:
                row.set_in_context(previous)
        self.dimmed = []
        self._changed()

    def mark_stopped(self, reason: str) -> None:
        """A compaction that ended without compacting (cancelled or failed)."""
        self.state = "stopped"
        self.title = reason
        self.figures = "The history is exactly as it was before."
        self._changed()

    def offer_retry(self, offered: bool, focus: str | None = None) -> None:
        """Show (or stop showing) Retry on this failed compaction."""
        offered = offered and self.state == "stopped"
        if offered != self.retryable or focus != self.focus:
            self.retryable, self.focus = offered, focus
            self._changed()

    def request_compact(self) -> None:
        if self.retryable:
            self._host.request_compact(self.focus)

    def set_expanded(self, expanded: bool) -> None:
        if expanded != self.expanded:
            self.expanded = expanded
            self._changed()

    def request_undo(self) -> None:
        self._host.request_undo(self.item_id)

    # -- widget parts -----------------------------------------------------------------------

    @property
    def title_label(self) -> QLabel:
        return self.widget.title_label  # type: ignore[no-any-return]

    @property
    def figures_label(self) -> QLabel:
        return self.widget.figures_label  # type: ignore[no-any-return]

    @property
    def info_label(self) -> QLabel:
        return self.widget.info_label  # type: ignore[no-any-return]

    @property
    def undo_note_label(self) -> QLabel:
        return self.widget.undo_note_label  # type: ignore[no-any-return]

    @property
    def summary_view(self) -> RichTextView:
        return self.widget.summary_view  # type: ignore[no-any-return]

    @property
    def summary_button(self) -> QToolButton:
        return self.widget.summary_button  # type: ignore[no-any-return]

    @property
    def undo_button(self) -> QToolButton:
        return self.widget.undo_button  # type: ignore[no-any-return]

    @property
    def retry_button(self) -> QToolButton:
        return self.widget.retry_button  # type: ignore[no-any-return]

    @property
    def edit_button(self) -> QToolButton:
        return self.widget.edit_button  # type: ignore[no-any-return]

    @property
    def undo_edit_button(self) -> QToolButton:
        return self.widget.undo_edit_button  # type: ignore[no-any-return]

    @property
    def edited_label(self) -> QLabel:
        return self.widget.edited_label  # type: ignore[no-any-return]

    def open_editor(self) -> SummaryEditDialog:
        """The dialog that edits this marker's summary (what the Edit button opens)."""
        return self.widget.open_editor()  # type: ignore[no-any-return]

    @property
    def spinner(self) -> Spinner:
        return self.widget.spinner  # type: ignore[no-any-return]

    def keep_widget(self) -> bool:
        return self.state == "running" or super().keep_widget()

    def estimate_height(self, width: int, metrics: TextMetrics) -> int:
        lines = 2 + (1 if self.info else 0) + (1 if self.undo_note else 0)
        if self.expanded:
            lines += text_lines(self.summary, width - 24, metrics)
            lines += text_lines(self.carried, width - 24, metrics)
        return 20 + lines * metrics.line_height


def carried_summary(marker: CompactionMarker) -> str:
    """``8 notes, 2 pins, 5 files, 2 commands carried over``: what the compaction carried into
    the model's view without asking the summarizer (the notes block and the pinned messages)."""
    parts = [
        f"{n} {noun if n == 1 else noun + 's'}"
        for n, noun in (
            (len(marker.carried_notes), "note"),
            (len(marker.carried_pins), "pin"),
            (len(marker.carried_files), "file"),
            (len(marker.carried_commands), "command"),
        )
        if n
    ]
    if not parts:
        return ""
    text = ", ".join(parts) + " carried over"
    if marker.carried_pin_names:  # which messages the pins are, as the core names them
        text += f" (pinned: {'; '.join(marker.carried_pin_names)})"
    if marker.carried_dropped:
        text += f" ({marker.carried_dropped} older left out for room)"
    return text


def carried_markdown(marker: CompactionMarker) -> str:
    """The carried notes as the expanded marker lists them, under the summary."""
    sections: list[str] = []
    for heading, entries, code in (
        ("What you told the model, carried over", marker.carried_notes, False),
        ("Files", marker.carried_files, True),
        ("Commands", marker.carried_commands, True),
    ):
        if entries:
            lines = "\n".join(
                f"- `{entry}`" if code else f"- {_escape_markdown(entry)}" for entry in entries
            )
            sections.append(f"**{heading}**\n\n{lines}")
    return "\n\n".join(sections)


# Each character Markdown would read as markup, with a backslash before it.
_MARKDOWN_ESCAPES = str.maketrans({c: f"\\{c}" for c in "\\*_[]<>#|"})


def _escape_markdown(text: str) -> str:
    """The user's words shown as they wrote them, not read as Markdown (one ``translate``:
    a character at a time, the 300 notes of a long session took 3 ms)."""
    return text.translate(_MARKDOWN_ESCAPES)


def _room_note(marker: CompactionMarker) -> str:
    """How the figures are qualified: a compaction that freed little, or none at all."""
    if marker.tokens_after > marker.tokens_before > 0:
        return " · no room freed"
    return " · freed little" if marker.freed_little else ""


def _kept_words(kept: int, oldest_shortened: bool) -> str:
    """How many of the user's recent messages the compaction kept, and whether it had to
    shorten the oldest of them to fit."""
    if kept == 1:
        return "your last message kept" + (", shortened to fit" if oldest_shortened else "")
    if oldest_shortened:
        return f"your last {kept} messages kept ({kept - 1} verbatim, the oldest shortened to fit)"
    return f"your last {kept} messages kept verbatim"


def _focus_words(focus: str) -> str:
    """The focus as the user gave it ("/compact focus on the code" reads "focus on the code",
    not "focus: focus on the code")."""
    focus = " ".join(focus.split())
    return focus if focus.lower().startswith("focus") else f"focus: {focus}"
