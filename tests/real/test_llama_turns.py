"""The core against a real llama.cpp server: turns on both wires, usage, strict templates,
compaction and undo, remote compaction's 404, resume, the server's own errors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.core import CoreConfig, Session, ops
from app.core.items import user_message
from app.core.providers.base import ModelRequest, ProviderError
from app.core.providers.chat import ChatCompletionsProvider
from app.core.tokens.counter import TokenCounter
from tests.conftest import collect, of_type, run, types
from tests.real.conftest import MODEL, LlamaServer

pytestmark = pytest.mark.real

MAX_REPLY = 256  # start.sh caps every reply at 256 tokens
TURN_TIMEOUT = 300.0  # a 2-core machine shared with other work; this bounds a hang, not speed


def completed(events: list[Any]) -> bool:
    return events[-1].type == "turn_complete" and events[-1].status == "completed"


def errors(events: list[Any]) -> list[str]:
    return [event.message for event in of_type(events, "error")]


async def turn(session: Session, text: str) -> list[Any]:
    return await run(session, ops.UserTurn(text=text), timeout=TURN_TIMEOUT)


async def test_streamed_turn_usage_and_resume_on_the_chat_wire(
    llama: Callable[..., LlamaServer], real_config: Callable[..., CoreConfig]
) -> None:
    server = llama()
    config = real_config(server)
    session = await Session.open(config)
    try:
        events = await turn(session, "Write a short note about the sea.")
        history = session.history()
    finally:
        await session.close()
    check_streamed_turn(events, server, real_config)

    resumed = await Session.open(config, session.id)
    try:
        assert resumed.history() == history
        assert resumed.token_usage().source == "api"
        events = await turn(resumed, "And about rivers?")
        assert completed(events), errors(events)
        assert len(resumed.history()) == len(history) + 2
    finally:
        await resumed.close()


async def test_streamed_turn_and_usage_on_the_responses_wire(
    llama: Callable[..., LlamaServer], real_config: Callable[..., CoreConfig]
) -> None:
    server = llama()
    session = await Session.open(real_config(server, wire_api="responses"))
    try:
        events = await turn(session, "Write a short note about the sea.")
    finally:
        await session.close()
    check_streamed_turn(events, server, real_config)


def check_streamed_turn(
    events: list[Any], server: LlamaServer, real_config: Callable[..., CoreConfig]
) -> None:
    assert completed(events), errors(events)
    deltas = of_type(events, "agent_message_delta")
    assert len(deltas) > 1  # streamed, not one block
    message = of_type(events, "agent_message")[-1].text
    assert message and message == "".join(event.delta for event in deltas)
    usage = of_type(events, "token_count")[-1]
    assert usage.source == "api" and not usage.approximate
    assert 0 < usage.output <= MAX_REPLY
    # The server counts the prompt with Gemma's tokenizer; Coco's estimate of the same text
    # (instructions + message) is of the same size.
    counter = TokenCounter(MODEL, real_config(server).tokenizer_cache_dir, allow_download=False)
    counter.wait_ready(30)
    estimate = counter.count("You are a test assistant.") + counter.count(
        "Write a short note about the sea."
    )
    assert estimate / 2 <= usage.input <= estimate * 3
    assert usage.total == usage.input + usage.output
    assert usage.context_window == server.context


async def test_strict_template_with_a_workspace_after_compaction_and_undo(
    llama: Callable[..., LlamaServer], real_config: Callable[..., CoreConfig], tmp_path: Path
) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text("alpha\n")
    server = llama(template="strict")
    session = await Session.open(real_config(server, workspace=tmp_path / "ws"))
    try:
        # The environment block and the first message: two user messages in a row.
        first = await turn(session, "What is in my notes?")
        assert completed(first), errors(first)
        assert [item.get("role") for item in session.history()][:2] == ["user", "user"]

        compaction = await run(session, ops.Compact(), timeout=TURN_TIMEOUT)
        compacted = of_type(compaction, "context_compacted")
        assert compacted and compacted[0].strategy == "local", errors(compaction)
        # Kept user messages + the summary (user messages all) + the next question.
        after = await turn(session, "Second question about lakes.")
        assert completed(after), errors(after)

        before = session.history()
        compaction = await run(session, ops.Compact(), timeout=TURN_TIMEOUT)
        assert of_type(compaction, "context_compacted"), errors(compaction)
        assert session.history() != before
        await session.submit(ops.UndoCompaction())
        undo = await collect(session, "compaction_undone", TURN_TIMEOUT)
        assert of_type(undo, "compaction_undone"), types(undo)
        assert session.history() == before
    finally:
        await session.close()


async def test_remote_compaction_404_falls_back_and_is_remembered(
    llama: Callable[..., LlamaServer], real_config: Callable[..., CoreConfig]
) -> None:
    server = llama()
    config = real_config(
        server, wire_api="responses", remote_compaction=True, remote_fallback_to_local=True
    )
    session = await Session.open(config)
    try:
        assert completed(await turn(session, "Tell me about mountains."))
        first = await run(session, ops.Compact(), timeout=TURN_TIMEOUT)
        assert of_type(first, "context_compacted")[0].strategy == "remote_then_local"
        assert "remote" in [event.stage for event in of_type(first, "compaction_progress")]
        await session.submit(ops.UndoCompaction())
        assert of_type(await collect(session, "compaction_undone"), "compaction_undone")
        second = await run(session, ops.Compact(), timeout=TURN_TIMEOUT)
    finally:
        await session.close()
    # The 404 is remembered for this server: no second try of /responses/compact.
    assert of_type(second, "context_compacted")[0].strategy == "local"
    assert "remote" not in [event.stage for event in of_type(second, "compaction_progress")]


async def test_a_request_larger_than_the_window_is_a_context_overflow(
    llama: Callable[..., LlamaServer],
) -> None:
    server = llama()
    provider = ChatCompletionsProvider(server.url, "")
    request = ModelRequest(
        model=MODEL, instructions="", input=[user_message("lorem ipsum dolor " * 3000)]
    )
    try:
        with pytest.raises(ProviderError) as info:
            async for _ in provider.stream(request):
                pass
    finally:
        await provider.close()
    assert info.value.category == "context_overflow"
    assert "exceeds the available context size" in info.value.message


async def test_automatic_compaction_on_a_4096_window_and_two_turns_after_it(
    llama: Callable[..., LlamaServer], real_config: Callable[..., CoreConfig]
) -> None:
    server = llama()
    config = real_config(server, auto_compact_token_limit=4096 * 90 // 100)
    session = await Session.open(config)
    compactions: list[Any] = []
    answered_after = 0  # turns answered after the first compaction's
    try:
        for index in range(20):
            events = await turn(session, f"Question {index}: tell me about the number {index}.")
            assert completed(events), (index, errors(events))
            answered_after += bool(compactions)
            compactions += of_type(events, "context_compacted")
            if answered_after == 2:  # the conversation went on over the compacted history
                break
    finally:
        await session.close()
    assert compactions, "twenty 256-token replies overflow 4096 tokens: something compacted"
    assert answered_after == 2, "two turns answered over the compacted history"
    for compacted in compactions:
        assert compacted.summary.strip()
        assert not compacted.summary_cut_short  # room for the summary was kept in the window
        assert compacted.tokens_after < compacted.tokens_before
        # Made room: at most half the auto-compact limit, the new message aside.
        assert compacted.tokens_after - compacted.incoming_tokens <= 4096 * 90 // 100 // 2


async def test_an_oversized_message_then_a_normal_one_is_answered(
    llama: Callable[..., LlamaServer], real_config: Callable[..., CoreConfig]
) -> None:
    server = llama()
    session = await Session.open(real_config(server))
    try:
        assert completed(await turn(session, "Hello."))
        await turn(session, "lorem ipsum dolor " * 3000)  # more than the whole window
        events = await turn(session, "A normal question.")
    finally:
        await session.close()
    assert completed(events), errors(events)
