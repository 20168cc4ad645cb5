"""A real llama.cpp server (Gemma 3 270M) for the tests in tests/real, marked ``real``.

The shared ``start.sh`` lives in ``<repo>/../shared/tools/llama-server``; ``COCO_LLAMA_SERVER_DIR``
names another folder, and ``/work/shared/tools/llama-server`` is the fallback when the repo has
no ``../shared`` beside it (a git worktree). Without any of them every real test is skipped,
saying so. Servers start on free loopback ports, one per (window, template) asked for, once per
test run, and are stopped at the end. The model is a small *base* model: tests check shapes,
errors, usage and flows, never the wording of a reply.
"""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from app.core import CoreConfig
from bench._llama import llama_server_dir, start_llama, stop_llama
from tests.conftest import TIKTOKEN_CACHE

MODEL = "gemma-3-270m"


@dataclass
class LlamaServer:
    url: str
    port: int
    context: int
    template: str


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def llama() -> Iterator[Callable[..., LlamaServer]]:
    """``llama(context=4096, template="lenient")``: a running server, started on first ask."""
    folder = llama_server_dir()
    if folder is None:
        pytest.skip(
            "no llama.cpp server: ../shared/tools/llama-server is absent "
            "(set COCO_LLAMA_SERVER_DIR to its folder)"
        )
    servers: dict[tuple[int, str], LlamaServer] = {}

    def start(context: int = 4096, template: str = "lenient") -> LlamaServer:
        key = (context, template)
        if key not in servers:
            port = _free_port()
            try:
                url = start_llama(folder, port, context, template)
            except subprocess.CalledProcessError as exc:
                pytest.fail(f"llama-server did not start: {exc.stderr.strip()[-500:]}")
            servers[key] = LlamaServer(url, port, context, template)
        return servers[key]

    try:
        yield start
    finally:
        for server in servers.values():
            stop_llama(server.port)


@pytest.fixture
def real_config(tmp_path: Path) -> Callable[..., CoreConfig]:
    """A ``CoreConfig`` for a real server: ``real_config(server, wire_api="chat", ...)``."""

    def build(server: LlamaServer, **overrides: Any) -> CoreConfig:
        values: dict[str, Any] = {
            "base_url": server.url,
            "api_key": "",
            "model": MODEL,
            "wire_api": "chat",
            "instructions": "You are a test assistant.",
            "context_window": server.context,
            "data_dir": tmp_path / "data",
            "tokenizer_cache_dir": TIKTOKEN_CACHE if TIKTOKEN_CACHE.is_dir() else tmp_path / "tk",
            "tokenizer_download": False,
            "retry_base_delay": 0.01,
        }
        values.update(overrides)
        return CoreConfig(**values)

    return build
