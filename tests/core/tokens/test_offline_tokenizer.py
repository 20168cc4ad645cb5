"""With no network the tokenizer file is not fetched: never for the offline demo, and only
once a run otherwise (issue 25, item 10)."""

from __future__ import annotations

import urllib.error
from pathlib import Path

import pytest

from app.core.settings import AppSettings, build_core_config
from app.core.tokens import counter as tokens


def test_the_offline_demo_never_downloads_the_tokenizer(tmp_path: Path) -> None:
    config = build_core_config(
        AppSettings(provider="demo"), api_key="", data_dir=tmp_path, env={},
        demo_url="http://127.0.0.1:9/v1",
    )
    assert config.tokenizer_download is False
    custom = build_core_config(
        AppSettings(provider="custom", base_url="http://127.0.0.1:9/v1", model="m"),
        api_key="", data_dir=tmp_path, env={},
    )
    assert custom.tokenizer_download is True


def test_a_failed_download_is_not_tried_again_in_the_same_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An install without the packaged tokenizer files (they make downloads unnecessary).
    monkeypatch.setattr(tokens, "PACKAGED_TOKENIZER_DIR", tmp_path / "none")
    tried: list[str] = []

    def no_network(spec: object, folder: Path) -> bytes:
        tried.append(str(folder))
        raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")

    monkeypatch.setattr(tokens, "_download_bpe", no_network)
    shared = tokens._SharedEncodings()
    spec = tokens._ENCODING_SPECS["o200k_base"]
    for _ in range(3):  # three sessions opened, say
        load = shared.get_or_start(spec, tmp_path / "empty-cache", allow_download=True)
        assert isinstance(load, tokens._Load)
        assert load.done.wait(timeout=30)
        assert load.encoding is None  # counts are estimated
    assert len(tried) == 1
