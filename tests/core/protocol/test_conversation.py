"""What a front end is told about the conversation as a whole: the model's view, search
matches, pins."""

from __future__ import annotations

import pydantic
import pytest

from app.core import protocol as p
from app.core.protocol import conversation

EVENT = pydantic.TypeAdapter(p.Event)


def test_search_matches_arrive_as_models_from_plain_data() -> None:
    event = EVENT.validate_python(
        {
            "type": "conversation_matches",
            "query": "error",
            "matches": [{"turn": 3, "role": "tool", "tool": "shell", "excerpt": "…error…",
                         "call_id": "c1", "in_view": True}],
        }
    )
    assert isinstance(event, conversation.ConversationMatches)
    assert event.matches == [
        conversation.ConversationMatch(
            turn=3, role="tool", tool="shell", excerpt="…error…", call_id="c1", in_view=True
        )
    ]
    assert EVENT.validate_python(event.model_dump()) == event


def test_a_pin_event_round_trips_and_says_whether_the_model_sees_it() -> None:
    event = conversation.ItemPinned(key="pin_1", pinned=True, kind="user_message", tokens=12)
    assert event.in_view is True
    assert EVENT.validate_python(event.model_dump()) == event


def test_a_context_entry_names_what_coco_added_and_is_frozen() -> None:
    entry = conversation.ContextEntry(role="user", kind="message", tokens=40, injected=True)
    assert (entry.is_summary, entry.pinned, entry.carried_notes, entry.text) == (
        False, False, False, ""
    )
    with pytest.raises(pydantic.ValidationError):
        entry.tokens = 41  # type: ignore[misc]
    with pytest.raises(pydantic.ValidationError):
        conversation.ContextEntry(role="user", kind="message")  # type: ignore[call-arg]
