"""What a provider's server answered it does not support, remembered on disk.

A server that answers a remote compaction form with 404 (or a 400 naming the unknown item type)
will answer the same next time: later compactions go straight to what works, after a restart
too. The key is the base URL and the model, so changing the provider's URL forgets it.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path

log = logging.getLogger(__name__)

FILE_NAME = "capabilities.json"


class RemoteCapabilities:
    """Remote compaction forms known to be unsupported, per base URL and model."""

    def __init__(self, data_dir: Path) -> None:
        self._path = data_dir / FILE_NAME
        self._lock = threading.Lock()

    @staticmethod
    def _key(base_url: str, model: str) -> str:
        return f"{base_url.rstrip('/')} {model}"

    def _load(self) -> dict[str, list[str]]:
        try:
            data = json.loads(self._path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {
            key: [str(form) for form in forms]
            for key, forms in data.items()
            if isinstance(key, str) and isinstance(forms, list)
        }

    def unsupported(self, base_url: str, model: str) -> set[str]:
        """The forms this server and model answered as unsupported."""
        with self._lock:
            return set(self._load().get(self._key(base_url, model), []))

    def mark_unsupported(self, base_url: str, model: str, form: str) -> None:
        """Remember that ``form`` is unsupported; a failure to save only costs a retry later."""
        with self._lock:
            data = self._load()
            forms = set(data.get(self._key(base_url, model), []))
            if form in forms:
                return
            data[self._key(base_url, model)] = sorted(forms | {form})
            try:
                self._path.parent.mkdir(parents=True, exist_ok=True)
                temp = self._path.with_suffix(".tmp")
                temp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
                os.replace(temp, self._path)
            except OSError as exc:
                log.info("could not remember a server capability: %s", exc)
