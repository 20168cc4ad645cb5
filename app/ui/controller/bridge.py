"""The one object between the core and the widgets.

It runs ``async for event in session.events()`` on the qasync loop and re-emits the events as
the Qt signal ``event_received``; widgets connect to that. Ops go the other way through
``submit``. Nothing else in the UI talks to the session's event stream.

A fast stream brings one ``agent_message_delta`` per token, tens of thousands per reply. The
pump collects the deltas already queued and hands them over once the loop is free, consecutive
deltas of one message joined into one, so the window handles one event per batch rather than
one per token. Every other event is delivered as soon as it is read, after the deltas before
it: the order never changes.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

if TYPE_CHECKING:
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
        self._batch: list[p.Event] = []
        self._delivery: asyncio.Handle | None = None
        self.events_seen = 0  # events read from the session
        self.events_emitted = 0  # signals emitted (consecutive deltas merged)

    def start(self) -> None:
        """Begin pumping events (call once, with the qasync loop running)."""
        if self._pump is None:
            self._pump = asyncio.ensure_future(self._run())

    @property
    def running(self) -> bool:
        return self._pump is not None and not self._pump.done()

    async def _run(self) -> None:
        try:
            # Reading a queued event does not yield to the loop, so every delta already queued
            # is collected before the delivery scheduled by the first of them runs. Any other
            # event is delivered at once (after the deltas before it), as soon as it is read.
            async for event in self.session.events():
                self.events_seen += 1
                self._batch.append(event)
                if event.type != "agent_message_delta":
                    self._deliver()
                elif self._delivery is None:
                    self._delivery = asyncio.get_running_loop().call_soon(self._deliver)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self._deliver()
            log.exception("The session's event stream broke")
            self.failed.emit(f"The session stopped unexpectedly: {exc}")
        finally:
            self._deliver()
            self.finished.emit()

    def _deliver(self) -> None:
        """Emit the collected events in order, consecutive deltas of one message merged."""
        if self._delivery is not None:
            self._delivery.cancel()
            self._delivery = None
        batch, self._batch = self._batch, []
        for event in merge_deltas(batch):
            self.events_emitted += 1
            try:
                self.event_received.emit(event)
            except Exception:
                log.exception("A widget failed to render %s", event.type)

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


def merge_deltas(events: list[p.Event]) -> list[p.Event]:
    """``events`` with each run of ``agent_message_delta`` for the same item (and turn) joined
    into one delta carrying the concatenated text; the order of everything else is kept."""
    merged: list[p.Event] = []
    run: list[str] = []

    def close_run() -> None:
        if len(run) > 1:
            merged[-1] = merged[-1].model_copy(update={"delta": "".join(run)})
        run.clear()

    for event in events:
        if event.type == "agent_message_delta":
            previous = merged[-1] if run else None
            if (
                previous is not None
                and previous.type == "agent_message_delta"
                and previous.item_id == event.item_id
                and previous.turn_id == event.turn_id
            ):
                run.append(event.delta)
                continue
            close_run()
            merged.append(event)
            run.append(event.delta)
        else:
            close_run()
            merged.append(event)
    close_run()
    return merged
