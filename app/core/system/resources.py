"""Locating files under ``resources/`` in a source checkout, an installed tree or a bundle."""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path


@cache
def resources_dir() -> Path:
    """The ``resources`` folder: beside ``app/`` in a checkout, or in a PyInstaller bundle."""
    candidates = []
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        candidates.append(Path(bundle) / "resources")
    candidates.append(Path(__file__).resolve().parents[3] / "resources")
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("Coco's resources folder is missing; reinstall the application")


def resource_path(*parts: str) -> Path:
    return resources_dir().joinpath(*parts)


@cache
def read_text(*parts: str) -> str:
    return resource_path(*parts).read_text(encoding="utf-8")
