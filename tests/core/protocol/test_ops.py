"""The ops a front end submits: a closed union of frozen models, each named by its ``op``."""

from __future__ import annotations

import inspect
import typing

import pydantic
import pytest

from app.core.config import CoreConfig
from app.core.protocol import ops


def _op_classes() -> set[type]:
    return {
        cls
        for _, cls in inspect.getmembers(ops, inspect.isclass)
        if issubclass(cls, ops._Op) and cls is not ops._Op
    }


SAMPLES: list[ops.Op] = [
    ops.UserTurn(text="hello"),
    ops.Compact(focus="the plan"),
    ops.Interrupt(),
    ops.UndoCompaction(),
    ops.UpdateConfig(config=CoreConfig(model="gemma3")),
    ops.Shutdown(),
    ops.RetryTurn(),
    ops.PinItem(pinned=True, kind="user_message", row_id="r1", text="keep this"),
    ops.EditSummary(item_id="cmp_1", text="new summary"),
    ops.UndoSummaryEdit(item_id="cmp_1"),
    ops.FindInConversation(query="error", limit=5),
    ops.EditTurn(turn_id="turn_1", text="a better question", carry_summary=True),
    ops.RegenerateTurn(turn_id="turn_1"),
    ops.SwitchBranch(turn_id="turn_2"),
    ops.ForkSession(turn_id="turn_2"),
    ops.UndoBranchSummary(turn_id="turn_2"),
    ops.InspectAttachments(paths=["/tmp/a.png"]),
    ops.ApproveToolCall(call_id="call_1", decision="always"),
]


def test_a_user_turn_carries_its_attachments_as_paths() -> None:
    op = ops.UserTurn(text="see", attachments=["/tmp/a.png", "notes.md"])
    assert op.attachments == ["/tmp/a.png", "notes.md"]
    assert ops.UserTurn(text="x").attachments == []


def test_the_op_union_is_every_op_class() -> None:
    assert set(typing.get_args(ops.Op)) == _op_classes()
    assert {type(op) for op in SAMPLES} == _op_classes()


def test_op_names_are_unique_and_fixed() -> None:
    names = [op.op for op in SAMPLES]
    assert len(set(names)) == len(names)
    with pytest.raises(pydantic.ValidationError):
        ops.UserTurn(op="compact", text="x")  # type: ignore[arg-type]


@pytest.mark.parametrize("op", SAMPLES, ids=lambda op: op.op)
def test_an_op_round_trips_through_plain_data_and_is_frozen(op: ops.Op) -> None:
    again = type(op).model_validate(op.model_dump())
    assert again == op
    with pytest.raises(pydantic.ValidationError):
        op.op = "other"  # type: ignore[misc]


def test_update_config_carries_a_core_config_and_rejects_anything_else() -> None:
    op = ops.UpdateConfig(config=CoreConfig(model="m", context_window=8192))
    assert isinstance(op.config, CoreConfig) and op.config.context_window == 8192
    with pytest.raises(pydantic.ValidationError):
        ops.UpdateConfig(config={"context_window": "huge"})  # type: ignore[arg-type]


def test_required_fields_are_required() -> None:
    with pytest.raises(pydantic.ValidationError):
        ops.UserTurn()  # type: ignore[call-arg]
    assert ops.FindInConversation(query="q").limit == 50
    assert ops.PinItem().pinned is True
