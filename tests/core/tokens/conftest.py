"""What the token counter's tests share: a process cache of their own, a tiny encoding."""

from __future__ import annotations

import pytest
import tiktoken

from app.core.tokens import counter as tokens


@pytest.fixture
def fresh_encodings(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> tokens._SharedEncodings:
    """A process cache with nothing loaded, so each test sees its own loads, and no shipped
    tokenizer files (an install that lost them): what is left is the cache and the download."""
    shared = tokens._SharedEncodings()
    monkeypatch.setattr(tokens, "_SHARED", shared)
    monkeypatch.setattr(tokens, "PACKAGED_TOKENIZER_DIR", tmp_path_factory.mktemp("no-package"))
    return shared


def byte_encoding() -> tiktoken.Encoding:
    """A tiny encoding where every byte is one token (so exact != estimate)."""
    return tiktoken.Encoding(
        "bytes",
        pat_str=r"\S+|\s+",
        mergeable_ranks={bytes([i]): i for i in range(256)},
        special_tokens={},
    )
