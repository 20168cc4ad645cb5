"""The tokenizer's BPE files: the encoding a model uses, the cache folder and its file names,
checksums, and the download that fills the cache."""

from __future__ import annotations

import base64
import hashlib
import io
import urllib.request
from pathlib import Path

import pytest

from app.core.system.dirs import default_cache_dir
from app.core.tokens import tokenizer_files
from app.core.tokens.tokenizer_files import (
    _ENCODING_SPECS,
    _download_bpe,
    _EncodingSpec,
    _parse_bpe,
    _read_cached_bpe,
    encoding_name_for_model,
    tokenizer_cache_dir,
)

DATA = b"".join(base64.b64encode(bytes([i])) + b" %d\n" % i for i in range(4))


def spec_for(data: bytes) -> _EncodingSpec:
    return _EncodingSpec(
        name="tiny",
        url="https://example.invalid/encodings/tiny.tiktoken",
        sha256=hashlib.sha256(data).hexdigest(),
        pat_str=r"\S+|\s+",
        special_tokens={},
    )


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("gpt-4", "cl100k_base"),
        ("gpt-4-0613", "cl100k_base"),
        ("ft:gpt-4-0613:acme", "cl100k_base"),
        ("openai/gpt-3.5-turbo", "cl100k_base"),
        ("text-embedding-3-small", "cl100k_base"),
        ("gpt-4o", "o200k_base"),
        ("GPT-4.1", "o200k_base"),
        ("some-local-model", "o200k_base"),
        ("davinci-002", "cl100k_base"),
        ("babbage-002", "cl100k_base"),
        # The last part of a path names the model, however many parts come before it.
        ("hub/openai/gpt-4", "cl100k_base"),
    ],
)
def test_the_encoding_a_model_uses(model: str, encoding: str) -> None:
    assert encoding_name_for_model(model) == encoding
    assert encoding in _ENCODING_SPECS


def test_the_cache_folder_is_given_then_the_environment_then_the_apps(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "env"))
    assert tokenizer_cache_dir(tmp_path / "given") == tmp_path / "given"
    assert tokenizer_cache_dir() == tmp_path / "env"
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR")
    assert tokenizer_cache_dir() == default_cache_dir() / "tiktoken"


def test_a_cached_file_is_used_only_when_its_checksum_matches(tmp_path: Path) -> None:
    spec = spec_for(DATA)
    # tiktoken's cache key: the sha1 of the file's URL.
    assert spec.cache_file_name == hashlib.sha1(spec.url.encode()).hexdigest()
    assert _read_cached_bpe(spec, tmp_path) is None  # no file
    (tmp_path / spec.cache_file_name).write_bytes(DATA + b"tampered")
    assert _read_cached_bpe(spec, tmp_path) is None
    (tmp_path / spec.cache_file_name).write_bytes(DATA)
    assert _read_cached_bpe(spec, tmp_path) == DATA
    assert _parse_bpe(DATA) == {bytes([i]): i for i in range(4)}


def test_a_download_is_checked_then_cached(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    asked: list[tuple[str, float]] = []

    def fake_urlopen(url: str, timeout: float) -> io.BytesIO:
        asked.append((url, timeout))
        return io.BytesIO(served)

    monkeypatch.setattr(urllib.request, "urlopen", fake_urlopen)
    spec = spec_for(DATA)
    served = DATA + b"corrupted"
    with pytest.raises(ValueError, match="does not match its checksum"):
        _download_bpe(spec, tmp_path / "cache")
    assert not (tmp_path / "cache").exists()  # nothing damaged is cached
    served = DATA
    assert _download_bpe(spec, tmp_path / "cache") == DATA
    assert (tmp_path / "cache" / spec.cache_file_name).read_bytes() == DATA
    assert list((tmp_path / "cache").iterdir()) == [tmp_path / "cache" / spec.cache_file_name]
    assert asked == [(spec.url, tokenizer_files.DOWNLOAD_TIMEOUT_SECONDS)] * 2


def test_a_download_is_cached_in_a_folder_that_exists_already(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(urllib.request, "urlopen", lambda url, timeout: io.BytesIO(DATA))
    spec = spec_for(DATA)
    (tmp_path / "cache").mkdir()
    assert _download_bpe(spec, tmp_path / "cache") == DATA
    assert (tmp_path / "cache" / spec.cache_file_name).read_bytes() == DATA


def test_an_unwritable_cache_is_logged_with_its_folder_and_the_download_still_used(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(urllib.request, "urlopen", lambda url, timeout: io.BytesIO(DATA))
    blocked = tmp_path / "a file, not a folder"
    blocked.write_text("")
    with caplog.at_level("INFO", logger=tokenizer_files.log.name):
        assert _download_bpe(spec_for(DATA), blocked / "cache") == DATA
    (record,) = caplog.records
    assert record.getMessage().startswith(
        f"could not cache tokenizer file in {blocked / 'cache'}: "
    )
    assert isinstance(record.args[-1], OSError)  # why, in the line
    assert record.getMessage().endswith(str(record.args[-1]))


def test_a_cached_file_that_does_not_match_is_logged_by_its_path(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    spec = spec_for(DATA)
    (tmp_path / spec.cache_file_name).write_bytes(DATA + b"tampered")
    with caplog.at_level("WARNING", logger=tokenizer_files.log.name):
        assert _read_cached_bpe(spec, tmp_path) is None
    assert [r.getMessage() for r in caplog.records] == [
        f"tokenizer file {tmp_path / spec.cache_file_name} does not match its checksum; ignoring it"
    ]
