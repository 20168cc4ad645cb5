"""Profiles: the default one in the platform folders, an isolated one under --data-dir."""

from __future__ import annotations

from pathlib import Path

from app.core.config import (
    default_cache_dir,
    default_config_dir,
    default_data_dir,
    default_log_dir,
)
from app.paths import AppPaths


def test_default_profile_uses_the_platform_folders() -> None:
    paths = AppPaths.resolve(None)
    assert paths.data_dir == default_data_dir()
    assert paths.config_dir == default_config_dir()
    assert paths.log_dir == default_log_dir()
    assert paths.sessions_dir == default_data_dir() / "sessions"
    assert not paths.isolated


def test_data_dir_profile_keeps_everything_under_it(tmp_path: Path) -> None:
    paths = AppPaths.resolve(tmp_path / "profile")
    root = (tmp_path / "profile").resolve()
    assert paths.isolated
    for folder in (paths.data_dir, paths.config_dir, paths.log_dir, paths.sessions_dir):
        assert folder == root or root in folder.parents
    assert paths.log_file == root / "logs" / "coco.log"
    assert paths.config_dir == root / "config"


def test_data_dir_profile_keeps_its_caches(tmp_path: Path) -> None:
    """The tokenizer's cache (used only if the shipped file is damaged) stays in the profile."""
    paths = AppPaths.resolve(tmp_path / "profile")
    root = (tmp_path / "profile").resolve()
    assert paths.tokenizer_cache_dir == root / "cache" / "tiktoken"
    assert AppPaths.resolve(None).tokenizer_cache_dir == default_cache_dir() / "tiktoken"
