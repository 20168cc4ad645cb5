"""The frozen pydantic models every event and every op of the protocol are built on."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True)


class _Op(BaseModel):
    model_config = ConfigDict(frozen=True)
