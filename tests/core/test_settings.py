"""App settings (file, presets, CoreConfig) and the API-key store (keyring or private file)."""

from __future__ import annotations

import json
import logging
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.backends import fail
from pydantic import ValidationError

from app.core.config import CoreConfig
from app.core.settings import (
    AppSettings,
    SettingsStore,
    build_core_config,
    is_configured,
    preset_base_url,
    preset_wire_api,
)
from app.core.system.secrets import SecretStore, SecretStoreError, redact_url

KEY = "sk-test-SECRET-0123456789"
DATA = Path("/tmp/coco-data")

# ------------------------------------------------------------------------------ settings file


def test_missing_file_gives_defaults_without_warning(tmp_path: Path) -> None:
    settings, warnings = SettingsStore(tmp_path).load()
    assert settings == AppSettings()
    assert warnings == []


def test_save_then_load_round_trip(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path / "config")
    original = AppSettings(
        provider="openai",
        model="gpt-4.1-mini",
        context_window=128_000,
        auto_compact_percent=75,
        summary_style="checkpoint",
        workspace="/home/me/project",
        last_session_id="abc",
    )
    store.save(original)
    loaded, warnings = store.load()
    assert loaded == original
    assert warnings == []
    assert not list((tmp_path / "config").glob("*.tmp"))  # atomic write left no temp file


def test_corrupt_json_gives_defaults_keeps_backup_and_warns(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"provider": "openai",', encoding="utf-8")

    settings, warnings = SettingsStore(tmp_path).load()

    assert settings == AppSettings()
    assert (tmp_path / "settings.json.bak").read_text(encoding="utf-8") == '{"provider": "openai",'
    assert not path.exists()
    assert len(warnings) == 1
    assert warnings[0].startswith("Settings file was unreadable (")
    assert warnings[0].endswith("; using defaults. The old file was kept as settings.json.bak.")


def test_invalid_value_gives_defaults_keeps_backup_and_warns(tmp_path: Path) -> None:
    bad = json.dumps({"provider": "openai", "context_window": -5})
    (tmp_path / "settings.json").write_text(bad, encoding="utf-8")

    settings, warnings = SettingsStore(tmp_path).load()

    assert settings == AppSettings()
    assert (tmp_path / "settings.json.bak").read_text(encoding="utf-8") == bad
    assert len(warnings) == 1 and "context_window" in warnings[0]
    assert "settings.json.bak" in warnings[0]


def test_non_object_json_is_treated_as_corrupt(tmp_path: Path) -> None:
    (tmp_path / "settings.json").write_text("[1, 2]", encoding="utf-8")
    settings, warnings = SettingsStore(tmp_path).load()
    assert settings == AppSettings() and len(warnings) == 1
    assert (tmp_path / "settings.json.bak").exists()


def test_unknown_keys_are_ignored(tmp_path: Path) -> None:
    (tmp_path / "settings.json").write_text(
        json.dumps({"model": "m", "from_a_newer_version": 1}), encoding="utf-8"
    )
    settings, warnings = SettingsStore(tmp_path).load()
    assert settings.model == "m" and warnings == []


def test_auto_compact_percent_is_clamped_to_90_and_floored_at_10() -> None:
    assert AppSettings(auto_compact_percent=95).auto_compact_percent == 90
    assert AppSettings(auto_compact_percent=10).auto_compact_percent == 10
    with pytest.raises(ValidationError):
        AppSettings(auto_compact_percent=5)
    settings = AppSettings()
    settings.auto_compact_percent = 99  # edits from the panel are validated too
    assert settings.auto_compact_percent == 90


def test_field_validation() -> None:
    with pytest.raises(ValidationError):
        AppSettings(context_window=0)
    with pytest.raises(ValidationError):
        AppSettings(base_url="ftp://example.com")
    assert AppSettings(base_url=" https://x.example/v1/ ").base_url == "https://x.example/v1"


# ----------------------------------------------------------------------------- presets, config


def test_presets() -> None:
    assert preset_base_url("openai") == "https://api.openai.com/v1"
    assert preset_base_url("ollama") == "http://localhost:11434/v1"
    assert preset_base_url("lmstudio") == "http://localhost:1234/v1"
    assert preset_base_url("custom") == ""
    assert preset_wire_api("openai") == "responses"
    assert preset_wire_api("ollama", "responses") == "chat"
    assert preset_wire_api("lmstudio", "responses") == "chat"
    assert preset_base_url("llamacpp") == "http://127.0.0.1:8080/v1"
    assert preset_wire_api("llamacpp", "responses") == "chat"
    assert preset_wire_api("custom", "chat") == "chat"
    assert preset_wire_api("custom", "responses") == "responses"


def test_detected_window_is_used_only_when_none_is_typed() -> None:
    detected = AppSettings(provider="llamacpp", model="gemma", detected_context_window=4096)
    config = build_core_config(detected, api_key="", data_dir=DATA, env={})
    assert config.base_url == "http://127.0.0.1:8080/v1"
    assert config.wire_api == "chat"
    assert config.context_window == 4096
    typed = detected.model_copy(update={"context_window": 8000})
    assert build_core_config(typed, api_key="", data_dir=DATA, env={}).context_window == 8000


def test_the_config_names_a_known_provider_for_the_status_line() -> None:
    def name(provider: str) -> str:
        settings = AppSettings(provider=provider, model="m", base_url="http://127.0.0.1:9/v1")
        return build_core_config(settings, api_key="k", data_dir=DATA, env={}).provider_name

    assert name("llamacpp") == "llama.cpp"
    assert name("ollama") == "Ollama"
    assert name("openai") == "OpenAI"
    assert name("custom") == ""  # a custom server is named by its address alone


def test_demo_config() -> None:
    config = build_core_config(
        AppSettings(provider="demo", model="ignored"),
        api_key="",
        data_dir=DATA,
        env={},
        demo_url="http://127.0.0.1:5000/v1",
    )
    assert config.base_url == "http://127.0.0.1:5000/v1"
    assert config.model == "coco-demo"
    assert config.api_key.get_secret_value() == "demo"
    assert config.wire_api == "responses"
    assert config.context_window == 16_000
    assert config.auto_compact_token_limit == 14_400
    assert config.data_dir == DATA


def test_demo_keeps_a_configured_window_and_needs_its_url() -> None:
    settings = AppSettings(provider="demo", context_window=8000, auto_compact_percent=50)
    config = build_core_config(settings, api_key="", data_dir=DATA, env={}, demo_url="http://h:1")
    assert (config.context_window, config.auto_compact_token_limit) == (8000, 4000)
    with pytest.raises(ValueError, match="demo"):
        build_core_config(settings, api_key="", data_dir=DATA, env={})


def test_openai_config_from_presets() -> None:
    config = build_core_config(AppSettings(provider="openai"), api_key=KEY, data_dir=DATA, env={})
    assert config.base_url == "https://api.openai.com/v1"
    assert config.model == "gpt-4.1"
    assert config.wire_api == "responses"
    assert config.api_key.get_secret_value() == KEY
    assert config.context_window is None and config.auto_compact_token_limit is None
    assert config.instructions == CoreConfig().instructions
    assert config.workspace is None
    assert config.compaction_model is None and config.compact_prompt is None


def test_settings_carry_into_config() -> None:
    settings = AppSettings(
        provider="openai",
        model="gpt-5",
        context_window=200_000,
        auto_compact_percent=80,
        instructions="Be terse.",
        auto_compact=False,
        remote_compaction=True,
        remote_fallback_to_local=False,
        compaction_model="gpt-4.1-mini",
        summary_style="checkpoint",
        compact_prompt="Summarise.",
        workspace="/work/project",
    )
    config = build_core_config(settings, api_key=KEY, data_dir=DATA, env={})
    assert config.model == "gpt-5"
    assert config.auto_compact_token_limit == 160_000
    assert config.instructions == "Be terse."
    assert config.auto_compact is False
    assert config.remote_compaction is True and config.remote_fallback_to_local is False
    assert config.compaction_model == "gpt-4.1-mini"
    assert config.summary_style == "checkpoint"
    assert config.compact_prompt == "Summarise."
    assert config.workspace == Path("/work/project")


def test_local_presets_use_chat_completions() -> None:
    for provider, url in [
        ("ollama", "http://localhost:11434/v1"),
        ("lmstudio", "http://localhost:1234/v1"),
    ]:
        settings = AppSettings(provider=provider, model="qwen3")  # type: ignore[arg-type]
        config = build_core_config(settings, api_key="", data_dir=DATA, env={})
        assert (config.base_url, config.wire_api, config.model) == (url, "chat", "qwen3")


def test_custom_provider_uses_its_settings() -> None:
    settings = AppSettings(
        provider="custom", base_url="https://llm.example/v1", model="m", wire_api="chat"
    )
    config = build_core_config(settings, api_key=KEY, data_dir=DATA, env={})
    assert (config.base_url, config.model, config.wire_api) == (
        "https://llm.example/v1",
        "m",
        "chat",
    )


def test_env_api_key_used_only_when_no_key_is_saved() -> None:
    env = {"OPENAI_API_KEY": "sk-from-env"}
    settings = AppSettings(provider="openai")
    from_env = build_core_config(settings, api_key="", data_dir=DATA, env=env)
    saved = build_core_config(settings, api_key=KEY, data_dir=DATA, env=env)
    assert from_env.api_key.get_secret_value() == "sk-from-env"
    assert saved.api_key.get_secret_value() == KEY


def test_env_api_key_never_goes_to_a_server_the_user_typed_in() -> None:
    env = {"OPENAI_API_KEY": "sk-from-env"}

    def key(settings: AppSettings, env: dict[str, str]) -> str:
        config = build_core_config(settings, api_key="", data_dir=DATA, env=env)
        return config.api_key.get_secret_value()

    assert key(AppSettings(provider="ollama", model="m"), env) == ""
    assert key(AppSettings(provider="custom", base_url="https://x.example/v1", model="m"), env) == ""
    # A custom server named by the environment itself gets the environment's key.
    named = {**env, "OPENAI_BASE_URL": "https://proxy.example/v1"}
    assert key(AppSettings(provider="custom", model="m"), named) == "sk-from-env"


def test_env_base_url_applies_to_openai_and_custom_when_unset() -> None:
    env = {"OPENAI_BASE_URL": "https://proxy.example/v1"}

    def url(settings: AppSettings) -> str:
        return build_core_config(settings, api_key=KEY, data_dir=DATA, env=env).base_url

    assert url(AppSettings(provider="openai")) == "https://proxy.example/v1"
    assert url(AppSettings(provider="custom", model="m")) == "https://proxy.example/v1"
    assert (
        url(AppSettings(provider="openai", base_url="https://mine.example/v1"))
        == "https://mine.example/v1"
    )
    assert url(AppSettings(provider="ollama", model="m")) == "http://localhost:11434/v1"


def test_env_defaults_to_os_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-process-env")
    config = build_core_config(AppSettings(provider="openai"), api_key="", data_dir=DATA)
    assert config.api_key.get_secret_value() == "sk-process-env"


def test_missing_model_or_url_is_a_clear_error_without_the_key() -> None:
    with pytest.raises(ValueError, match="model") as no_model:
        build_core_config(AppSettings(provider="ollama"), api_key=KEY, data_dir=DATA, env={})
    with pytest.raises(ValueError, match="base URL") as no_url:
        build_core_config(
            AppSettings(provider="custom", model="m"), api_key=KEY, data_dir=DATA, env={}
        )
    with pytest.raises(ValueError) as bad_env_url:
        build_core_config(
            AppSettings(provider="openai"),
            api_key=KEY,
            data_dir=DATA,
            env={"OPENAI_BASE_URL": "not-a-url"},
        )
    for error in (no_model, no_url, bad_env_url):
        assert KEY not in str(error.value)


def test_is_configured() -> None:
    assert not is_configured(AppSettings(provider="demo"), KEY, env={})
    assert not is_configured(AppSettings(provider="openai"), "", env={})
    assert is_configured(AppSettings(provider="openai"), KEY, env={})
    assert is_configured(AppSettings(provider="openai"), "", env={"OPENAI_API_KEY": "sk-x"})
    assert is_configured(AppSettings(provider="ollama", model="llama3"), "", env={})
    assert not is_configured(AppSettings(provider="ollama"), "", env={})  # no model
    assert not is_configured(AppSettings(provider="custom", model="m"), KEY, env={})  # no URL
    assert is_configured(
        AppSettings(provider="custom", model="m"), "", env={"OPENAI_BASE_URL": "http://h/v1"}
    )


# ------------------------------------------------------------------------------------ secrets


class MemoryKeyring(KeyringBackend):
    """An in-memory keyring for tests."""

    priority = 10  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.store: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.store.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.store[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.store.pop((service, username), None)


class BrokenKeyring(MemoryKeyring):
    """A keyring that is present but fails (locked, D-Bus gone) and echoes the secret."""

    def set_password(self, service: str, username: str, password: str) -> None:
        raise RuntimeError(f"cannot store {password}")


@pytest.fixture
def restore_keyring() -> Iterator[None]:
    previous = keyring.get_keyring()
    try:
        yield
    finally:
        keyring.set_keyring(previous)


def assert_private(path: Path) -> None:
    if sys.platform != "win32":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_keyring_backend_stores_the_key(tmp_path: Path, restore_keyring: None) -> None:
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    store = SecretStore(tmp_path)

    store.set_api_key("https://api.openai.com/v1/", KEY)

    assert backend.store == {("Coco", "https://api.openai.com/v1"): KEY}
    assert store.get_api_key("https://api.openai.com/v1") == KEY
    assert store.get_api_key("http://localhost:1234/v1") == ""
    assert store.backend_name == "keyring (MemoryKeyring)"
    assert not (tmp_path / "secrets.json").exists()

    store.set_api_key("https://api.openai.com/v1", "")  # empty deletes
    assert backend.store == {}
    assert store.get_api_key("https://api.openai.com/v1") == ""


def test_file_fallback_when_keyring_has_no_backend(tmp_path: Path, restore_keyring: None) -> None:
    keyring.set_keyring(fail.Keyring())
    store = SecretStore(tmp_path / "config")

    store.set_api_key("https://api.openai.com/v1", KEY)

    path = tmp_path / "config" / "secrets.json"
    assert json.loads(path.read_text(encoding="utf-8")) == {"https://api.openai.com/v1": KEY}
    assert_private(path)
    assert store.backend_name.startswith("file (") and "secrets.json" in store.backend_name
    assert SecretStore(tmp_path / "config").get_api_key("https://api.openai.com/v1/") == KEY

    store.set_api_key("https://api.openai.com/v1", "")
    assert json.loads(path.read_text(encoding="utf-8")) == {}


def test_file_fallback_keeps_keys_per_base_url(tmp_path: Path) -> None:
    store = SecretStore(tmp_path, use_keyring=False)
    store.set_api_key("https://a.example/v1", "key-a")
    store.set_api_key("https://b.example/v1", "key-b")
    assert store.get_api_key("https://a.example/v1") == "key-a"
    assert store.get_api_key("https://b.example/v1") == "key-b"
    assert_private(tmp_path / "secrets.json")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_fallback_file_is_private_even_with_a_loose_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        SecretStore(tmp_path, use_keyring=False).set_api_key("https://a.example", KEY)
    finally:
        os.umask(old)
    assert_private(tmp_path / "secrets.json")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_fallback_file_with_loose_mode_is_tightened_on_read(tmp_path: Path) -> None:
    path = tmp_path / "secrets.json"
    path.write_text(json.dumps({"https://a.example": KEY}), encoding="utf-8")
    os.chmod(path, 0o644)
    assert SecretStore(tmp_path, use_keyring=False).get_api_key("https://a.example") == KEY
    assert_private(path)


def test_failing_keyring_falls_back_without_leaking_the_key(
    tmp_path: Path, restore_keyring: None, caplog: pytest.LogCaptureFixture
) -> None:
    keyring.set_keyring(BrokenKeyring())
    store = SecretStore(tmp_path)
    assert store.backend_name == "keyring (BrokenKeyring)"

    with caplog.at_level(logging.DEBUG):
        store.set_api_key("https://api.openai.com/v1", KEY)

    assert store.get_api_key("https://api.openai.com/v1") == KEY
    assert store.backend_name.startswith("file (")
    assert_private(tmp_path / "secrets.json")
    assert KEY not in caplog.text
    assert KEY not in repr(store) and KEY not in str(store) and KEY not in store.backend_name


def test_keyring_that_drops_secrets_falls_back(tmp_path: Path, restore_keyring: None) -> None:
    class ForgetfulKeyring(MemoryKeyring):
        def set_password(self, service: str, username: str, password: str) -> None:
            pass

    keyring.set_keyring(ForgetfulKeyring())
    store = SecretStore(tmp_path)
    store.set_api_key("https://a.example", KEY)
    assert store.get_api_key("https://a.example") == KEY
    assert (tmp_path / "secrets.json").exists()


def test_save_failure_message_does_not_contain_the_key(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    store = SecretStore(blocker / "config", use_keyring=False)
    with pytest.raises(SecretStoreError) as error:
        store.set_api_key("https://a.example", KEY)
    assert KEY not in str(error.value) and KEY not in repr(error.value)
    assert error.value.__cause__ is None and error.value.__suppress_context__


def test_corrupt_secrets_file_is_kept_before_overwriting(tmp_path: Path) -> None:
    path = tmp_path / "secrets.json"
    path.write_text("{broken", encoding="utf-8")
    store = SecretStore(tmp_path, use_keyring=False)
    assert store.get_api_key("https://a.example") == ""
    store.set_api_key("https://a.example", KEY)
    assert (tmp_path / "secrets.json.bak").read_text(encoding="utf-8") == "{broken"
    assert store.get_api_key("https://a.example") == KEY


def test_empty_base_url(tmp_path: Path) -> None:
    store = SecretStore(tmp_path, use_keyring=False)
    assert store.get_api_key("") == ""
    with pytest.raises(ValueError) as error:
        store.set_api_key("  ", KEY)
    assert KEY not in str(error.value)


# --- numbered backups, the request timeout, keys in base URLs ----------------------------------


def test_a_second_corruption_keeps_the_first_backup(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path)
    contents = ['{"first": ', '{"second": ', "[3]"]
    warnings: list[str] = []
    for text in contents:
        store.path.write_text(text, encoding="utf-8")
        _settings, found = store.load()
        warnings.extend(found)

    backups = ["settings.json.bak", "settings.json.bak.1", "settings.json.bak.2"]
    assert [(tmp_path / name).read_text(encoding="utf-8") for name in backups] == contents
    assert [w.rsplit("kept as ", 1)[1] for w in warnings] == [f"{name}." for name in backups]


def test_the_request_timeout_is_a_setting_that_reaches_the_core() -> None:
    assert AppSettings().request_timeout == 600
    settings = AppSettings(provider="openai", request_timeout=90)
    config = build_core_config(settings, api_key=KEY, data_dir=DATA, env={})
    assert config.request_timeout == 90.0
    for bad in (0, 5, 7200):
        with pytest.raises(ValidationError, match="between 10 and 3600 seconds"):
            AppSettings(request_timeout=bad)


def test_redact_url_removes_a_key_in_the_path_and_credentials() -> None:
    key = "sk-proj-abcdefghijklmnop"
    assert redact_url(f"https://gw.example/{key}/v1", [key]) == "https://gw.example/[redacted]/v1"
    assert (
        redact_url("https://user:hunter22@gw.example/v1") == "https://user:[redacted]@gw.example/v1"
    )
    assert (
        redact_url("https://gw.example/v1?api_key=abc123&region=eu")
        == "https://gw.example/v1?api_key=[redacted]&region=eu"
    )
    assert redact_url("http://localhost:11434/v1", ["x"]) == "http://localhost:11434/v1"
