"""A reply cut off by the server (issue 39, finding 2): what was shown stays in the transcript,
marked cut off and out of the model's view, live and after a reopen, until a retry answers."""

from __future__ import annotations

from app.core import Session, ops
from app.core import protocol as p
from app.core.conversation.transcript import CUT_OFF_KIND, Transcript
from app.core.session.turn.cut_off import CutOffReplies, restore
from app.demo import Fault, Reply
from tests.conftest import of_type, run

SHOWN = "Line one of the answer.\nLine two.\nLine three, and then"


def cut_off_items(events: list) -> list:
    return [
        e for e in of_type(events, "item_completed")
        if e.item.kind == "agent_message" and e.item.data.get("cut_off")
    ]


async def fail_midway(session: Session, server) -> list:
    server.enqueue(Fault.cut(after_chunks=3, text=SHOWN))
    server.enqueue(Fault.status(503))
    server.enqueue(Fault.status(503))
    events = await run(session, ops.UserTurn(text="explain it"))
    assert events[-1].status == "failed"
    return events


async def test_a_reply_cut_off_by_a_dead_server_stays_shown_out_of_the_models_view(
    server, make_config
):
    config = make_config(max_retries=2)
    session = await Session.open(config)
    (kept,) = cut_off_items(await fail_midway(session, server))
    assert kept.item.data["text"] == SHOWN
    assert not [i for i in session.history() if i.get("role") == "assistant"]
    entry = next(e for e in session.transcript() if e["kind"] == "reply_cut_off")
    assert entry["text"] == SHOWN and entry["in_context"] is False
    await session.close()
    reopened = await Session.open(config, session.id)
    (replayed,) = cut_off_items(reopened.replay_events())
    assert replayed.item.id == kept.item.id and replayed.item.data["text"] == SHOWN
    assert not [i for i in reopened.history() if i.get("role") == "assistant"]
    await reopened.close()


async def test_a_retry_that_answers_replaces_the_cut_off_reply(server, make_config):
    config = make_config(max_retries=2)
    session = await Session.open(config)
    (kept,) = cut_off_items(await fail_midway(session, server))
    server.enqueue(Reply(text="The whole answer."))
    events = await run(session, ops.RetryTurn())
    assert events[-1].status == "completed"
    (replaced,) = of_type(events, "reply_replaced")
    assert replaced.item_id == kept.item.id
    assert not [e for e in session.transcript() if e["kind"] == "reply_cut_off"]
    await session.close()
    again = await Session.open(config, session.id)
    assert not cut_off_items(again.replay_events())
    await again.close()


async def test_a_retried_stream_that_answers_keeps_nothing_cut_off(server, make_config):
    session = await Session.open(make_config())
    server.enqueue(Fault.cut(after_chunks=2, text=SHOWN))
    server.enqueue(Reply(text="complete answer"))
    events = await run(session, ops.UserTurn(text="hi"))
    assert events[-1].status == "completed" and not cut_off_items(events)
    assert not [e for e in session.transcript() if e["kind"] == "reply_cut_off"]
    await session.close()


# The rules of ``CutOffReplies`` and ``restore`` on their own (a transcript, the records and
# events they write), below the session the tests above drive.

class _Attempt:
    def __init__(self, **partial_text: str) -> None:
        self.partial_text = partial_text


def _replies() -> tuple[CutOffReplies, Transcript, list, list]:
    transcript = Transcript()
    records: list[tuple[str, dict]] = []
    events: list = []
    replies = CutOffReplies(
        record=lambda kind, payload: records.append((kind, payload)),
        transcript=transcript, emit=events.append,
    )
    return replies, transcript, records, events


def test_the_last_attempt_that_showed_text_is_what_is_kept() -> None:
    replies, transcript, records, events = _replies()
    replies.keep("t1", [_Attempt(m1="first try"), _Attempt(m2="second, longer try"),
                        _Attempt(m3="  \n")])  # the last showed only blanks: not shown text
    payload = {"kind": CUT_OFF_KIND, "turn_id": "t1", "item_id": "m2",
               "text": "second, longer try"}
    assert records == [("event", payload)]
    assert transcript.entries() == [{**payload, "in_context": False}]  # out of the view
    (event,) = events
    assert (event.turn_id, event.item.id, event.item.data) == (
        "t1", "m2", {"text": "second, longer try", "cut_off": True}
    )
    replies.keep("t2", [_Attempt(m4=" ")])  # nothing shown: nothing kept
    assert len(records) == 1


def test_a_retry_that_answers_records_each_replaced_reply_and_says_so() -> None:
    replies, transcript, records, events = _replies()
    replies.keep("t1", [_Attempt(m1="one", m2="two")])
    transcript.add_recorded_entry({"kind": CUT_OFF_KIND, "turn_id": "t1", "text": "old"})
    replies.replace("t1")
    assert records[2:] == [
        ("event", {"kind": CUT_OFF_KIND, "turn_id": "t1", "item_id": item, "replaced": True})
        for item in ("m1", "m2", "")  # an entry without an item id is named by ""
    ]
    assert events[2:] == [p.ReplyReplaced(turn_id="t1", item_id=item)
                          for item in ("m1", "m2", "")]
    assert transcript.entries() == []


def test_a_reopened_session_keeps_or_drops_the_entry_as_recorded() -> None:
    transcript = Transcript()
    kept = {"kind": CUT_OFF_KIND, "turn_id": "t1", "item_id": "m1", "text": "one"}
    restore(transcript, kept)
    restore(transcript, {"kind": CUT_OFF_KIND, "turn_id": "t2", "item_id": "m2", "text": "x"})
    restore(transcript, {"kind": CUT_OFF_KIND, "turn_id": "t2", "item_id": "m2",
                         "replaced": True})
    assert transcript.entries() == [{**kept, "in_context": False}]
    # A record without a turn names the turn "", as it was kept under.
    restore(transcript, {"kind": CUT_OFF_KIND, "turn_id": "", "item_id": "m3", "text": "y"})
    restore(transcript, {"kind": CUT_OFF_KIND, "replaced": True})
    assert transcript.entries() == [{**kept, "in_context": False}]
