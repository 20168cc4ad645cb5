"""What the first model request needs, loaded ahead (``app.core.preload``)."""

from __future__ import annotations

import importlib.util
import logging
import sys
from pathlib import Path
from typing import Any

import pytest

from app.core import preload
from app.core.providers import openai_client


def test_preload_imports_the_modules_and_builds_the_tls_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "coco_preload_probe.py").write_text("LOADED = True\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "coco_preload_probe", raising=False)
    monkeypatch.setattr(openai_client, "_tls_context", None)

    preload.preload(("coco_preload_probe",))

    assert sys.modules["coco_preload_probe"].LOADED
    assert openai_client._tls_context is not None  # what the first provider then uses
    assert openai_client.shared_tls_context() is openai_client._tls_context


def test_a_module_that_cannot_load_is_logged_and_the_rest_still_done(
    monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    monkeypatch.setattr(openai_client, "_tls_context", None)
    with caplog.at_level(logging.WARNING, logger="app.core.preload"):
        preload.preload(("coco_no_such_module", "json"))
    assert "coco_no_such_module" in caplog.text
    assert openai_client._tls_context is not None


def test_every_module_preloaded_exists() -> None:
    # The SDK's layout can change under a version bump: a preload that only logs a warning
    # would quietly stop helping.
    for name in preload.MODULES:
        assert importlib.util.find_spec(name) is not None, name
