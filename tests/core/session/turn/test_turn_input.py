"""What an edit or a regeneration copies of a turn's input, taken from the rollout's records as
they go by (``TurnInput``): given every record, or only the turn's own with their places."""

from __future__ import annotations

from typing import Any

from app.core.items import message_text, user_message
from app.core.rollout.store import RolloutRecord
from app.core.session.branch_summary.summary import BranchSummary, summary_item
from app.core.session.turn.branch_input import (
    TurnInput,
    edited_message,
    message_of,
    summary_record,
    with_summary,
    with_text,
)


def item(role: str, text: str) -> RolloutRecord:
    payload: dict[str, Any] = {"item": {"type": "message", "role": role,
                                        "content": [{"type": "input_text", "text": text}]}}
    return RolloutRecord(0, "", "response_item", payload)


COMPACTED = RolloutRecord(0, "", "compacted", {"replacement_history": []})
# record number -> the turn it belongs to
ANCHORS: list[str | None] = [None, "a", "a", "b", "b", "b", "b", "c", "b"]
RECORDS = [
    RolloutRecord(0, "", "session_meta", {}), item("user", "one"), item("assistant", "1"),
    item("user", "two"), COMPACTED, item("developer", "env"), item("assistant", "2"),
    item("user", "three"), COMPACTED,
]


def test_every_record_given_the_turns_input_is_taken_up_to_its_first_output() -> None:
    taker = TurnInput(ANCHORS, "b")
    for seq, record in enumerate(RECORDS):
        taker.see(seq, record)
    assert taker.records == [RECORDS[3], COMPACTED, RECORDS[5]]


def test_the_input_ends_where_another_turns_record_comes_between() -> None:
    anchors = [None, "a", "b", "b", "c", "b"]
    records = [RECORDS[0], item("user", "one"), item("user", "two"), COMPACTED,
               item("user", "three"), COMPACTED]
    every, own = TurnInput(anchors, "b"), TurnInput(anchors, "b")
    for seq, record in enumerate(records):
        every.see(seq, record)
        if anchors[seq] == "b":  # given only the turn's own, with their places
            own.see(seq, record)
    assert every.records == own.records == [records[2], COMPACTED]


def test_a_record_past_the_trees_records_belongs_to_no_turn() -> None:
    taker = TurnInput(["a", "b"], "b")
    taker.see(1, item("user", "two"))
    taker.see(2, item("user", "written since"))  # beyond the anchors: not this turn's
    assert [r.payload["item"]["content"][0]["text"] for r in taker.records] == ["two"]


# ---------------------------------------------------------------- the input, edited

ENV = {"type": "message", "role": "user",
       "content": [{"type": "input_text", "text": "<environment_context>\n</environment_context>"}]}
PHOTO = {"type": "coco_attachment", "kind": "image", "name": "a.png", "file": "f1.png"}
NOTE = {"type": "coco_attachment", "kind": "file", "name": "n.md", "file": "f2.md", "text": "x"}


def record(kind: str, **payload: Any) -> RolloutRecord:
    return RolloutRecord(3, "t", kind, {"turn_id": "b", **payload})


def texts(items: list[Any]) -> list[str]:
    return [message_text(i) for i in items]


def test_the_message_is_the_last_user_message_the_person_wrote() -> None:
    records = [record("response_item", item=user_message("first")),
               record("response_item", item=user_message("second")),
               record("response_item", item=ENV),
               record("response_item", item={"type": "message", "role": "developer",
                                             "content": [{"type": "input_text", "text": "d"}]}),
               record("compacted", replacement_history=[])]
    assert message_of(records) == "second"
    assert message_of(records[2:]) is None and message_of([]) is None


def test_an_edit_replaces_the_message_in_its_record_and_after_the_summary() -> None:
    message = {**user_message("old"), "content": [*user_message("old")["content"], PHOTO, NOTE]}
    history = [user_message("old"), user_message("summary"), user_message("old")]
    records = [record("response_item", item=user_message("other")),
               record("response_item", item=message),
               record("compacted", replacement_history=history, message="m"),
               record("turn_context", model="x")]
    edited = with_text(records, "old", "new")
    assert [r.type for r in edited] == [r.type for r in records]
    assert edited[0] == records[0] and edited[3] == records[3]
    assert edited[1].payload["turn_id"] == "b" and edited[1].line_no == 3
    assert message_text(edited[1].payload["item"]) == "new"
    assert [p for p in edited[1].payload["item"]["content"] if p.get("file")] == [PHOTO, NOTE]
    # After a compaction the message was put back last: that copy, and only it, is edited.
    assert texts(edited[2].payload["replacement_history"]) == ["old", "summary", "new"]
    assert edited[2].payload["message"] == "m"
    assert texts(history) == ["old", "summary", "old"]  # the records read are left as they were
    assert message_text(records[1].payload["item"]) == "old"
    kept = with_text(records, "old", "new", keep=["f2.md"])
    assert [p for p in kept[1].payload["item"]["content"] if p.get("file")] == [NOTE]
    other = with_text([record("compacted", replacement_history="damaged")], "old", "new")
    assert other[0].payload["replacement_history"] == "damaged"


def test_the_edited_message_is_sent_with_the_originals_attachments() -> None:
    message = {**user_message("new"), "content": [*user_message("new")["content"], PHOTO]}
    records = [record("compacted", replacement_history=[]),
               record("response_item", item=user_message("other")),
               record("response_item", item=message)]
    assert edited_message(records, "new") is message
    assert edited_message(records[:2], "new") == user_message("new")


def test_a_branch_summary_goes_just_before_the_message_wherever_it_is() -> None:
    summary = BranchSummary(text="tried the flat file first", by_model=True)
    block = summary_item(summary)
    history = [user_message("msg"), user_message("summary"), user_message("msg")]
    records = [record("response_item", item=user_message("msg")),
               record("compacted", replacement_history=history),
               record("response_item", item=user_message("other"))]
    out = with_summary(records, "msg", summary)
    assert [r.payload.get("item") for r in out[:2]] == [block, user_message("msg")]
    assert out[0].type == "response_item" and "turn_id" not in out[0].payload
    assert texts(out[2].payload["replacement_history"]) == [
        "msg", "summary", message_text(block), "msg"
    ]
    assert out[3] == records[2] and len(history) == 3
    assert summary_record(summary, "t9") == RolloutRecord(
        0, "", "response_item", {"item": block, "turn_id": "t9"}
    )


def test_the_message_is_found_in_a_compactions_history_wherever_it_lies() -> None:
    """First of two, in the middle of three, only the user's: each place the message can be
    put back after a summary, for an edit and for a branch summary alike."""
    summary = BranchSummary(text="tried it", by_model=False)
    block = summary_item(summary)
    answer = {"type": "message", "role": "assistant",
              "content": [{"type": "output_text", "text": "msg"}]}
    for history, at in (([user_message("msg"), user_message("s")], 0),
                        ([user_message("s"), user_message("msg"), user_message("t")], 1),
                        ([user_message("msg"), answer], 0)):
        compacted = record("compacted", replacement_history=history, message="m")
        edited = with_text([compacted], "msg", "new")[0].payload
        assert [message_text(i) == "new" for i in edited["replacement_history"]] == [
            n == at for n in range(len(history))
        ]
        assert edited["message"] == "m"
        carried = with_summary([compacted], "msg", summary)[0].payload
        assert carried["replacement_history"] == [*history[:at], block, *history[at:]]
        assert carried["message"] == "m" and carried["turn_id"] == "b"


def test_only_a_users_message_is_edited_and_only_a_compactions_history() -> None:
    answer = {"type": "message", "role": "assistant",
              "content": [{"type": "output_text", "text": "old"}]}
    replaced = record("history_replaced", replacement_history=[user_message("old")])
    records = [record("response_item", item=answer), replaced]
    assert with_text(records, "old", "new") == records
    assert with_summary(records, "old", BranchSummary(text="s", by_model=True)) == records


def test_an_edit_keeps_the_attachments_it_names_where_a_compaction_put_the_message() -> None:
    message = {**user_message("old"), "content": [*user_message("old")["content"], PHOTO, NOTE]}
    compacted = record("compacted", replacement_history=[user_message("s"), message])
    kept = with_text([compacted], "old", "new", keep=["f1.png"])[0]
    parts = kept.payload["replacement_history"][1]["content"]
    assert [p for p in parts if p.get("file")] == [PHOTO]
