"""Editing the summary (``compaction/summary_edit.py``) at the level of its rules: a busy
session and a refusal say so as an invalid op, a replayed edit needs its summary and its
compaction, is not told as live, and the marker's figures, flags and undo text follow each
edit (the end-to-end flows are in ``tests/e2e/test_summary_edit.py``)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from app.core import protocol as p
from app.core.compaction.prompts import summary_text
from app.core.compaction.room_check import freed
from app.core.compaction.summary_edit import BUSY, SUMMARY_EDIT_RECORD, SummaryEdits
from app.core.conversation.history import ContextHistory
from app.core.conversation.transcript import Transcript
from app.core.items import message_text, user_message
from app.core.tokens.counter import TokenCounter

OLD = "the old summary"


def words(text: str) -> int:
    return len(text.split())


class Edits:
    """Summary edits over a real history and transcript holding compaction ``fields``."""

    def __init__(self, fields: dict[str, Any], summary: str = OLD) -> None:
        self.history = ContextHistory(TokenCounter("gpt-4o", allow_download=False))
        for text in ("earlier", summary_text(summary), "a later question"):
            self.history.append(user_message(text))
        self.transcript = Transcript()
        marker = {key: value for key, value in fields.items() if key != "undone"}
        self.transcript.add_compaction(p.CompactionMarker(**marker))
        if fields.get("undone"):
            self.transcript.mark_undone(fields["item_id"])
        self.entry = self.transcript.compaction_entry(fields["item_id"]) or {}
        self.events: list[p.Event] = []
        self.records: list[tuple[str, dict[str, Any]]] = []
        self.rewritten: list[tuple[bool, bool]] = []
        self.edits = SummaryEdits(
            history=self.history,
            transcript=self.transcript,
            record=lambda kind, payload: self.records.append((kind, payload)),
            emit=self.events.append,
            unchanged=lambda: True,
            rewritten=lambda unchanged, live: self.rewritten.append((unchanged, live)),
            usage=lambda: 321,
            count=words,
            budget=lambda: SimpleNamespace(history_room=1000, window=4096),
        )

    def summary(self) -> str:
        return message_text(self.history.raw_items()[1])

    def edit(self, text: str) -> None:
        self.edits.handle(p.EditSummary(item_id="cmp_1", text=text), busy=False)

    def undo(self) -> None:
        self.edits.handle(p.UndoSummaryEdit(item_id="cmp_1"), busy=False)


def entry(**figures: Any) -> dict[str, Any]:
    """A local compaction's marker fields (``undone``: the compaction was undone)."""
    return {"item_id": "cmp_1", "strategy": "local", "summary": OLD, **figures}


def test_a_busy_session_refuses_the_edit_as_an_invalid_op_and_records_nothing() -> None:
    edits = Edits(entry(tokens_before=1000, tokens_after=400))
    edits.edits.handle(p.EditSummary(item_id="cmp_1", text="new text"), busy=True)
    assert edits.events == [p.Error(message=BUSY, kind="invalid_op")]
    assert edits.records == [] and edits.summary() == summary_text(OLD)


def test_a_refusal_is_an_invalid_op_in_words() -> None:
    edits = Edits(entry())
    edits.edits.handle(p.EditSummary(item_id="cmp_other", text="new text"), busy=False)
    (error,) = edits.events
    assert isinstance(error, p.Error)
    assert error.kind == "invalid_op" and "no such compaction" in error.message


@pytest.mark.parametrize(
    "payload",
    [{"item_id": "cmp_1"}, {"summary": "replayed", "previous": OLD},
     {"item_id": "", "summary": "replayed"}, {"item_id": "cmp_1", "summary": None}],
)
def test_a_replayed_record_without_its_summary_or_its_compaction_changes_nothing(
    payload: dict[str, Any],
) -> None:
    edits = Edits(entry(tokens_before=1000, tokens_after=400))
    edits.edits.replay(payload)
    assert edits.summary() == summary_text(OLD)
    assert edits.rewritten == [] and edits.entry["summary"] == OLD


def test_a_replayed_edit_is_applied_and_told_as_read_from_the_file_not_live() -> None:
    edits = Edits(entry(tokens_before=1000, tokens_after=400))
    edits.edits.replay({"item_id": "cmp_1", "summary": "replayed text", "previous": OLD})
    assert edits.summary() == summary_text("replayed text")
    assert len(edits.rewritten) == 1
    unchanged, live = edits.rewritten[0]
    assert unchanged is True and live is False
    edits.edit("a live edit")
    assert edits.rewritten[-1][1] is True


def test_a_live_edit_is_recorded_first_then_told_with_its_figures() -> None:
    edits = Edits(entry(tokens_before=1000, tokens_after=400))
    edits.edit("a better summary of it all")
    (kind, payload), = edits.records
    assert kind == SUMMARY_EDIT_RECORD
    assert payload == {"item_id": "cmp_1", "summary": "a better summary of it all",
                       "previous": OLD, "undo": False}
    (told,) = edits.events
    assert isinstance(told, p.SummaryEdited)
    assert told.summary == "a better summary of it all" and told.tokens == 321
    assert told.edited is True and told.undoable is True


def test_the_marker_figures_follow_the_summarys_size() -> None:
    edits = Edits(entry(tokens_before=1000, tokens_after=400))
    longer = "one two three four five six seven eight"
    edits.edit(longer)
    change = words(summary_text(longer)) - words(summary_text(OLD))
    assert change == 5
    assert edits.entry["tokens_after"] == 405
    assert (edits.entry["freed_share"], edits.entry["freed_little"]) == freed(1000, 405)
    assert edits.entry["freed_little"] is False


def test_an_edit_that_leaves_little_freed_says_so_on_the_marker() -> None:
    edits = Edits(entry(tokens_before=1000, tokens_after=790))
    edits.edit(OLD + " and twenty more words " + "word " * 16)
    assert edits.entry["tokens_after"] == 790 + 20
    assert (edits.entry["freed_share"], edits.entry["freed_little"]) == freed(1000, 810)
    assert edits.entry["freed_little"] is True  # 19 % freed, under the fifth


def test_what_the_compaction_left_never_goes_below_nothing() -> None:
    long = " ".join(f"w{n}" for n in range(20))
    edits = Edits(entry(tokens_before=1000, tokens_after=5, summary=long), summary=long)
    edits.edit("short now")
    assert edits.entry["tokens_after"] == 0


def test_a_marker_without_figures_counts_from_nothing() -> None:
    """A marker with no figures (none were kept): the edit's change alone, nothing freed."""
    edits = Edits(entry())
    edits.edit(OLD + " plus three more")
    assert edits.entry["tokens_after"] == 3
    assert edits.entry["freed_share"] == 0.0 and edits.entry["freed_little"] is False


def test_a_replayed_edit_without_its_previous_text_counts_from_an_empty_one() -> None:
    """A record without ``previous``: the edit replaced an empty text, and its undo puts back
    an empty text."""
    edits = Edits(entry(tokens_before=1000, tokens_after=400))
    edits.edits.replay({"item_id": "cmp_1", "summary": "a b c"})
    change = words(summary_text("a b c")) - words(summary_text(""))
    assert edits.entry["tokens_after"] == 400 + change
    edits.undo()
    assert edits.entry["summary"] == ""
    assert edits.summary() == summary_text("")


def test_the_marker_says_edited_and_undoable_until_the_edit_is_undone() -> None:
    edits = Edits(entry(tokens_before=1000, tokens_after=400))
    edits.edit("first edit")
    assert edits.entry["summary_edited"] is True and edits.entry["summary_undoable"] is True
    edits.edit("second edit")
    edits.undo()
    assert edits.entry["summary"] == "first edit"
    assert edits.entry["summary_undoable"] is True
    edits.undo()
    assert edits.entry["summary"] == OLD
    assert edits.entry["summary_edited"] is False and edits.entry["summary_undoable"] is False
    assert edits.summary() == summary_text(OLD)


HELD = (
    "This compaction's summary is held by the server, encrypted: Coco cannot show or edit it."
)


@pytest.mark.parametrize(
    ("change", "words_said"),
    [
        ({"item_id": "cmp_other"}, "There is no such compaction in this conversation."),
        ({"undone": True},
         "This compaction was undone: its summary is no longer in the model's view."),
        ({"strategy": "prune", "summary": ""},
         "This compaction wrote no summary: it only shortened old tool outputs."),
        ({"strategy": "remote"}, HELD),
        ({"summary": ""}, HELD),
    ],
)
def test_each_refusal_in_its_own_words(change: dict[str, Any], words_said: str) -> None:
    edits = Edits({**entry(), **change})
    assert edits.edits.refusal("cmp_1") == words_said


def test_only_the_latest_compactions_summary_can_be_edited() -> None:
    edits = Edits(entry())
    edits.transcript.add_compaction(p.CompactionMarker(item_id="cmp_2", summary=OLD))
    assert edits.edits.refusal("cmp_1") == (
        "A later compaction replaced this summary: only the latest compaction's summary is in "
        "the model's view, so only it can be edited."
    )
    assert edits.edits.refusal("cmp_2") == ""


@pytest.mark.parametrize("items", [[], ["a question", "an answer"]])
def test_a_summary_no_longer_in_the_history_cannot_be_edited(items: list[str]) -> None:
    edits = Edits(entry())
    edits.history.replace([user_message(text) for text in items])
    assert edits.edits.refusal("cmp_1") == "The summary is no longer in the model's view."


def test_an_undo_with_no_edit_an_empty_text_and_the_same_text_are_refused_in_words() -> None:
    edits = Edits(entry(tokens_before=1000, tokens_after=400))
    edits.undo()
    edits.edit("   \n ")
    edits.edit(f"  {OLD}  ")
    assert edits.events == [
        p.Error(message="Nothing to undo: this summary was not edited.", kind="invalid_op"),
        p.Error(
            message="The summary cannot be empty: write what the model should know in place of "
            "the earlier conversation. Nothing was changed.",
            kind="invalid_op",
        ),
        p.Background(message="The summary is unchanged."),
    ]
    assert edits.records == [] and edits.summary() == summary_text(OLD)


def test_an_edit_that_cannot_be_saved_is_not_made() -> None:
    edits = Edits(entry(tokens_before=1000, tokens_after=400))

    def full_disk(kind: str, payload: dict[str, Any]) -> None:
        raise OSError("No space left on device")

    edits.edits._record = full_disk  # type: ignore[method-assign]
    edits.edit("a new summary")
    assert edits.events == [
        p.Error(message="The summary was not changed: No space left on device", kind="storage")
    ]
    assert edits.summary() == summary_text(OLD) and edits.entry["summary"] == OLD


@pytest.mark.parametrize(("window", "said"), [(4096, "the model's 4,096-token window"),
                                              (None, "the model")])
def test_a_summary_fits_up_to_the_room_and_not_one_token_more(
    window: int | None, said: str
) -> None:
    text = "one two three four five"
    room = words(summary_text(text))
    edits = Edits(entry(tokens_before=1000, tokens_after=400))
    edits.edits._budget = lambda: SimpleNamespace(  # type: ignore[method-assign]
        history_room=room, window=window
    )
    edits.edit(text + " six")  # one token over
    edits.edit(text)  # exactly the room
    refused, told = edits.events
    assert refused == p.Error(
        message=f"The summary was not changed: it is about {room + 1:,} tokens, and {said} "
        f"leaves room for at most {room:,} in a compacted history. Shorten it.",
        kind="invalid_op",
    )
    assert isinstance(told, p.SummaryEdited) and told.summary == text


def test_the_edit_is_told_with_the_marker_as_the_entry_now_holds_it() -> None:
    edits = Edits(entry(tokens_before=1000, tokens_after=400))
    edits.edit("a new summary")
    (told,) = edits.events
    assert isinstance(told, p.SummaryEdited)
    assert told.marker == p.CompactionMarker.from_record(edits.entry)
    assert told.marker is not None and told.marker.summary == "a new summary"
