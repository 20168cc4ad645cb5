"""The frozen base of every event: an event cannot change once emitted."""

from __future__ import annotations

import pydantic
import pytest

from app.core import protocol as p
from app.core.protocol.base import _Event


class _Probe(_Event):
    type: str = "probe"
    text: str


def test_an_event_cannot_be_changed_once_made() -> None:
    event = _Probe(text="a")
    with pytest.raises(pydantic.ValidationError):
        event.text = "b"  # type: ignore[misc]
    assert event.text == "a"


def test_equal_events_are_equal_and_hash_alike() -> None:
    assert _Probe(text="a") == _Probe(text="a")
    assert hash(p.Warning(message="m")) == hash(p.Warning(message="m"))
    assert p.Warning(message="m") != p.Warning(message="n")
