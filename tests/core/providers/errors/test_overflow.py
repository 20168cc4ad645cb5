"""Recognising "the input does not fit the context window" from codes, types and phrases."""

from __future__ import annotations

import pytest

from app.core.providers.errors.overflow import is_context_overflow


def test_the_overflow_code_and_type_are_recognised_whatever_the_message() -> None:
    assert is_context_overflow("context_length_exceeded", "something went wrong")
    assert is_context_overflow(None, "bad request", "exceed_context_size_error")


@pytest.mark.parametrize(
    "message",
    [
        "This model's maximum context length is 8192 tokens. However, you requested 9000",
        "the request exceeds the available context size, try increasing it",  # llama.cpp
        "Trying to keep the first 5000 tokens when context the overflows",  # LM Studio
        "the input length exceeds the context length",  # Ollama
        "PROMPT IS TOO LONG: 215000 tokens > 200000 maximum",  # any case
    ],
)
def test_the_phrases_servers_use_are_recognised(message: str) -> None:
    assert is_context_overflow(None, message)


@pytest.mark.parametrize(
    "message",
    [
        "Prefill context too large for available memory",  # MLX: memory, not the window
        "rate limit exceeded",
        "invalid api key",
    ],
)
def test_other_failures_are_not_taken_for_an_overflow(message: str) -> None:
    assert not is_context_overflow("server_error", message, "server_error")
