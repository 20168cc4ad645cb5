"""Where the API key lives: the OS keyring, or a file only the user can read.

Keys are stored per base URL (normalised, no trailing slash), so switching between providers
keeps each one's key. When no usable keyring exists (headless Linux, a keyring that fails or
silently drops secrets) keys go to ``config_dir/secrets.json`` with mode 0600. No key ever
appears in a log line, an exception message or a repr.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

if TYPE_CHECKING:
    from keyring.backend import KeyringBackend

log = logging.getLogger(__name__)

SECRETS_FILE = "secrets.json"
_FILE_MODE = 0o600
_CHECK_MODE = os.name != "nt"  # POSIX permission bits mean nothing on Windows


class SecretStoreError(Exception):
    """A key could not be stored; the message names the cause, never the key."""


# Query parameters whose values are credentials in the URLs of some gateways.
_SECRET_QUERY_KEYS = frozenset({"key", "api_key", "apikey", "api-key", "token", "access_token"})
_REDACTED = "[redacted]"


def redact_url(url: str, secrets: Iterable[str] = ()) -> str:
    """``url`` fit to show or store: each known secret (the API key, which some gateways take
    in the path) is replaced wherever it occurs, as are a password in ``user:pass@`` and the
    values of ``key``/``token``-like query parameters. Short secrets (under 6 characters, like
    the "x" of a local server) are left, as replacing them would shred the URL."""
    for secret in secrets:
        if secret and len(secret) >= 6:
            url = url.replace(secret, _REDACTED)
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, host = netloc.rpartition("@")
        if ":" in userinfo:
            user = userinfo.split(":", 1)[0]
            netloc = f"{user}:{_REDACTED}@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(name.lower() in _SECRET_QUERY_KEYS for name, _ in pairs):
            query = urlencode(
                [
                    (name, _REDACTED if name.lower() in _SECRET_QUERY_KEYS else value)
                    for name, value in pairs
                ],
                safe="[]",
            )
    if (netloc, query) == (parts.netloc, parts.query):
        return url
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def normalise_base_url(base_url: str) -> str:
    """The keyring user name for a base URL: trimmed, without trailing slashes."""
    return base_url.strip().rstrip("/")


def _backend_label(backend: KeyringBackend) -> str:
    from keyring.backends import chainer

    if isinstance(backend, chainer.ChainerBackend):
        return ", ".join(_backend_label(inner) for inner in backend.backends)
    cls = type(backend)
    # Most keyring backends are a class "Keyring" in a module named after the system.
    if cls.__name__ == "Keyring":
        return cls.__module__.rsplit(".", 1)[-1]
    return cls.__name__


def _usable_keyring() -> KeyringBackend | None:
    # keyring (and its backend discovery) costs tens of milliseconds: it is imported the
    # first time a key is needed, never on the way to the window's first paint.
    import keyring
    from keyring.backends import chainer, fail, null

    try:
        backend = keyring.get_keyring()
    except Exception as exc:  # noqa: BLE001 - any keyring failure means "not usable"
        log.info("No keyring available (%s)", type(exc).__name__)
        return None
    if isinstance(backend, fail.Keyring | null.Keyring):
        return None
    if isinstance(backend, chainer.ChainerBackend) and not backend.backends:
        return None
    return backend


def _display_path(path: Path) -> str:
    try:
        return "~/" + path.relative_to(Path.home()).as_posix()
    except ValueError:
        return str(path)


class SecretStore:
    """API keys per base URL, in the OS keyring or a private fallback file."""

    def __init__(self, config_dir: Path, service: str = "Coco", use_keyring: bool = True) -> None:
        self.config_dir = config_dir
        self.service = service
        self.path = config_dir / SECRETS_FILE
        self._lock = threading.Lock()
        # The keyring is looked up on first use (see _usable_keyring); None: keys go to the file.
        self._keyring: KeyringBackend | None = None
        self._keyring_pending = use_keyring

    def _backend(self) -> KeyringBackend | None:
        if self._keyring_pending:
            self._keyring_pending = False
            self._keyring = _usable_keyring()
        return self._keyring

    @property
    def backend_name(self) -> str:
        """Where keys go now, for the settings panel (names the place, never a key)."""
        with self._lock:
            backend = self._backend()
        if backend is not None:
            return f"keyring ({_backend_label(backend)})"
        if _CHECK_MODE:
            return f"file ({_display_path(self.path)}, mode 600)"
        return f"file ({_display_path(self.path)})"

    def __repr__(self) -> str:
        return f"SecretStore({self.backend_name})"

    def get_api_key(self, base_url: str) -> str:
        """The key stored for ``base_url`` ("" when none)."""
        user = normalise_base_url(base_url)
        return self._get(user) if user else ""

    def get_secret(self, name: str) -> str:
        """Another secret kept under ``name`` (an MCP server's env or header value)."""
        return self._get(name) if name else ""

    def set_secret(self, name: str, value: str) -> None:
        """Keep ``value`` under ``name``; an empty value deletes it. Raises like
        ``set_api_key``."""
        if not name:
            raise ValueError("A secret needs a name.")
        self._set(name, value)

    def _get(self, user: str) -> str:
        with self._lock:
            backend = self._backend()
            if backend is not None:
                try:
                    value = backend.get_password(self.service, user)
                except Exception as exc:  # noqa: BLE001 - a broken keyring falls back to the file
                    self._abandon_keyring(exc)
                else:
                    if value:
                        return value
            # Also consulted with a working keyring: a key saved while it was unavailable.
            return self._read_file().get(user, "")

    def set_api_key(self, base_url: str, key: str) -> None:
        """Store ``key`` for ``base_url``; an empty key deletes the stored one.

        Raises ``ValueError`` for an empty base URL and ``SecretStoreError`` when the key
        cannot be saved anywhere.
        """
        user = normalise_base_url(base_url)
        if not user:
            raise ValueError("A base URL is needed to store an API key.")
        self._set(user, key)

    def _set(self, user: str, key: str) -> None:
        key = key.strip()
        with self._lock:
            if not key:
                self._delete(user)
                return
            backend = self._backend()
            if backend is not None:
                try:
                    backend.set_password(self.service, user, key)
                    # Some backends accept and then drop secrets: trust only a read-back.
                    stored = backend.get_password(self.service, user) == key
                except Exception as exc:  # noqa: BLE001 - a broken keyring falls back to the file
                    self._abandon_keyring(exc)
                else:
                    if stored:
                        self._drop_from_file(user)  # no stale plaintext copy left behind
                        return
                    self._abandon_keyring(None)
            secrets = self._read_file()
            secrets[user] = key
            self._write_file(secrets)

    # ------------------------------------------------------------------------------ internals

    def _abandon_keyring(self, exc: Exception | None) -> None:
        # Only the exception's type: its text could, in theory, carry what was being stored.
        reason = type(exc).__name__ if exc is not None else "secret not kept"
        log.warning("Keyring unusable (%s); API keys go to %s", reason, _display_path(self.path))
        self._keyring = None

    def _delete(self, user: str) -> None:
        backend = self._backend()
        if backend is not None:
            try:
                backend.delete_password(self.service, user)
            except Exception:  # noqa: BLE001, S110 - nothing stored there is fine
                pass
        self._drop_from_file(user)

    def _drop_from_file(self, user: str) -> None:
        if not self.path.exists():
            return
        secrets = self._read_file()
        if user in secrets:
            del secrets[user]
            self._write_file(secrets)

    def _read_file(self) -> dict[str, str]:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            log.warning("Could not read %s (%s)", self.path.name, exc.strerror)
            return {}
        self._tighten_mode()
        import json  # not at import: the store is made before the window's first paint

        try:
            data = json.loads(raw.decode("utf-8"))
        except ValueError:
            log.warning("%s is not valid JSON; ignoring it", self.path.name)
            return {}
        if not isinstance(data, dict):
            return {}
        return {str(k): v for k, v in data.items() if isinstance(v, str) and v}

    def _tighten_mode(self) -> None:
        if not _CHECK_MODE:
            return
        try:
            if stat.S_IMODE(self.path.stat().st_mode) != _FILE_MODE:
                log.warning("%s was readable by others; restricting it", self.path.name)
                os.chmod(self.path, _FILE_MODE)
        except OSError:
            pass

    def _write_file(self, secrets: dict[str, str]) -> None:
        """Write the whole file atomically, created 0600 from the start (never widened)."""
        try:
            self.config_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            self._keep_unreadable_file()
            import json
            import uuid

            temp = self.path.with_name(f".{SECRETS_FILE}-{uuid.uuid4().hex}.tmp")
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _FILE_MODE)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as file:
                    json.dump(secrets, file, indent=2, sort_keys=True)
                    file.flush()
                    os.fsync(file.fileno())
                if _CHECK_MODE and stat.S_IMODE(os.stat(temp).st_mode) != _FILE_MODE:
                    os.chmod(temp, _FILE_MODE)
                    if stat.S_IMODE(os.stat(temp).st_mode) != _FILE_MODE:
                        raise SecretStoreError(
                            f"Could not make {self.path.name} private (mode 600)."
                        )
                os.replace(temp, self.path)
            except BaseException:
                temp.unlink(missing_ok=True)
                raise
        except OSError as exc:
            # from None: keep the stored value out of any chained traceback.
            reason = exc.strerror or type(exc).__name__
            raise SecretStoreError(
                f"Could not save the API key to {self.path.name}: {reason}"
            ) from None

    def _keep_unreadable_file(self) -> None:
        """Before overwriting an unparsable secrets file, keep it as .bak (nothing is lost)."""
        try:
            raw = self.path.read_bytes()
        except OSError:
            return
        import json

        try:
            data = json.loads(raw.decode("utf-8"))
        except ValueError:
            data = None
        if not isinstance(data, dict):
            os.replace(self.path, self.path.with_name(SECRETS_FILE + ".bak"))
