"""Attachments on the protocol: the window asks what files would cost before they are sent
(``InspectAttachments``) and is told (``AttachmentsInspected``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .base import _Event


class AttachmentInfo(BaseModel):
    """One file as a chip shows it: ``error`` says in words why it cannot be attached
    ("" when it can); ``tokens`` is what it costs the model."""

    model_config = ConfigDict(frozen=True)

    path: str
    name: str
    kind: str = ""  # text, pdf, image
    size: int = 0
    tokens: int = 0
    description: str = ""
    error: str = ""
    details: dict[str, Any] = Field(default_factory=dict)


class AttachmentsInspected(_Event):
    type: Literal["attachments_inspected"] = "attachments_inspected"
    files: list[AttachmentInfo]
