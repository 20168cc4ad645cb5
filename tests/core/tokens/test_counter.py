"""Token estimates, middle truncation and the non-blocking tiktoken counter."""

from __future__ import annotations

import hashlib
import inspect
import io
import os
import threading
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import tiktoken

from app.core.items import assistant_message, function_call, user_message
from app.core.tokens import counter as tokens
from app.core.tokens.counter import (
    TokenCounter,
    approx_tokens,
    encoding_name_for_model,
    truncate_middle,
)
from tests.conftest import TIKTOKEN_CACHE, needs_tiktoken
from tests.core.tokens.conftest import byte_encoding

SHARED_CACHE = TIKTOKEN_CACHE
needs_cache = needs_tiktoken


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every way out is blocked (urllib and raw sockets); returns what was attempted."""
    import socket

    attempts: list[str] = []

    def refuse(*args: object, **kwargs: object) -> None:
        attempts.append(repr(args[:2]))
        raise OSError("network is unreachable (blocked by the test)")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    return attempts


# --- approx_tokens -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("a", 1),
        ("abcd", 1),
        ("abcde", 2),
        ("é", 1),
        ("€€", 2),
        ("😀😀", 2),
        ("x" * 401, 101),
    ],
)
def test_approx_tokens_is_ceil_of_utf8_bytes_over_four(text: str, expected: int) -> None:
    assert approx_tokens(text) == expected


def test_approx_tokens_survives_lone_surrogate() -> None:
    assert approx_tokens("\ud800") == 1


# --- encoding_name_for_model -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("gpt-3.5-turbo", "cl100k_base"),
        ("gpt-3.5-turbo-0125", "cl100k_base"),
        ("gpt-35-turbo", "cl100k_base"),
        ("gpt-4", "cl100k_base"),
        ("gpt-4-turbo", "cl100k_base"),
        ("gpt-4-0613", "cl100k_base"),
        ("GPT-4", "cl100k_base"),
        ("openai/gpt-4", "cl100k_base"),
        ("ft:gpt-4-0613:org::id", "cl100k_base"),
        ("text-embedding-3-small", "cl100k_base"),
        ("text-embedding-ada-002", "cl100k_base"),
        ("gpt-4o", "o200k_base"),
        ("gpt-4o-mini", "o200k_base"),
        ("gpt-4.1", "o200k_base"),
        ("gpt-4.1-mini", "o200k_base"),
        ("gpt-4.5-preview", "o200k_base"),
        ("gpt-5", "o200k_base"),
        ("o3-mini", "o200k_base"),
        ("llama3.1:8b", "o200k_base"),
        ("", "o200k_base"),
    ],
)
def test_encoding_name_for_model(model: str, encoding: str) -> None:
    assert encoding_name_for_model(model) == encoding


# --- truncate_middle ---------------------------------------------------------------------------


def test_truncate_middle_is_noop_when_text_fits() -> None:
    text = "x" * 40  # exactly 10 tokens
    assert truncate_middle(text, 10) == (text, 0)
    assert truncate_middle("", 0) == ("", 0)


def test_truncate_middle_keeps_head_and_tail_around_marker() -> None:
    text = "H" * 100 + "M" * 800 + "T" * 100  # 1000 bytes = 250 tokens
    out, removed = truncate_middle(text, 50)  # keep 200 bytes: 100 head + 100 tail
    assert out == "H" * 100 + "…200 tokens truncated…" + "T" * 100  # joined as Codex does
    assert removed == 200


def test_truncate_middle_result_size_is_about_the_budget() -> None:
    text = "abcdefghij" * 10_000  # 25 000 tokens
    out, removed = truncate_middle(text, 1_000)
    kept = out.replace(f"…{removed} tokens truncated…", "")
    assert len(kept.encode()) == 4_000
    assert approx_tokens(out) <= 1_000 + 10
    assert removed == approx_tokens(text) - 1_000


def test_truncate_middle_never_splits_a_multibyte_character() -> None:
    text = "é" * 100 + "日本語" * 50 + "😀" * 100  # 2-, 3- and 4-byte characters
    for budget in range(1, 60):
        out, removed = truncate_middle(text, budget)
        assert removed > 0
        marker = f"…{removed} tokens truncated…"
        head, _, tail = out.partition(marker)
        assert marker in out
        assert text.startswith(head) and text.endswith(tail)
        assert len(head.encode()) <= budget * 2
        assert len(tail.encode()) <= budget * 4 - budget * 2
        assert "\ufffd" not in out
        # What was removed is accounted for, by estimate, from the bytes actually dropped.
        dropped = len(text.encode()) - len(head.encode()) - len(tail.encode())
        assert removed == -(-dropped // 4)


@pytest.mark.parametrize("budget", [0, -5])
def test_truncate_middle_with_no_budget_returns_only_the_marker(budget: int) -> None:
    text = "y" * 41  # 11 tokens
    assert truncate_middle(text, budget) == ("…11 tokens truncated…", 11)


# --- TokenCounter: file lookup -----------------------------------------------------------------


def test_cache_dir_resolution_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "env"))
    assert tokens.tokenizer_cache_dir(tmp_path / "given") == tmp_path / "given"
    assert tokens.tokenizer_cache_dir() == tmp_path / "env"
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR")
    assert tokens.tokenizer_cache_dir() == tokens.default_cache_dir() / "tiktoken"


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_cache_file_names_match_the_shared_cache(name: str) -> None:
    spec = tokens._ENCODING_SPECS[name]
    assert spec.cache_file_name == hashlib.sha1(spec.url.encode()).hexdigest()
    if SHARED_CACHE.is_dir():
        assert (SHARED_CACHE / spec.cache_file_name).is_file()


@needs_cache
@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_encoding_specs_agree_with_tiktoken(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Our copy of pattern, special tokens, URL and hash is what tiktoken itself builds."""
    from tiktoken_ext import openai_public

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(SHARED_CACHE))  # tiktoken reads only this
    constructor = openai_public.ENCODING_CONSTRUCTORS[name]
    theirs: dict[str, Any] = constructor()
    spec = tokens._ENCODING_SPECS[name]
    source = inspect.getsource(constructor)
    assert spec.url in source and spec.sha256 in source
    assert spec.pat_str == theirs["pat_str"]
    assert spec.special_tokens == theirs["special_tokens"]
    ours = tokens._parse_bpe((SHARED_CACHE / spec.cache_file_name).read_bytes())
    assert ours == theirs["mergeable_ranks"]


# --- TokenCounter: real encodings --------------------------------------------------------------


@needs_cache
@pytest.mark.parametrize(("model", "hello_world"), [("gpt-4", [15339, 1917]), ("gpt-4o", None)])
def test_counter_is_exact_with_the_shared_cache(model: str, hello_world: list[int] | None) -> None:
    counter = TokenCounter(model, cache_dir=SHARED_CACHE, allow_download=False)
    assert counter.wait_ready(30)
    assert counter.exact and counter.state == "ready"
    assert counter.count("hello world") == 2  # the estimate would say 3
    reference = tiktoken.Encoding(
        "ref",
        pat_str=tokens._ENCODING_SPECS[counter.encoding_name].pat_str,
        mergeable_ranks=tokens._parse_bpe(
            (
                SHARED_CACHE / tokens._ENCODING_SPECS[counter.encoding_name].cache_file_name
            ).read_bytes()
        ),
        special_tokens={},
    )
    if hello_world is not None:
        assert reference.encode("hello world") == hello_world
    text = "Compaction keeps the conversation going: 日本語, émojis 😀 and code `x = 1`.\n" * 20
    assert counter.count(text) == len(reference.encode(text))


@needs_cache
def test_counter_treats_special_token_text_as_plain_text() -> None:
    counter = TokenCounter("gpt-4o", cache_dir=SHARED_CACHE, allow_download=False)
    assert counter.wait_ready(30)
    assert counter.count("<|endoftext|>") > 1  # not an error, not the single special token


@needs_cache
def test_count_item_is_text_count_plus_overhead() -> None:
    counter = TokenCounter("gpt-4o", cache_dir=SHARED_CACHE, allow_download=False)
    assert counter.wait_ready(30)
    msg = assistant_message("hello world, how are you today?")
    call = function_call("read_file", '{"path": "a.txt"}', "call_1")
    assert counter.count_item(msg) == counter.count("hello world, how are you today?") + 4
    assert counter.count_item(call) == counter.count('read_file{"path": "a.txt"}') + 4


@needs_cache
def test_encrypted_content_counts_by_its_length_not_its_tokens() -> None:
    """Spec section 4: opaque encrypted content is estimated from its length."""
    counter = TokenCounter("gpt-4o", cache_dir=SHARED_CACHE, allow_download=False)
    assert counter.wait_ready(30)
    blob = "gAAAAABn" + "Zm9vYmFyYmF6cXV4" * 500  # base64-like, 8 008 characters
    compaction = {"type": "compaction", "id": "cmp_1", "encrypted_content": blob}
    reasoning = {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "Checked the config first."}],
        "encrypted_content": blob,
    }
    assert counter.count(blob) != approx_tokens(blob)  # tokenising it would give another figure
    assert counter.count_item(compaction) == approx_tokens(blob) + 4
    assert counter.count_item(reasoning) == (
        counter.count("Checked the config first.") + approx_tokens(blob) + 4
    )


@needs_cache
def test_encodings_are_shared_per_process(
    fresh_encodings: tokens._SharedEncodings, tmp_path: Path
) -> None:
    first = TokenCounter("gpt-4o", cache_dir=SHARED_CACHE, allow_download=False)
    assert first.wait_ready(30)
    # Same encoding, and a folder without the file: ready at once, from the process cache.
    second = TokenCounter("gpt-4.1", cache_dir=tmp_path, allow_download=False)
    assert second.exact and second.state == "ready"
    assert second._encoder is first._encoder


# --- the shipped tokenizer files -----------------------------------------------------------------

# "hello world" and a mixed text (accents, CJK, emoji, code), as tiktoken itself encodes them.
HELLO_WORLD_IDS = {"o200k_base": [24912, 2375], "cl100k_base": [15339, 1917]}
MIXED_TEXT = (
    "Coco keeps the full transcript — ünïcödé, 日本語, emoji 😀, code: def f(x): return x**2\n"
) * 3
MIXED_TEXT_TOKENS = {"o200k_base": 87, "cl100k_base": 102}


@pytest.mark.parametrize(("model", "name"), [("gpt-4.1", "o200k_base"), ("gpt-4", "cl100k_base")])
def test_shipped_tokenizer_counts_exactly_with_no_network_and_no_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, no_network: list[str], model: str, name: str
) -> None:
    monkeypatch.setattr(tokens, "_SHARED", tokens._SharedEncodings())  # nothing loaded yet
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "env-cache"))  # empty too
    cache = tmp_path / "no-cache"  # never created: a machine that never had a network
    counter = TokenCounter(model, cache_dir=cache, allow_download=True)  # it may not need to
    assert counter.wait_ready(30)
    assert counter.encoding_name == name and counter.state == "ready"
    assert counter._encoder is not None
    assert counter._encoder.encode_ordinary("hello world") == HELLO_WORLD_IDS[name]
    assert counter.count(MIXED_TEXT) == MIXED_TEXT_TOKENS[name] != approx_tokens(MIXED_TEXT)
    assert no_network == []  # nothing was even attempted
    assert not cache.exists() and not (tmp_path / "env-cache").exists()


@needs_cache
@pytest.mark.parametrize("name", sorted(tokens._ENCODING_SPECS))
def test_shipped_tokenizer_agrees_with_tiktoken(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str
) -> None:
    monkeypatch.setattr(tokens, "_SHARED", tokens._SharedEncodings())
    counter = TokenCounter("gpt-4" if name == "cl100k_base" else "gpt-4o", tmp_path, False)
    assert counter.wait_ready(30)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(SHARED_CACHE))
    reference = tiktoken.get_encoding(name)
    assert counter.count(MIXED_TEXT) == len(reference.encode_ordinary(MIXED_TEXT))


@pytest.mark.parametrize("name", sorted(tokens._ENCODING_SPECS))
def test_shipped_tokenizer_files_match_their_checksums(name: str) -> None:
    spec = tokens._ENCODING_SPECS[name]
    data = (tokens.PACKAGED_TOKENIZER_DIR / f"{name}.tiktoken").read_bytes()
    assert hashlib.sha256(data).hexdigest() == spec.sha256


def test_shipped_tokenizer_files_are_package_data() -> None:
    """The wheel carries them (pyproject's package-data) and so does the bundle (the spec)."""
    import fnmatch
    import tomllib

    repo = Path(tokens.__file__).resolve().parents[3]
    config = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["app.core.tokens"]
    core = repo / "app" / "core" / "tokens"
    shipped = {
        path.relative_to(core).as_posix()
        for path in tokens.PACKAGED_TOKENIZER_DIR.iterdir()
        if any(fnmatch.fnmatch(path.relative_to(core).as_posix(), p) for p in patterns)
    }
    assert shipped == {f"data/tiktoken/{name}.tiktoken" for name in tokens._ENCODING_SPECS}
    spec_text = (repo / "packaging" / "coco.spec").read_text(encoding="utf-8")
    assert '"app/core/tokens/data/tiktoken"' in spec_text


@needs_cache
def test_damaged_shipped_file_is_ignored_for_the_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(tokens, "_SHARED", tokens._SharedEncodings())
    package = tmp_path / "package"
    package.mkdir()
    (package / "o200k_base.tiktoken").write_bytes(b"aGVsbG8= 0\n")
    monkeypatch.setattr(tokens, "PACKAGED_TOKENIZER_DIR", package)
    counter = TokenCounter("gpt-4o", cache_dir=SHARED_CACHE, allow_download=False)
    assert counter.wait_ready(30)
    assert counter.count(MIXED_TEXT) == MIXED_TEXT_TOKENS["o200k_base"]
    assert "does not match its checksum" in caplog.text


# --- TokenCounter: never blocks, degrades to estimates -----------------------------------------


def test_missing_file_without_download_is_unavailable_quickly(
    fresh_encodings: tokens._SharedEncodings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("must not try the network")

    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    env_before = dict(os.environ)
    counter = TokenCounter("gpt-4o", cache_dir=tmp_path, allow_download=False)
    assert counter.wait_ready(5) is False
    assert counter.state == "unavailable" and not counter.exact
    assert counter.count("hello world") == approx_tokens("hello world")
    assert counter.count_item(user_message("abcdefgh")) == 2 + 4
    assert dict(os.environ) == env_before
    assert list(tmp_path.iterdir()) == []


def test_corrupt_cache_file_is_not_used(
    fresh_encodings: tokens._SharedEncodings, tmp_path: Path
) -> None:
    spec = tokens._ENCODING_SPECS["o200k_base"]
    (tmp_path / spec.cache_file_name).write_bytes(b"aGVsbG8= 0\n")
    counter = TokenCounter("gpt-4o", cache_dir=tmp_path, allow_download=False)
    assert counter.wait_ready(5) is False
    assert counter.state == "unavailable"


def test_constructor_returns_while_load_is_stuck(
    fresh_encodings: tokens._SharedEncodings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()
    calls: list[str] = []

    def slow_load(spec: Any, folder: Path, allow_download: bool) -> tiktoken.Encoding:
        calls.append(spec.name)
        assert release.wait(10)
        return byte_encoding()

    monkeypatch.setattr(tokens, "_load_encoding", slow_load)
    counter = TokenCounter("gpt-4o", cache_dir=tmp_path)
    joiner = TokenCounter("gpt-5", cache_dir=tmp_path)  # same encoding, same folder: joins
    assert counter.state == "loading" and not counter.exact
    assert counter.count("abcdef") == 2  # estimate meanwhile
    release.set()
    assert counter.wait_ready(5) and joiner.wait_ready(5)
    assert counter.count("abcdef") == 6  # the byte encoding: one token per byte
    assert calls == ["o200k_base"]  # one load for both counters


def test_hung_download_never_blocks_and_failure_means_unavailable(
    fresh_encodings: tokens._SharedEncodings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()

    def hanging_urlopen(url: str, timeout: float) -> io.BytesIO:
        assert release.wait(10)
        raise OSError("network unreachable")

    monkeypatch.setattr(urllib.request, "urlopen", hanging_urlopen)
    counter = TokenCounter("gpt-4o", cache_dir=tmp_path, allow_download=True)
    assert counter.state == "loading"  # returned while the download still hangs
    assert counter.count("hello world") == approx_tokens("hello world")
    release.set()
    assert counter.wait_ready(5) is False
    assert counter.state == "unavailable"


@needs_cache
def test_download_is_verified_and_cached(
    fresh_encodings: tokens._SharedEncodings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = tokens._ENCODING_SPECS["cl100k_base"]
    payload = (SHARED_CACHE / spec.cache_file_name).read_bytes()
    urls: list[str] = []

    def fake_urlopen(url: str, timeout: float) -> io.BytesIO:
        urls.append(url)
        return io.BytesIO(payload)

    monkeypatch.setattr(urllib.request, "urlopen", fake_urlopen)
    folder = tmp_path / "new" / "cache"
    counter = TokenCounter("gpt-4", cache_dir=folder, allow_download=True)
    assert counter.wait_ready(30)
    assert urls == [spec.url]
    assert (folder / spec.cache_file_name).read_bytes() == payload
    assert [p.name for p in folder.iterdir()] == [spec.cache_file_name]  # no temp file left


def test_download_with_wrong_checksum_is_rejected(
    fresh_encodings: tokens._SharedEncodings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        urllib.request, "urlopen", lambda url, timeout: io.BytesIO(b"aGVsbG8= 0\n")
    )
    counter = TokenCounter("gpt-4o", cache_dir=tmp_path, allow_download=True)
    assert counter.wait_ready(5) is False
    assert counter.state == "unavailable"
    assert list(tmp_path.iterdir()) == []


def test_failed_load_can_be_retried_by_a_later_counter(
    fresh_encodings: tokens._SharedEncodings, tmp_path: Path
) -> None:
    first = TokenCounter("gpt-4o", cache_dir=tmp_path, allow_download=False)
    assert first.wait_ready(5) is False
    if not SHARED_CACHE.is_dir():
        pytest.skip("shared tiktoken cache folder is missing")
    spec = tokens._ENCODING_SPECS["o200k_base"]
    (tmp_path / spec.cache_file_name).write_bytes(
        (SHARED_CACHE / spec.cache_file_name).read_bytes()
    )
    second = TokenCounter("gpt-4o", cache_dir=tmp_path, allow_download=False)
    assert second.wait_ready(30)
    assert first.exact and first.state == "ready"  # the earlier counter upgrades too


# --- huge texts: an estimate at once, the exact count after -------------------------------------


@needs_cache
async def test_a_huge_text_is_estimated_then_refined_to_the_exact_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from app.core.conversation.history import ContextHistory

    monkeypatch.setattr(tokens, "HUGE_TEXT_CHARS", 50_000)
    counter = TokenCounter("gpt-4.1", SHARED_CACHE, allow_download=False)
    assert counter.wait_ready(60)
    text = "request 42 served in 12 ms, cache hit, status 200 OK\n" * 3000
    encoder = counter._current_encoder()
    assert encoder is not None
    exact = len(encoder.encode_ordinary(text))
    scheduled: list[int] = []
    counter.on_estimate = lambda: scheduled.append(1)
    history = ContextHistory(counter)
    history.append(user_message("paste"))
    history.append(assistant_message(text))
    estimate = counter.count(text)
    # An estimate from samples, made once and kept; the owner is asked to refine it.
    assert counter.estimating and scheduled == [1]
    assert estimate != exact and abs(estimate - exact) <= exact // 10
    before = history.estimate()

    assert await counter.refine() == [text]
    assert not counter.estimating and counter.count(text) == exact
    assert history.recount([text])
    # The totals are those of a history counted exactly from the start.
    exact_history = ContextHistory(counter)
    exact_history.append(user_message("paste"))
    exact_history.append(assistant_message(text))
    assert history.estimate() == exact_history.estimate() == before - estimate + exact
    assert not history.recount([text])  # nothing left to correct
