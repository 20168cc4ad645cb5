"""The one object between the core and the widgets.

It runs ``async for event in session.events()`` on the qasync loop and re-emits every event as
the Qt signal ``event_received``; widgets connect to that. Ops go the other way through
``submit``. Nothing else in the UI talks to the session's event stream.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from PySide6.QtCore import QObject, Signal

from app.core import Session
from app.core import protocol as p

log = logging.getLogger(__name__)


class SessionBridge(QObject):
    """Pumps one session's events into Qt signals and submits ops to it."""

    event_received = Signal(object)
    failed = Signal(str)  # the session could not take an op, or its event stream broke
    finished = Signal()  # the event stream ended (shutdown)

    def __init__(self, session: Session, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self._pump: asyncio.Task[None] | None = None
        self._closing = False
        self.events_seen = 0

    def start(self) -> None:
        """Begin pumping events (call once, with the qasync loop running)."""
        if self._pump is None:
            self._pump = asyncio.ensure_future(self._run())

    @property
    def running(self) -> bool:
        return self._pump is not None and not self._pump.done()

    async def _run(self) -> None:
        try:
            async for event in self.session.events():
                self.events_seen += 1
                try:
                    self.event_received.emit(event)
                except Exception:
                    log.exception("A widget failed to render %s", getattr(event, "type", event))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("The session's event stream broke")
            self.failed.emit(f"The session stopped unexpectedly: {exc}")
        finally:
            self.finished.emit()

    def submit(self, op: p.Op) -> asyncio.Future[Any]:
        """Hand ``op`` to the session; a refusal comes back as ``failed``."""
        future = asyncio.ensure_future(self.session.submit(op))
        future.add_done_callback(self._check_submitted)
        return future

    def _check_submitted(self, future: asyncio.Future[Any]) -> None:
        if future.cancelled():
            return
        exc = future.exception()
        if exc is not None and not self._closing:
            self.failed.emit(f"Could not send that to the session: {exc}")

    async def close(self, timeout: float = 5.0) -> None:
        """Shut the session down and wait for the event stream to end."""
        if self._closing:
            return
        self._closing = True
        try:
            await asyncio.wait_for(self.session.close(), timeout)
        except TimeoutError:
            log.warning("The session did not shut down within %.0f s", timeout)
        except Exception:
            log.exception("Closing the session failed")
        if self._pump is not None and not self._pump.done():
            try:
                await asyncio.wait_for(asyncio.shield(self._pump), 1.0)
            except TimeoutError:
                self._pump.cancel()
            except Exception:  # the pump already reported its own failure
                log.debug("The event pump ended with an error", exc_info=True)
