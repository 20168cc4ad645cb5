"""Getting a reopened session's very long messages ready for display off the window's thread.

A message of tens of megabytes is shown in parts (``long_text.display_cuts``); finding the
parts scans every line of it, seconds of work for 50 MB. ``prepare_replay`` finds them in a
worker thread while the session opens (reporting to its progress); the transcript's replay,
on the window's thread, then takes them ready (``prepared_cuts``). No widget code here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .long_text import SEGMENT_CHARS, Cut, display_cuts

if TYPE_CHECKING:
    from app.core import OpenProgress
    from app.core import protocol as p

# A reopened message this long has its display parts found beforehand.
PREPARED_CHARS = 10 * SEGMENT_CHARS
# Parts found by ``prepare_replay``, by the text's id (the text is kept, so the id stays its).
_PREPARED: dict[int, tuple[str, list[Cut]]] = {}


def data_text(data: Mapping[str, Any]) -> str:
    """The text a TurnItem's data carries, whichever key the core used."""
    for key in ("text", "message", "content"):
        value = data.get(key)
        if isinstance(value, str):
            return value
    return ""


async def prepare_replay(
    events: Iterable[p.Event], progress: OpenProgress | None = None
) -> None:
    """Find the display parts of the very long messages among a reopened session's events in
    a worker thread, reporting to ``progress`` as stage ``"preparing"``."""
    texts = [
        text
        for event in events
        if event.type == "item_completed"
        and event.item.kind in ("user_message", "agent_message")
        and len(text := data_text(event.item.data)) >= PREPARED_CHARS
    ]
    forget_prepared()  # what an open that was given up prepared is not kept
    whole = sum(len(text) for text in texts)
    done = 0
    for text in texts:
        if progress is not None:
            progress.report("preparing", done, whole)
        import asyncio  # not at import: the window paints before asyncio loads

        cuts = await asyncio.to_thread(display_cuts, text)
        _PREPARED[id(text)] = (text, cuts)
        done += len(text)
    if progress is not None and texts:
        progress.report("preparing", done, whole)


def prepared_cuts(text: str) -> list[Cut]:
    """The display parts of ``text``: found beforehand by ``prepare_replay``, else now."""
    prepared = _PREPARED.pop(id(text), None)
    if prepared is not None and prepared[0] is text:
        return prepared[1]
    return display_cuts(text)


def forget_prepared() -> None:
    """Drop what was prepared and not used (the replay is over)."""
    _PREPARED.clear()
