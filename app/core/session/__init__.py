"""The live session: the coordinator (``Session``) and the parts it wires, the op handlers, the
meter, the notices, resume and replay, and the user turn (``turn/``).

``Session`` loads on first use: importing one part does not load the coordinator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .coordinator import Session

__all__ = ["Session"]


def __getattr__(name: str) -> Any:
    if name != "Session":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from .coordinator import Session

    return Session
