"""Recognising a context overflow: the error codes, types and phrases with which servers say
the input does not fit the model's context window (compaction-spec.md §5)."""

from __future__ import annotations

import re

# Phrases servers use for "the input does not fit the context window".
_OVERFLOW_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"prompt is too long",  # Anthropic
        r"input is too long for requested model",  # Bedrock
        r"exceeds the context window",  # OpenAI
        r"input token count.*exceeds the maximum",  # Google
        r"maximum prompt length is \d+",  # xAI
        r"reduce the length of the messages",  # Groq, OpenAI chat
        r"maximum context length is \d+ tokens",  # OpenAI chat, vLLM, OpenRouter
        r"exceeds the limit of \d+",  # Copilot
        r"exceeds the available context size",  # llama.cpp
        r"greater than the context length",  # LM Studio
        r"n_keep.*>=.*n_ctx",  # LM Studio
        r"context the overflows",  # LM Studio (sic)
        r"the input length exceeds the context length",  # Ollama, truncate off
        r"too large for model with \d+ maximum context length",  # Mistral
        r"context length exceeded",
        r"too many tokens",
        r"token limit exceeded",
    )
)
_OVERFLOW_CODES = frozenset({"context_length_exceeded"})
_OVERFLOW_TYPES = frozenset({"exceed_context_size_error"})


def is_context_overflow(code: str | None, message: str, type_: str | None = None) -> bool:
    """True when an error says the input does not fit the model's context window.

    Matches OpenAI's ``context_length_exceeded`` code, llama.cpp's ``exceed_context_size_error``
    type, and the phrases other servers put in their messages. An MLX "Prefill context too large
    for available memory" is a memory error, not an overflow, and matches none of them.
    """
    if code in _OVERFLOW_CODES or type_ in _OVERFLOW_TYPES:
        return True
    return any(pattern.search(message) for pattern in _OVERFLOW_PATTERNS)
