"""The counter's background loads (their threads, keys, failures and log) and huge texts counted
while the tokenizer loads, after it failed, and kept once refined."""

from __future__ import annotations

import asyncio
import logging
import threading
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import tiktoken

from app.core.tokens import counter as tokens
from app.core.tokens.counter import TokenCounter, approx_tokens
from app.core.tokens.tiktoken_counts import sampled_estimate
from tests.conftest import TIKTOKEN_CACHE, needs_tiktoken
from tests.core.tokens.conftest import byte_encoding

HUGE = 1_000  # HUGE_TEXT_CHARS in these tests


class HeldLoads:
    """Loads that wait for :meth:`release`, then give the byte encoding or raise ``failure``."""

    def __init__(self) -> None:
        self.released = threading.Event()
        self.failure: Exception | None = None
        self.calls: list[tuple[str, Path, bool]] = []

    def __call__(self, spec: Any, folder: Path, allow_download: bool) -> tiktoken.Encoding:
        self.calls.append((spec.name, folder, allow_download))
        assert self.released.wait(10)
        if self.failure is not None:
            raise self.failure
        return byte_encoding()

    def release(self, failure: Exception | None = None) -> None:
        self.failure = failure
        self.released.set()


@pytest.fixture
def held(
    fresh_encodings: tokens._SharedEncodings, monkeypatch: pytest.MonkeyPatch
) -> HeldLoads:
    loads = HeldLoads()
    monkeypatch.setattr(tokens, "_load_encoding", loads)
    monkeypatch.setattr(tokens, "HUGE_TEXT_CHARS", HUGE)
    return loads


def huge_text(n: int = 0) -> str:
    return f"text {n}: " + "é word " * (HUGE // 7 + 1)


# --- the loads -----------------------------------------------------------------------------------


def test_a_load_runs_in_a_daemon_thread_named_after_its_encoding(
    held: HeldLoads, tmp_path: Path
) -> None:
    counter = TokenCounter("gpt-4o", cache_dir=tmp_path)
    threads = [t for t in threading.enumerate() if t.name == "tiktoken-load-o200k_base"]
    # A hung download must never keep the app from exiting; the name shows in a thread dump.
    assert len(threads) == 1 and threads[0].daemon
    held.release()
    assert counter.wait_ready(5)


def test_loads_of_other_encodings_folders_or_download_rights_run_apart(
    held: HeldLoads, tmp_path: Path
) -> None:
    counters = [
        TokenCounter("gpt-4o", cache_dir=tmp_path / "a"),
        TokenCounter("gpt-4", cache_dir=tmp_path / "a"),  # cl100k_base
        TokenCounter("gpt-4o", cache_dir=tmp_path / "b"),
        TokenCounter("gpt-4o", cache_dir=tmp_path / "a", allow_download=False),
        TokenCounter("gpt-5", cache_dir=tmp_path / "a"),  # o200k_base, folder a: joins the first
    ]
    held.release()
    assert all(counter.wait_ready(5) for counter in counters)
    assert sorted(held.calls) == sorted([
        ("o200k_base", tmp_path / "a", True),
        ("cl100k_base", tmp_path / "a", True),
        ("o200k_base", tmp_path / "b", True),
        ("o200k_base", tmp_path / "a", False),
    ])


def test_a_counter_may_download_unless_told_not_to(
    fresh_encodings: tokens._SharedEncodings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    urls: list[str] = []

    def offline(url: str, timeout: float) -> None:
        urls.append(url)
        raise OSError("network is unreachable (blocked by the test)")

    monkeypatch.setattr(urllib.request, "urlopen", offline)
    assert TokenCounter("gpt-4o", cache_dir=tmp_path).wait_ready(5) is False
    assert urls == [tokens._ENCODING_SPECS["o200k_base"].url]


def test_a_failed_load_is_logged_with_its_encoding_and_reason(
    held: HeldLoads, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=tokens.__name__)
    counter = TokenCounter("gpt-4o", cache_dir=tmp_path)
    held.release(ValueError("the file is damaged"))
    assert counter.wait_ready(5) is False
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.INFO, "exact token counts unavailable (o200k_base): the file is damaged")
    ]


@pytest.mark.parametrize(
    ("allow_download", "failure", "stops_downloads"),
    [
        (True, OSError("network is unreachable"), True),  # offline: not tried again this run
        (True, ValueError("checksum mismatch"), False),  # a bad file: the network works
        (False, FileNotFoundError("no file"), False),  # no download was tried
    ],
)
def test_only_a_download_that_failed_on_the_network_stops_later_ones(
    held: HeldLoads,
    fresh_encodings: tokens._SharedEncodings,
    tmp_path: Path,
    allow_download: bool,
    failure: Exception,
    stops_downloads: bool,
) -> None:
    assert fresh_encodings.download_failed is False
    counter = TokenCounter("gpt-4o", cache_dir=tmp_path, allow_download=allow_download)
    held.release(failure)
    assert counter.wait_ready(5) is False
    assert fresh_encodings.download_failed is stops_downloads
    later = TokenCounter("gpt-4", cache_dir=tmp_path)
    assert later.wait_ready(5) is False
    assert held.calls[-1] == ("cl100k_base", tmp_path, not stops_downloads)


def test_waiting_for_a_load_gives_up_at_its_timeout(held: HeldLoads, tmp_path: Path) -> None:
    counter = TokenCounter("gpt-4o", cache_dir=tmp_path)
    assert counter.wait_ready(0.01) is False and counter.state == "loading"
    held.release()
    assert counter.wait_ready(5) and counter.state == "ready"


def test_without_a_download_a_missing_file_is_named_with_its_folder(
    fresh_encodings: tokens._SharedEncodings, tmp_path: Path
) -> None:
    spec = tokens._ENCODING_SPECS["o200k_base"]
    with pytest.raises(FileNotFoundError) as raised:
        tokens._load_encoding(spec, tmp_path, allow_download=False)
    assert str(raised.value) == f"no o200k_base tokenizer file in {tmp_path}"


@needs_tiktoken
def test_a_loaded_encoding_bears_its_name(fresh_encodings: tokens._SharedEncodings) -> None:
    spec = tokens._ENCODING_SPECS["cl100k_base"]
    assert tokens._load_encoding(spec, TIKTOKEN_CACHE, allow_download=False).name == "cl100k_base"


# --- huge texts while the tokenizer loads, after it failed, once refined --------------------------


def test_a_huge_text_counted_while_loading_is_estimated_and_refined_when_ready(
    held: HeldLoads, tmp_path: Path
) -> None:
    counter = TokenCounter("gpt-4o", cache_dir=tmp_path)
    asked: list[int] = []
    counter.on_estimate = lambda: asked.append(1)
    text = huge_text()
    assert counter.count(text) == sampled_estimate(None, text) != len(text.encode())
    assert counter.estimating and asked == [1]

    async def refine_then_release() -> list[str]:
        refining = asyncio.ensure_future(counter.refine())
        await asyncio.sleep(0)  # refine is waiting for the load
        assert not refining.done()
        held.release()
        return await refining

    assert asyncio.run(refine_then_release()) == [text]
    assert counter.count(text) == len(text.encode())  # the byte encoding's exact count
    assert not counter.estimating


def test_a_huge_text_is_refined_by_the_byte_rule_when_the_load_failed(
    held: HeldLoads, tmp_path: Path
) -> None:
    counter = TokenCounter("gpt-4o", cache_dir=tmp_path)
    text = huge_text()
    counter.count(text)
    assert counter.estimating
    held.release(ValueError("damaged"))
    assert asyncio.run(counter.refine()) == [text]
    assert counter.count(text) == approx_tokens(text)
    assert not counter.estimating


def test_a_huge_text_gets_the_byte_rule_and_no_estimate_once_the_load_failed(
    held: HeldLoads, tmp_path: Path
) -> None:
    counter = TokenCounter("gpt-4o", cache_dir=tmp_path)
    held.release(ValueError("damaged"))
    assert counter.wait_ready(5) is False and counter.state == "unavailable"
    asked: list[int] = []
    counter.on_estimate = lambda: asked.append(1)
    text = huge_text()
    assert counter.count(text) == approx_tokens(text)
    assert not counter.estimating and asked == []


def test_a_counter_that_found_its_encoding_loaded_refines_at_once(
    held: HeldLoads, tmp_path: Path
) -> None:
    held.release()
    assert TokenCounter("gpt-4o", cache_dir=tmp_path).wait_ready(5)
    counter = TokenCounter("gpt-4o", cache_dir=tmp_path)  # no load of its own
    assert counter._load is None and counter.state == "ready"
    text = huge_text()
    assert counter.count(text) == sampled_estimate(byte_encoding(), text)
    assert asyncio.run(counter.refine()) == [text]
    assert counter.count(text) == len(text.encode())


def test_the_newest_refined_counts_are_kept(held: HeldLoads, tmp_path: Path) -> None:
    held.release()
    counter = TokenCounter("gpt-4o", cache_dir=tmp_path)
    assert counter.wait_ready(5)
    texts = [huge_text(n) for n in range(tokens._HUGE_COUNTS_KEPT + 1)]
    for text in texts:
        counter.count(text)
    assert asyncio.run(counter.refine()) == texts
    assert counter.refined_texts() == texts[1:]  # the oldest one dropped
