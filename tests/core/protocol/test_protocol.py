"""The protocol package: one closed set of event types, all importable as ``p.Name``, the same
objects the public ``app.core.ops`` and ``app.core.events`` modules hand out."""

from __future__ import annotations

import inspect
import typing

import pydantic

from app.core import events, ops
from app.core import protocol as p
from app.core.protocol import (
    attachments,
    branches,
    compaction,
    conversation,
    session,
    tools,
    turn,
)
from app.core.protocol import ops as protocol_ops

EVENT_MODULES = (turn, compaction, session, conversation, branches, attachments, tools)


def _union_members(union: object) -> set[type]:
    args = typing.get_args(union)
    if args and typing.get_origin(union) is typing.Annotated:
        args = typing.get_args(args[0])
    return set(args)


def _event_classes() -> set[type[pydantic.BaseModel]]:
    """Every model of the event modules with a ``type`` field: what an event is."""
    return {
        cls
        for module in EVENT_MODULES
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if issubclass(cls, pydantic.BaseModel) and "type" in cls.model_fields
        and cls.__module__ == module.__name__
    }


def test_every_event_class_of_the_package_is_in_the_event_union_and_only_those() -> None:
    assert _union_members(p.Event) == _event_classes()
    assert len(_event_classes()) == 34
    # Each is frozen: a front end can keep an event without it changing under it.
    assert all(cls.model_config.get("frozen") for cls in _event_classes())


def test_event_type_names_are_unique_and_each_is_its_own_default() -> None:
    names = [cls.model_fields["type"].default for cls in _event_classes()]
    assert len(names) == len(set(names))
    for cls in _event_classes():
        assert typing.get_args(cls.model_fields["type"].annotation) == (
            cls.model_fields["type"].default,
        )


def test_every_exported_name_is_reachable_as_p_name() -> None:
    for name in p.__all__:
        assert getattr(p, name) is not None
    for module in (*EVENT_MODULES, protocol_ops):
        for name, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, pydantic.BaseModel) and (
                not name.startswith("_") and value.__module__ == module.__name__
            ):
                assert getattr(p, name) is value, name


def test_the_public_ops_and_events_modules_hand_out_the_protocol_classes() -> None:
    for name in ops.__all__:
        assert getattr(ops, name) is getattr(p, name)
    for name in events.__all__:
        assert getattr(events, name) is getattr(p, name)
    assert p.Op is protocol_ops.Op
