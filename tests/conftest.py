"""Shared fixtures: a scripted loopback model server and core configs pointing at it."""

from __future__ import annotations

import asyncio
import errno
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core import CoreConfig, Session
from app.demo import ModelServer

REPO = Path(__file__).resolve().parents[1]
TIKTOKEN_CACHE = Path(
    os.environ.get("TIKTOKEN_CACHE_DIR") or REPO.parent / "shared" / "data" / "tiktoken-cache"
)
# Tests of what exact counts make possible: skipped where tiktoken's file cannot be had (a fresh
# clone without ../shared; the app then counts approximately, which the other tests cover).
needs_tiktoken = pytest.mark.skipif(
    not (TIKTOKEN_CACHE.is_dir() and any(TIKTOKEN_CACHE.iterdir())),
    reason="tiktoken's file is not on this machine (set TIKTOKEN_CACHE_DIR to its folder)",
)
TEST_KEY = "sk-test-SECRET-4f9a2c"


class DiskFull:
    """Makes ``os.write`` of the rollout fail with ENOSPC while ``on`` is set."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.on = False
        real_write = os.write

        def write(fd: int, data: bytes) -> int:
            if self.on:
                raise OSError(errno.ENOSPC, "No space left on device")
            return real_write(fd, data)

        monkeypatch.setattr("app.core.rollout.store.os.write", write)


@pytest.fixture
def parsed_lines(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The line numbers ``rollout.lines_at`` parses from now on, in order (each parsed as
    before)."""
    from app.core.rollout import lines_at

    parsed: list[int] = []
    real = lines_at.record_at

    def counted(data: Any, view: Any, start: int, end: int, line_no: int) -> Any:
        parsed.append(line_no)
        return real(data, view, start, end, line_no)

    monkeypatch.setattr(lines_at, "record_at", counted)
    return parsed


@pytest.fixture
def server() -> Iterator[ModelServer]:
    srv = ModelServer(mode="scripted").start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def make_config(server: ModelServer, tmp_path: Path) -> Callable[..., CoreConfig]:
    def build(**overrides: Any) -> CoreConfig:
        values: dict[str, Any] = {
            "base_url": server.url,
            "api_key": TEST_KEY,
            "model": "test-model",
            "instructions": "You are a test assistant.",
            "data_dir": tmp_path / "data",
            "tokenizer_cache_dir": TIKTOKEN_CACHE if TIKTOKEN_CACHE.is_dir() else tmp_path / "tk",
            "tokenizer_download": False,
            "retry_base_delay": 0.001,
        }
        values.update(overrides)
        return CoreConfig(**values)

    return build


async def collect(
    session: Session, until: str = "turn_complete", timeout: float = 10.0
) -> list[Any]:
    """Events up to and including the first of type ``until``."""
    events: list[Any] = []

    async def consume() -> None:
        async for event in session.events():
            events.append(event)
            if event.type == until:
                return

    await asyncio.wait_for(consume(), timeout)
    return events


async def run(session: Session, op: Any, timeout: float = 10.0) -> list[Any]:
    """Submit an op and return its events up to turn_complete."""
    await session.submit(op)
    return await collect(session, "turn_complete", timeout)


def types(events: list[Any]) -> list[str]:
    return [event.type for event in events]


def of_type(events: list[Any], kind: str) -> list[Any]:
    return [event for event in events if event.type == kind]


def input_texts(body: dict[str, Any]) -> list[tuple[str, str]]:
    """(role or type, text) for each item of a recorded request's input."""
    out: list[tuple[str, str]] = []
    for item in body["input"]:
        if item.get("type", "message") == "message":
            content = item["content"]
            text = (
                content
                if isinstance(content, str)
                else "".join(part.get("text", "") for part in content)
            )
            out.append((item["role"], text))
        else:
            out.append((item["type"], item.get("output") or item.get("arguments") or ""))
    return out
