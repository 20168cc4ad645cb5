"""Where one Coco profile keeps its files: settings, sessions, logs, caches.

The default profile uses the platform's folders (platformdirs). ``--data-dir PATH`` makes an
isolated profile with everything under PATH, so a second profile, a demo or a test never touches
the user's real settings, keys or sessions.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from app.core.system.dirs import (
    default_cache_dir,
    default_config_dir,
    default_data_dir,
    default_log_dir,
)

LOG_FILE_NAME = "coco.log"


class AppPaths(NamedTuple):
    """The folders of one profile. ``isolated`` is True for a ``--data-dir`` profile.

    (A named tuple rather than a frozen dataclass: made before the window's first paint, where
    a dataclass costs compiling its methods.)"""

    data_dir: Path
    config_dir: Path
    log_dir: Path
    isolated: bool = False

    @classmethod
    def resolve(cls, data_dir: Path | None = None) -> AppPaths:
        """The default profile, or an isolated one with everything under ``data_dir``."""
        if data_dir is None:
            return cls(default_data_dir(), default_config_dir(), default_log_dir())
        root = data_dir.expanduser().resolve()
        return cls(root, root / "config", root / "logs", isolated=True)

    @property
    def sessions_dir(self) -> Path:
        return self.data_dir / "sessions"

    @property
    def log_file(self) -> Path:
        return self.log_dir / LOG_FILE_NAME

    @property
    def cache_dir(self) -> Path:
        """Caches (the tokenizer's, should its shipped file be damaged): the platform's cache
        folder, or ``cache`` inside an isolated profile, so that profile is self-contained."""
        return self.data_dir / "cache" if self.isolated else default_cache_dir()

    @property
    def tokenizer_cache_dir(self) -> Path:
        return self.cache_dir / "tiktoken"
