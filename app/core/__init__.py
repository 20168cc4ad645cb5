"""Coco's engine: sessions, turns, compaction, providers and persistence. No Qt here.

The public names load on first use, so importing one small module of the core (paths,
settings) does not pay for the protocol models and the session at start-up.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from . import events, ops
    from .config import CoreConfig
    from .connection import ConnectionReport, ServerInfo, check_connection, detect_server
    from .rollout.open_progress import OpenProgress
    from .session.coordinator import Session
    from .sessions.library import SessionActionError, SessionInfo, SessionLibrary

__all__ = [
    "ConnectionReport",
    "CoreConfig",
    "OpenProgress",
    "ServerInfo",
    "Session",
    "SessionActionError",
    "SessionInfo",
    "SessionLibrary",
    "check_connection",
    "detect_server",
    "events",
    "ops",
]

_LAZY = {
    "CoreConfig": ".config",
    "Session": ".session.coordinator",
    "OpenProgress": ".rollout.open_progress",  # how far opening a session has got (``Session.open``)
    "events": None,
    "ops": None,
    # The services a front end uses beside the open session.
    "ConnectionReport": ".connection",
    "ServerInfo": ".connection",
    "check_connection": ".connection",
    "detect_server": ".connection",
    "SessionActionError": ".sessions.library",
    "SessionInfo": ".sessions.library",
    "SessionLibrary": ".sessions.library",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module_name = _LAZY[name]
    if module_name is None:
        return importlib.import_module(f".{name}", __name__)
    return getattr(importlib.import_module(module_name, __name__), name)
