"""Reading a local server's window and tool support from its native endpoints."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest
from pydantic import SecretStr

from app.core.config import CoreConfig
from app.core.providers.probe import (
    ServerInfo,
    local_tools_warning,
    parse_llama_props,
    parse_lmstudio_models,
    parse_ollama_show,
    probe_server,
    server_root,
    tools_warning,
)

# Trimmed from the shared llama-server's real /props (lenient template).
LLAMA_PROPS = {
    "default_generation_settings": {"n_ctx": 4096, "params": {"n_predict": -1}},
    "total_slots": 1,
    "model_alias": "gemma-3-270m",
    "chat_template_caps": {"supports_tool_calls": True, "supports_tools": False},
}
OLLAMA_SHOW = {
    "parameters": 'stop "<end_of_turn>"\nnum_ctx 8192\ntemperature 1',
    "model_info": {"general.architecture": "gemma3", "gemma3.context_length": 131072},
    "capabilities": ["completion", "tools"],
}
LMSTUDIO_MODELS = {
    "data": [
        {"id": "other", "max_context_length": 1000},
        {
            "id": "qwen2.5-7b",
            "loaded_context_length": 16384,
            "max_context_length": 32768,
            "capabilities": ["tool_use"],
        },
    ]
}


def test_server_root_drops_v1() -> None:
    assert server_root("http://127.0.0.1:8080/v1/") == "http://127.0.0.1:8080"
    assert server_root("http://host:1234/api") == "http://host:1234/api"


def test_llama_props() -> None:
    assert parse_llama_props(LLAMA_PROPS) == ServerInfo("llama.cpp", 4096, False)
    assert parse_llama_props({"error": "x"}) is None
    assert parse_llama_props([1]) is None


def test_servers_say_whether_the_model_reads_images() -> None:
    assert parse_llama_props(
        {**LLAMA_PROPS, "modalities": {"vision": True, "audio": False}}
    ) == ServerInfo("llama.cpp", 4096, False, True)
    assert parse_llama_props(LLAMA_PROPS).supports_vision is None  # type: ignore[union-attr]
    vision = {**OLLAMA_SHOW, "capabilities": ["completion", "vision"]}
    assert parse_ollama_show(vision).supports_vision is True  # type: ignore[union-attr]
    lmstudio = {"data": [{"id": "m", "type": "vlm", "max_context_length": 8192}]}
    assert parse_lmstudio_models(lmstudio, "m").supports_vision is True  # type: ignore[union-attr]


def test_ollama_show_prefers_the_running_num_ctx() -> None:
    # Its capabilities name no "vision": the model reads no images.
    assert parse_ollama_show(OLLAMA_SHOW) == ServerInfo("ollama", 8192, True, False)
    no_param = {**OLLAMA_SHOW, "parameters": "temperature 1", "capabilities": ["completion"]}
    assert parse_ollama_show(no_param) == ServerInfo("ollama", 131072, False, False)
    assert parse_ollama_show({"error": "model not found"}) is None


def test_lmstudio_models_prefers_the_loaded_length() -> None:
    assert parse_lmstudio_models(LMSTUDIO_MODELS, "qwen2.5-7b") == ServerInfo(
        "lmstudio", 16384, True
    )
    assert parse_lmstudio_models(LMSTUDIO_MODELS, "other") == ServerInfo("lmstudio", 1000, None)
    assert parse_lmstudio_models(LMSTUDIO_MODELS, "missing") == ServerInfo("lmstudio")


def _server(
    routes: dict[tuple[str, str], object], seen: list[httpx2.Request]
) -> httpx2.AsyncClient:
    def handle(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        body = routes.get((request.method, request.url.path))
        if body is None:
            return httpx2.Response(404, json={"error": "not found"})
        return httpx2.Response(200, json=body)

    return httpx2.AsyncClient(transport=httpx2.MockTransport(handle))


async def test_probe_finds_ollama_after_the_others_answer_404() -> None:
    seen: list[httpx2.Request] = []
    async with _server({("POST", "/api/show"): OLLAMA_SHOW}, seen) as client:
        info = await probe_server("http://localhost:11434/v1", "gemma3", http_client=client)
    assert info == ServerInfo("ollama", 8192, True, False)
    show = [r for r in seen if r.url.path == "/api/show"]
    assert json.loads(show[0].content) == {"model": "gemma3"}


async def test_probe_asks_the_preferred_server_first() -> None:
    seen: list[httpx2.Request] = []
    routes = {("GET", "/api/v0/models"): LMSTUDIO_MODELS}
    async with _server(routes, seen) as client:
        info = await probe_server(
            "http://localhost:1234/v1", "qwen2.5-7b", prefer="lmstudio", http_client=client
        )
    assert info.context_window == 16384
    assert [r.url.path for r in seen] == ["/api/v0/models"]


async def test_unreachable_server_gives_nothing_and_never_raises() -> None:
    info = await probe_server("http://127.0.0.1:9/v1", "m", timeout=2.0)
    assert info == ServerInfo()


def test_tools_warning_only_when_the_server_says_no() -> None:
    url = "http://127.0.0.1:8080/v1"
    assert tools_warning(ServerInfo("llama.cpp", 4096, True), url) is None
    assert tools_warning(ServerInfo("llama.cpp", 4096, None), url) is None
    warning = tools_warning(ServerInfo("llama.cpp", 4096, False), url)
    assert warning is not None and "no tool support" in warning and url in warning


@pytest.mark.parametrize("fields", [{"wire_api": "responses"}])
async def test_no_probe_off_the_chat_wire(
    fields: dict[str, object], tmp_path: Path
) -> None:
    values: dict[str, object] = {"workspace": tmp_path, **fields}
    config = CoreConfig(
        base_url="http://127.0.0.1:9/v1",
        api_key=SecretStr("k"),
        data_dir=tmp_path,
        **values,  # type: ignore[arg-type]
    )
    assert await local_tools_warning(config) is None


async def test_a_servers_answer_is_kept_for_the_next_sessions_for_a_while(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each new conversation's first turn asked the server again; its answer is kept per
    address and model for ``PROBE_KEPT_S``, then asked for again."""
    from app.core.providers import probe

    asked: list[tuple[str, str]] = []
    clock = [1000.0]

    async def fake_probe(base_url: str, model: str, **_kw: object) -> ServerInfo:
        asked.append((base_url, model))
        return ServerInfo("llama.cpp", 4096, False)

    monkeypatch.setattr(probe, "probe_server", fake_probe)
    monkeypatch.setattr(probe, "_probed", {})
    monkeypatch.setattr(probe, "_clock", lambda: clock[0])

    def config(model: str) -> CoreConfig:
        return CoreConfig(base_url="http://127.0.0.1:8080/v1", api_key=SecretStr("k"),
                          data_dir=tmp_path, workspace=tmp_path, wire_api="chat", model=model)

    first = await local_tools_warning(config("gemma"))
    assert first is not None and "no tool support" in first
    assert await local_tools_warning(config("gemma")) == first  # said again, not asked again
    assert len(asked) == 1
    await local_tools_warning(config("qwen"))  # another model: asked
    assert len(asked) == 2
    clock[0] += probe.PROBE_KEPT_S + 1
    await local_tools_warning(config("gemma"))  # kept long enough: asked again
    assert asked == [("http://127.0.0.1:8080/v1", "gemma"), ("http://127.0.0.1:8080/v1", "qwen"),
                     ("http://127.0.0.1:8080/v1", "gemma")]
