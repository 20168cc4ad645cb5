"""The platform's folders for Coco (platformdirs), importable without pydantic.

Start-up may need them before the window is on screen, so nothing heavy is imported here and
platformdirs only when a folder is asked for (an isolated ``--data-dir`` profile never does).
:mod:`app.core.config` re-exports them.
"""

from __future__ import annotations

from pathlib import Path

APP_NAME = "Coco"


def default_data_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def default_config_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def default_cache_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))


def default_log_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_log_dir(APP_NAME, appauthor=False))
