"""Remembered remote-compaction capabilities: per base URL and model, on disk."""

from __future__ import annotations

from pathlib import Path

from app.core.providers.capabilities import RemoteCapabilities


def test_an_unsupported_form_is_remembered_across_instances(tmp_path: Path) -> None:
    RemoteCapabilities(tmp_path).mark_unsupported("https://proxy.example/v1", "gpt-x", "trigger")
    again = RemoteCapabilities(tmp_path)  # a restart
    assert again.unsupported("https://proxy.example/v1", "gpt-x") == {"trigger"}


def test_another_url_or_model_is_asked_afresh(tmp_path: Path) -> None:
    caps = RemoteCapabilities(tmp_path)
    caps.mark_unsupported("https://proxy.example/v1", "gpt-x", "standalone")
    assert caps.unsupported("https://other.example/v1", "gpt-x") == set()
    assert caps.unsupported("https://proxy.example/v1", "gpt-y") == set()


def test_a_damaged_file_means_nothing_is_known(tmp_path: Path) -> None:
    (tmp_path / "capabilities.json").write_text("{not json")
    caps = RemoteCapabilities(tmp_path)
    assert caps.unsupported("https://a/v1", "m") == set()
    caps.mark_unsupported("https://a/v1", "m", "trigger")
    assert caps.unsupported("https://a/v1", "m") == {"trigger"}
