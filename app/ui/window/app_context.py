"""What the window needs beyond one session: settings, the key store, paths, the demo model.

It turns the saved settings into the ``CoreConfig`` a session runs with. When no real provider
is configured (or ``--offline``), that config points at the offline demo model, started on
loopback on first need by ``start_demo`` (given by the launcher; tests give their own).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.system.dirs import default_data_dir, default_log_dir
from app.core.system.secrets import SecretStore
from app.paths import AppPaths

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

    from app.core.config import CoreConfig
    from app.core.settings import AppSettings, SettingsStore

log = logging.getLogger(__name__)


class AppContext:
    """Settings, secrets, data folders and the demo model, for one running window."""

    def __init__(
        self,
        *,
        config_dir: Path,
        data_dir: Path,
        secrets: SecretStore | None = None,
        start_demo: Callable[[], str] | None = None,
        stop_demo: Callable[[], None] | None = None,
        offline: bool = False,
        env: Mapping[str, str] | None = None,
        config_overrides: Mapping[str, Any] | None = None,
        log_dir: Path | None = None,
        log_file: Path | None = None,
    ) -> None:
        self.config_dir = config_dir
        self.data_dir = data_dir
        self.log_dir = log_dir if log_dir is not None else default_log_dir()
        self.log_file = log_file
        self.secrets = secrets if secrets is not None else SecretStore(config_dir)
        self.offline = offline
        self.env: Mapping[str, str] = os.environ if env is None else env
        self.config_overrides = dict(config_overrides or {})
        self._start_demo = start_demo
        self._stop_demo = stop_demo
        self._demo_url: str | None = None
        # The settings (and pydantic, which validates them) load on first use: after the
        # window's first paint at start-up, so the window is on screen sooner.
        self._store: SettingsStore | None = None
        self._settings: AppSettings | None = None
        self._load_warnings: list[str] = []
        self._writer: ThreadPoolExecutor | None = None  # writes what ``remember`` saves
        self._written: Future[None] | None = None  # the last of them

    # -- settings ---------------------------------------------------------------------------

    @property
    def store(self) -> SettingsStore:
        if self._store is None:
            from app.core.settings import SettingsStore

            self._store = SettingsStore(self.config_dir)
        return self._store

    @property
    def settings(self) -> AppSettings:
        """The saved settings, read on first use."""
        if self._settings is None:
            self._settings, self._load_warnings = self.store.load()
        return self._settings

    @settings.setter
    def settings(self, value: AppSettings) -> None:
        self._settings = value

    @property
    def load_warnings(self) -> list[str]:
        """What was wrong with the settings file when it was read (shown once, at start)."""
        self.settings  # noqa: B018 - reading them is what produces the warnings
        return self._load_warnings

    # -- paths ------------------------------------------------------------------------------

    @property
    def sessions_dir(self) -> Path:
        return self.data_dir / "sessions"

    @property
    def paths(self) -> AppPaths:
        """This profile's folders (for Help → About)."""
        return AppPaths(self.data_dir, self.config_dir, self.log_dir,
                        isolated=self.data_dir != default_data_dir())

    # -- keys -------------------------------------------------------------------------------

    @staticmethod
    def key_base_url(settings: AppSettings) -> str:
        """The base URL a provider's key is stored under."""
        from app.core.settings import preset_base_url

        return settings.base_url or preset_base_url(settings.provider)

    def api_key(self, settings: AppSettings | None = None) -> str:
        settings = settings or self.settings
        url = self.key_base_url(settings)
        if not url or settings.provider == "demo":
            return ""
        try:
            return self.secrets.get_api_key(url)
        except Exception:  # noqa: BLE001 - a broken store means "no key", never a crash
            log.warning("Could not read the API key store")
            return ""

    def lookup_key(self, base_url: str) -> str:
        try:
            return self.secrets.get_api_key(base_url)
        except Exception:  # noqa: BLE001
            return ""

    # -- config -----------------------------------------------------------------------------

    @property
    def using_demo(self) -> bool:
        """True when sessions run on the offline demo model."""
        from app.core.settings import is_configured

        return self.offline or not is_configured(self.settings, self.api_key(), self.env)

    def demo_url(self) -> str:
        if self._demo_url is None:
            if self._start_demo is None:
                raise ValueError("The offline demo model is not available in this build.")
            self._demo_url = self._start_demo()
        return self._demo_url

    def build_config(self, settings: AppSettings, api_key: str, demo: bool) -> CoreConfig:
        """A CoreConfig for ``settings`` (on the demo model when ``demo``); ValueError with a
        user-facing message when the settings cannot make one."""
        from app.core.settings import build_core_config

        if demo:
            settings = settings.model_copy(update={"provider": "demo"})
        config = build_core_config(
            settings,
            api_key=api_key,
            data_dir=self.data_dir,
            env=self.env,
            demo_url=self.demo_url() if settings.provider == "demo" else None,
            secret=self.secrets.get_secret,
        )
        if self.config_overrides:
            config = config.model_copy(update=self.config_overrides)
        return config

    def core_config(self) -> CoreConfig:
        """The config for the next session (demo model when nothing is configured)."""
        return self.build_config(self.settings, self.api_key(), self.using_demo)

    def test_config(self, settings: AppSettings, api_key: str) -> CoreConfig:
        """The config a connection test uses: exactly what Save would run with."""
        return self.build_config(settings, api_key, demo=settings.provider == "demo")

    # -- saving -----------------------------------------------------------------------------

    def save_settings(self, settings: AppSettings, api_key: str | None = None) -> None:
        """Persist settings (and the key, in the secret store). Raises OSError/ValueError."""
        if api_key is not None and settings.provider != "demo":
            url = self.key_base_url(settings)
            if url:
                self.secrets.set_api_key(url, api_key)
        # MCP servers' env and header values go to the key store; settings.json keeps a mark.
        from app.core.mcp_config import secret_names, split_secrets  # loaded when first saved

        servers, secrets = split_secrets(settings.mcp_servers)
        for name, value in secrets.items():
            self.secrets.set_secret(name, value)
        # A server removed or renamed, a variable taken out: its value leaves the key store.
        for name in secret_names(self.settings.mcp_servers) - secret_names(servers):
            self.secrets.set_secret(name, "")
        settings = settings.model_copy(update={"mcp_servers": servers})
        self.flush()  # an older state being written must not land after this one
        self.store.save(settings)
        self.settings = settings

    def remember(self, **fields: Any) -> None:
        """Save window state (the last session) without touching anything else.

        Written by a worker thread, one write after another: a save ends in an fsync, which
        waits for what else the file system has to write first (a long reply just saved),
        and held the window's thread for up to 0.2 s as a session opened. :meth:`flush` waits
        for the writes under way; a Save from Settings and closing the window do."""
        self.settings = self.settings.model_copy(update=fields)
        if self._writer is None:
            from concurrent.futures import ThreadPoolExecutor

            self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="settings")
        self._written = self._writer.submit(self._write_remembered, self.settings)

    def _write_remembered(self, settings: AppSettings) -> None:
        try:
            self.store.save(settings)
        except OSError as exc:
            log.warning("Could not save the window state: %s", exc)

    def flush(self) -> None:
        """Wait until what :meth:`remember` saves is written."""
        if self._written is not None:
            self._written.result()
            self._written = None

    def close(self) -> None:
        self.flush()
        if self._writer is not None:
            self._writer.shutdown()
            self._writer = None
        if self._demo_url is not None and self._stop_demo is not None:
            self._stop_demo()
        self._demo_url = None
