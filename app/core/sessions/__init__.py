"""The saved sessions: listed, summarised, titled, recorded and opened once per process.

The library's names (``app.core.sessions.SessionLibrary`` and its kin) load on first use, so
reading one part does not load the library.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .library import SessionActionError, SessionInfo, SessionLibrary

__all__ = ["SessionActionError", "SessionInfo", "SessionLibrary"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(".library", __name__), name)
