"""What the provider tests share: a request, the events of one stream, an HTTP client answering
with a given event stream, and a record of what went through the OpenAI SDK's typed transform."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import httpx2
import pytest

from app.core.items import user_message
from app.core.providers.base import ModelRequest, StreamEvent


def make_request(**overrides: Any) -> ModelRequest:
    """A one-message request ("hello" to ``test-model``); ``overrides`` replace its fields."""
    fields: dict[str, Any] = {
        "model": "test-model",
        "instructions": "be brief",
        "input": [user_message("hello")],
    }
    fields.update(overrides)
    return ModelRequest(**fields)


async def collect(prov: Any, request: ModelRequest, **kwargs: Any) -> list[StreamEvent]:
    """Every event of ``prov.stream(request, **kwargs)`` (either provider), in order."""
    return [event async for event in prov.stream(request, **kwargs)]


def event_stream_client(**response: Any) -> httpx2.AsyncClient:
    """A client whose every request is answered 200 with a ``text/event-stream`` body:
    ``content=`` its bytes, or ``stream=`` an ``httpx2.AsyncByteStream``."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, **response)

    return httpx2.AsyncClient(transport=httpx2.MockTransport(handler))


def record_sdk_transforms(monkeypatch: pytest.MonkeyPatch, sdk_module: ModuleType) -> list[Any]:
    """What ``sdk_module`` (an SDK resource module) hands to the SDK's typed transform from now
    on, in order; the transform still runs."""
    transformed: list[Any] = []
    original = sdk_module.async_maybe_transform

    async def spy(data: Any, *args: Any, **kwargs: Any) -> Any:
        transformed.append(data)
        return await original(data, *args, **kwargs)

    monkeypatch.setattr(sdk_module, "async_maybe_transform", spy)
    return transformed
