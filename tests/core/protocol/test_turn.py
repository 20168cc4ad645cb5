"""The events of a turn: each round-trips through the ``Event`` union by its ``type``."""

from __future__ import annotations

import pydantic
import pytest

from app.core import protocol as p
from app.core.protocol import turn

EVENT = pydantic.TypeAdapter(p.Event)
ITEM = turn.TurnItem(id="fc_1", kind="function_call", data={"name": "grep", "arguments": "{}"})

SAMPLES: list[p.Event] = [
    turn.TurnStarted(turn_id="t1", context_window=8192),
    turn.ItemStarted(turn_id="t1", item=ITEM),
    turn.ItemCompleted(turn_id="t1", item=ITEM),
    turn.AgentMessageDelta(turn_id="t1", item_id="msg_1", delta="Hel"),
    turn.AgentMessage(turn_id="t1", item_id="msg_1", text="Hello"),
    turn.TokenCount(total=1200, input=1000, output=200, context_window=8192, source="estimate"),
    turn.StreamError(
        turn_id="t1", message="server error 502", attempt=2, max_attempts=5,
        reason="the server failed", wait_seconds=4.0, requested_seconds=120.0,
    ),
    turn.StreamWaiting(turn_id="t1", since_seconds=30.0, timeout_seconds=600.0),
    turn.MessageNotSent(turn_id="t1", text="a huge paste", reason="too large"),
    turn.TurnComplete(turn_id="t1", status="failed"),
    turn.RetryAvailable(turn_id="t1"),
]


@pytest.mark.parametrize("event", SAMPLES, ids=lambda event: event.type)
def test_a_turn_event_round_trips_through_the_event_union(event: p.Event) -> None:
    data = event.model_dump()
    again = EVENT.validate_python(data)
    assert type(again) is type(event)
    assert again == event
    # And through JSON, as an export or a log line would carry it.
    assert EVENT.validate_json(EVENT.dump_json(event)) == event


def test_a_turn_item_arrives_as_a_model_from_plain_data() -> None:
    event = EVENT.validate_python(
        {"type": "item_started", "turn_id": "t", "item": {"id": "u1", "kind": "user_message"}}
    )
    assert isinstance(event, turn.ItemStarted)
    assert event.item == turn.TurnItem(id="u1", kind="user_message")
    with pytest.raises(pydantic.ValidationError):
        turn.TurnItem(id="x", kind="image")  # type: ignore[arg-type]


def test_the_defaults_a_front_end_relies_on() -> None:
    assert turn.TurnStarted(turn_id="t").kind == "regular"
    complete = turn.TurnComplete(turn_id="t")
    assert (complete.kind, complete.status, complete.last_agent_message) == (
        "regular", "completed", None
    )
    assert turn.StreamWaiting(turn_id="t", since_seconds=1).stalled is True
    assert turn.TokenCount(total=5).source == "api"
    with pytest.raises(pydantic.ValidationError):
        turn.TurnComplete(turn_id="t", status="done")  # type: ignore[arg-type]
