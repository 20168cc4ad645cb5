"""The events of a session outside any one stream, and the closed set of error kinds."""

from __future__ import annotations

import typing

import pydantic
import pytest

from app.core import protocol as p
from app.core.protocol import session
from app.core.providers.base import ErrorCategory

EVENT = pydantic.TypeAdapter(p.Event)

SAMPLES: list[p.Event] = [
    session.SessionConfigured(session_id="s1", model="gemma3", resumed=True, rollout_path="/r"),
    session.Background(message="indexing"),
    session.Warning(message="the model has no tools"),
    session.Error(message="the server rejected the API key", kind="auth", details="HTTP 401"),
    session.ShutdownComplete(),
]


@pytest.mark.parametrize("event", SAMPLES, ids=lambda event: event.type)
def test_a_session_event_round_trips_through_the_event_union(event: p.Event) -> None:
    again = EVENT.validate_python(event.model_dump())
    assert type(again) is type(event)
    assert again == event


def test_an_error_is_internal_unless_said_otherwise_and_its_kind_is_a_closed_set() -> None:
    error = session.Error(message="boom")
    assert (error.kind, error.turn_id, error.details) == ("internal", None, "")
    with pytest.raises(pydantic.ValidationError):
        session.Error(message="x", kind="oops")  # type: ignore[arg-type]


def test_every_provider_category_but_model_output_is_an_error_kind_of_its_own() -> None:
    kinds = set(typing.get_args(session.ErrorKind))
    categories = set(typing.get_args(ErrorCategory))
    # A malformed model output is reported as a bad request (see app.core.session.turn.errors).
    assert categories - kinds == {"model_output"}
    assert {"compaction", "invalid_op", "message_too_large", "storage", "tool"} <= kinds
