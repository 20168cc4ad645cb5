"""The core's connection test and local-server probe (``app.core.connection``): what the
settings panel shows, in words, against real loopback servers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pydantic import SecretStr

from app.core import CoreConfig
from app.core.connection import ServerInfo, check_connection, detect_server
from app.core.settings import default_compact_prompt
from app.demo import ModelServer
from tests.conftest import TEST_KEY
from tests.local_server import LLAMA_PROPS, LocalServer

DEAD = "http://127.0.0.1:9/v1"  # nothing listens on the discard port


@pytest.fixture
def llama() -> Iterator[LocalServer]:
    with LocalServer(LLAMA_PROPS, ["gemma-3", "qwen"]) as server:
        yield server


def config(url: str, model: str = "test-model", wire: str = "responses") -> CoreConfig:
    return CoreConfig(base_url=url, api_key=SecretStr(TEST_KEY), model=model, wire_api=wire)


async def test_the_scripted_server_is_reached_and_lists_its_model(server: ModelServer) -> None:
    report = await check_connection(config(server.url, "coco-demo"), provider="custom")
    assert report.ok
    assert report.message.startswith("Connected. 1 model(s) available, including coco-demo")
    assert report.models == ("coco-demo",) and report.model_listed is True
    asked = [r for r in server.requests if r.endpoint == "models"]
    assert asked[-1].headers["authorization"] == f"Bearer {TEST_KEY}"
    # The scripted server has no native API: nothing is claimed about a window.
    assert report.server == ServerInfo() and "window" not in report.message


async def test_a_model_the_server_does_not_list_is_named(server: ModelServer) -> None:
    report = await check_connection(config(server.url, "gpt-missing"), provider="openai")
    assert report.ok and report.model_listed is False
    assert "does not list 'gpt-missing'" in report.message and "coco-demo" in report.message


async def test_a_dead_port_fails_in_words_without_the_key() -> None:
    report = await check_connection(config(DEAD), provider="llamacpp")
    assert not report.ok
    assert report.message.startswith("Connection failed")
    assert "127.0.0.1:9" in report.message
    assert TEST_KEY not in report.message
    assert report.models == () and report.server == ServerInfo()


async def test_a_local_server_reports_its_window_and_missing_tools(llama: LocalServer) -> None:
    report = await check_connection(config(llama.url, "gemma-3", "chat"), provider="llamacpp")
    assert report.ok and report.model_listed is True
    assert report.server == ServerInfo("llama.cpp", 4096, False)
    assert report.server.name == "llama.cpp"
    assert "llama.cpp reports a context window of 4,096 tokens" in report.message
    assert "no tool support" in report.message
    assert all(auth == f"Bearer {TEST_KEY}" for _, auth in llama.seen)


async def test_detect_server_asks_only_local_providers(llama: LocalServer) -> None:
    found = await detect_server(llama.url, "gemma-3", provider="llamacpp", api_key=TEST_KEY)
    assert found.context_window == 4096 and found.kind == "llama.cpp"
    asked = len(llama.seen)
    assert await detect_server(llama.url, "gemma-3", provider="openai") == ServerInfo()
    assert len(llama.seen) == asked  # a remote provider is never probed
    dead = await detect_server(DEAD, "m", provider="custom", timeout=2.0)
    assert dead == ServerInfo() and dead.describe() == ""


def test_the_default_compaction_prompt_is_the_styles_own() -> None:
    handoff, checkpoint = default_compact_prompt("handoff"), default_compact_prompt("checkpoint")
    assert handoff and checkpoint and handoff != checkpoint
