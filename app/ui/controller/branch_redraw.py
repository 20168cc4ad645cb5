"""Another branch made active, drawn again: the window's conversation follows the core's
``branch_switched`` the way it follows a session being opened.

On ``branch_switched`` the conversation of the branch now active is taken from the core
(``Session.replay_events()``) at once, its long messages prepared off the window's thread
(``replay_prep``), then handed to the window as a ``BranchDrawing``: the window draws it in
slices (``TranscriptView.replay_in_slices``) and says when it is done. The events
that arrive meanwhile (an edit's or a regeneration's answer streaming already) are held, the
``branch_switched`` itself first, and passed on once the branch is drawn, in their order: the
stream continues into the new drawing. No widget code (contract ``controller-no-widgets``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.core import Session
    from app.core import protocol as p

    from .replay_prep import RenderAhead

log = logging.getLogger(__name__)

# The branch's events freed per pass of the event loop once it is drawn: the 11 000 events of a
# 5 000-turn branch, freed at once when the redraw ended, held the window 10 ms.
FREED_PER_STEP = 1_000


def free_in_steps(items: list[Any]) -> None:
    """Empty ``items`` (whose objects nothing else holds) :data:`FREED_PER_STEP` at a time,
    one step per pass of the running event loop, so the window paints and takes input
    between the steps."""
    loop = asyncio.get_running_loop()

    def step() -> None:
        del items[-FREED_PER_STEP:]
        if items:
            loop.call_soon(step)

    step()


class BranchDrawing:
    """A branch's events to draw. Whoever draws them ``take``s them and calls ``done`` once
    they are on screen; events are held until then (not taken: until the signal returns)."""

    def __init__(self, events: list[p.Event], finished: asyncio.Future[None]) -> None:
        self.events = events
        self.taken = False
        self._finished = finished

    def take(self) -> list[p.Event]:
        self.taken = True
        return self.events

    def done(self) -> None:
        if not self._finished.done():
            self._finished.set_result(None)


class BranchRedraw:
    """Draws the active branch again after ``branch_switched``, holding the events that
    come meanwhile (one per session)."""

    def __init__(
        self,
        session: Session,
        *,
        draw: Callable[[BranchDrawing], None],
        pass_on: Callable[[p.Event], None],
        deliver: Callable[[p.Event], None],
        render_ahead: Callable[[], RenderAhead] | None = None,
    ) -> None:
        self._session = session
        self._draw = draw
        self._pass_on = pass_on  # the branch_switched drawn: to the window
        self._deliver = deliver  # the events after it: as any event (another switch draws)
        self._render_ahead = render_ahead
        self._held: list[p.Event] | None = None
        self._task: asyncio.Task[None] | None = None
        self.drawn = 0  # branches drawn so far (tests and benchmarks wait on it)

    @property
    def holding(self) -> bool:
        """A branch is being drawn: events wait for it (``hold``)."""
        return self._held is not None

    def hold(self, event: p.Event) -> None:
        assert self._held is not None
        self._held.append(event)

    def start(self, switched: p.Event) -> None:
        """``switched`` (a ``branch_switched``) arrived: draw the branch now active, then
        pass ``switched`` and whatever came after it on."""
        # What the branch holds is taken now, told off the window's thread (a long branch
        # takes tens of milliseconds): what streams meanwhile is held, not drawn twice.
        build = self._session.replay_builder()
        self._held = [switched]
        self._task = asyncio.ensure_future(self._redraw(build))

    async def _redraw(self, build: Callable[[], list[p.Event]]) -> None:
        from ..runtime import memory
        from .replay_prep import prepare_replay

        try:
            with memory.drawing_branch():
                events = await asyncio.to_thread(build)
                ahead = self._render_ahead() if self._render_ahead is not None else None
                await prepare_replay(events, None, ahead)  # long messages, off-thread
                drawing = BranchDrawing(events, asyncio.get_running_loop().create_future())
                self._draw(drawing)
                if drawing.taken:
                    await drawing._finished
                else:  # no window: nothing to wait for
                    await asyncio.sleep(0)
                free_in_steps(events)  # drawn: the window's rows hold what they show
        except asyncio.CancelledError:
            raise
        except Exception:  # the events held must go on whatever happened
            log.exception("Drawing the branch again failed")
        finally:
            self._release()

    def _release(self) -> None:
        """Pass the held events on in order (the ``branch_switched`` first); a later
        ``branch_switched`` among them starts another redraw, which holds the rest."""
        held, self._held = self._held or [], None
        self._task = None
        self.drawn += 1
        if held:
            self._pass_on(held[0])
        for event in held[1:]:
            self._deliver(event)

    def cancel(self) -> None:
        """The session is closing: nothing more is drawn or passed on."""
        self._held = None
        if self._task is not None:
            self._task.cancel()
            self._task = None

