"""Fixtures: a scripted and a demo model server, each with an async openai client."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import openai
import pytest

from app.demo import ModelServer


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer("scripted") as srv:
        yield srv


@pytest.fixture
async def client(server: ModelServer) -> AsyncIterator[openai.AsyncOpenAI]:
    # No SDK retries: every request the test makes reaches the server exactly once.
    api = openai.AsyncOpenAI(base_url=server.url, api_key="test", max_retries=0, timeout=10)
    yield api
    await api.close()


@pytest.fixture
def demo() -> Iterator[ModelServer]:
    with ModelServer("demo", tokens_per_second=None) as srv:
        yield srv


@pytest.fixture
async def demo_client(demo: ModelServer) -> AsyncIterator[openai.AsyncOpenAI]:
    api = openai.AsyncOpenAI(base_url=demo.url, api_key="test", max_retries=0, timeout=10)
    yield api
    await api.close()
