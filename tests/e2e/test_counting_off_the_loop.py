"""A long reply, message or tool output is tokenised in a worker thread, not on the event
loop's thread (which is the window's, under qasync): 0.2–0.6 s for a megabyte."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import tiktoken

from app.core import Session, ops
from app.core.tokens import tiktoken_counts as tokens
from app.demo import Reply
from tests.conftest import needs_tiktoken, run

LONG = "word" * 15_000  # 60 000 characters, one unbroken run


@pytest.fixture
def tokenised_on(monkeypatch: pytest.MonkeyPatch) -> list[tuple[bool, int]]:
    """(on the calling test's thread?, length) of every text tiktoken encodes, whichever path."""
    seen: list[tuple[bool, int]] = []
    main = threading.main_thread()
    original_ordinary = tiktoken.Encoding.encode_ordinary

    def encode_ordinary(self: Any, text: str) -> Any:
        seen.append((threading.current_thread() is main, len(text)))
        return original_ordinary(self, text)

    monkeypatch.setattr(tiktoken.Encoding, "encode_ordinary", encode_ordinary)
    original_length = getattr(tokens, "_encoded_length", None)
    if original_length is not None:

        def encoded_length(encoder: Any, text: str) -> int:
            seen.append((threading.current_thread() is main, len(text)))
            return original_length(encoder, text)

        monkeypatch.setattr(tokens, "_encoded_length", encoded_length)
    return seen


@needs_tiktoken
async def test_a_long_reply_and_message_are_counted_off_the_loop_thread(
    server: Any, make_config: Any, tokenised_on: list[tuple[bool, int]]
) -> None:
    session = await Session.open(make_config())
    assert session._counter.wait_ready(60)
    server.enqueue(Reply(text=LONG, chunk_size=4000))
    events = await run(session, ops.UserTurn(text="x" * 50_000))
    assert events[-1].status == "completed"
    long_ones = [(on_main, length) for on_main, length in tokenised_on if length >= 50_000]
    # Both were counted (the reply and the message), each in a worker thread, and only once.
    assert sorted(length for _main, length in long_ones) == [50_000, 60_000]
    assert not any(on_main for on_main, _length in long_ones)
    assert session.transcript()[-1]["item"]["content"][0]["text"] == LONG
    await session.close()
