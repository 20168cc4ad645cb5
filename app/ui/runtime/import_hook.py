"""A cheaper answer to the question PySide6 asks about every module imported after it.

PySide6 hooks ``import``: for each new module it asks whether the module's source mentions
"PySide6" (to know where its optional ``__feature__`` switches may apply), and it finds out
with ``inspect.getsource``, which reads and splits the whole file through ``linecache``. At
start-up some ninety of Coco's and the standard library's modules come after PySide6: about
25 ms before the window's first paint, for a question a byte search answers in microseconds.

:func:`install` puts that byte search in place of PySide6's own test, with the same answer for
every module with a source file, and leaves PySide6's test for anything else. Where PySide6
has no such hook (another version), nothing is changed.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any


def source_mentions_pyside(module: ModuleType, fallback: Callable[[ModuleType], Any]) -> Any:
    """True when the source file of ``module`` contains "PySide6" (what PySide6 checks);
    ``fallback`` answers for a module without a readable ``.py`` source."""
    spec = getattr(module, "__spec__", None)
    origin = getattr(spec, "origin", None)
    if not isinstance(origin, str) or not origin.endswith(".py"):
        return fallback(module)
    try:
        with open(origin, "rb") as source:
            return b"PySide6" in source.read()
    except OSError:
        return fallback(module)


def install() -> bool:
    """Replace PySide6's per-import source test by :func:`source_mentions_pyside`; True if
    done (PySide6 must be imported first)."""
    feature = sys.modules.get("shibokensupport.feature")
    original = getattr(feature, "_mod_uses_pyside", None)
    if feature is None or original is None or getattr(original, "_coco_fast", False):
        return False

    def fast(module: ModuleType) -> Any:
        return source_mentions_pyside(module, original)

    fast._coco_fast = True  # type: ignore[attr-defined]
    feature._mod_uses_pyside = fast  # type: ignore[attr-defined]
    return True
