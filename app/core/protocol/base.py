"""The frozen pydantic model every event of the protocol is built on."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True)
