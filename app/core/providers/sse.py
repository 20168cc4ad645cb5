"""Server-sent events as both providers read them, and the JSON helpers they share.

The decoder works on whole chunks of the body's bytes (whatever the connection delivered)
rather than line by line through async iterators over decoded text: a stream brings tens of
thousands of events, and per-line iteration through two layers of async generators was a large
part of what reading it cost. Lines end in LF or CRLF (a CRLF split across two chunks included);
``data`` lines of one event are joined by newlines, comments and other fields are skipped, and
an event is dispatched at the blank line that ends it. Payloads stay UTF-8 bytes and are parsed
with :func:`app.core.system.fastjson.loads` (orjson) by :func:`json_events`.

The connection can hold hundreds of events at once (a fast server, or what queued up during a
pause), read without the event loop running in between, and handling each one down to the
window's event queue takes a few microseconds on the thread the window paints from. :func:`json_events` hands them over in slices
of :data:`EVENTS_PER_SLICE` and lets the event loop run between two slices, so one chunk never
holds the window for more than a slice's worth of work.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, AsyncIterator
from contextvars import ContextVar
from typing import Any

import httpx2

from ..system.fastjson import loads
from .base import Usage


class StreamActivity:
    """When the body of the stream being read last brought bytes (``time.monotonic()``).

    The retry loop sets one for each attempt (:data:`STREAM_ACTIVITY`); :func:`json_events`
    marks it on every chunk, so a stall is measured in bytes, not only in visible events
    (a model reasoning for minutes sends bytes that show as nothing). ``on_resume`` is called
    on the first chunk after :meth:`mark_stalled`."""

    __slots__ = ("last", "on_resume", "stalled")

    def __init__(self) -> None:
        self.last = time.monotonic()
        self.stalled = False
        self.on_resume: Any = None

    def touch(self) -> None:
        self.last = time.monotonic()
        if self.stalled:
            self.stalled = False
            if self.on_resume is not None:
                self.on_resume()

    def mark_stalled(self) -> None:
        self.stalled = True


# Events handed over between two turns of the event loop (see the module's docstring): 2-3 ms of
# the core's work per slice on the benchmark's machine. Smaller slices (64) gave no shorter
# stalls in bench_streaming and cost its ratio about 5 % in turns of the loop.
EVENTS_PER_SLICE = 256

# The activity of the stream the current task reads (None outside the retry loop).
STREAM_ACTIVITY: ContextVar[StreamActivity | None] = ContextVar("stream_activity", default=None)


class SSEDecoder:
    """Feed it chunks of the body; it returns the ``data`` payload of each event they complete."""

    def __init__(self) -> None:
        self._tail = b""  # the unfinished last line
        self._data: list[bytes] = []  # data lines of the event being read

    def feed(self, chunk: bytes) -> list[bytes]:
        """The payloads of the events that ``chunk`` completes, in order."""
        text = self._tail + chunk if self._tail else chunk
        lines = text.split(b"\n")
        self._tail = lines.pop()
        payloads: list[bytes] = []
        data = self._data
        for line in lines:
            line = line.removesuffix(b"\r")
            if not line:
                if data:
                    payloads.append(b"\n".join(data))
                    data.clear()
            elif line.startswith(b"data:"):
                data.append(line[5:].removeprefix(b" "))
            # Anything else is a comment (":") or a field Coco does not use (event, id, retry).
        return payloads

    def close(self) -> list[bytes]:
        """The payload of an event left unterminated when the body ended, if any."""
        payloads = self.feed(b"\n\n") if (self._tail or self._data) else []
        self._tail = b""
        return payloads


async def json_events(body: AsyncIterator[bytes]) -> AsyncGenerator[list[Any]]:
    """For each chunk of an SSE ``body``, the JSON values of the events it completes (often
    one, sometimes none or many), at most :data:`EVENTS_PER_SLICE` at a time with a turn of the
    event loop between two slices; a ``[DONE]`` event ends the stream. Raises
    ``json.JSONDecodeError`` for a payload that is not JSON."""
    decoder = SSEDecoder()
    activity = STREAM_ACTIVITY.get()
    handed = 0  # events handed over since the loop last ran
    while True:
        # Reading what the connection already buffered does not let the loop run: a fast
        # stream brings hundreds of small chunks (one event each) in one go.
        chunk = await anext(body, None)
        if activity is not None:
            activity.touch()
        payloads = decoder.feed(chunk) if chunk is not None else decoder.close()
        events: list[Any] = []
        for data in payloads:
            if data.startswith(b"[DONE]"):
                yield events
                return
            events.append(loads(data))
            if handed + len(events) >= EVENTS_PER_SLICE:
                yield events
                events, handed = [], 0
                await asyncio.sleep(0)  # the window's timers and paints run between slices
        handed += len(events)
        yield events
        if chunk is None:
            return


# What is left of a body after the event that ends the stream (its terminating chunk, a
# ``[DONE]``, rarely more) is read for at most this long and this many bytes, then the body is
# closed anyway: a body read to its end lets the connection go back to the pool for the next
# request (no new TCP and TLS handshake per turn); a server that keeps the body open after its
# last event costs the turn at most this wait.
END_OF_BODY_SECONDS = 0.25
END_OF_BODY_BYTES = 65_536


async def read_to_end(
    body: AsyncIterator[bytes],
    *,
    seconds: float = END_OF_BODY_SECONDS,
    max_bytes: int = END_OF_BODY_BYTES,
) -> bool:
    """Read and drop what is left of ``body``; ``True`` when it ended within ``seconds`` and
    ``max_bytes``. Transport errors count as not ended: the caller closes the body either way."""
    read = 0
    try:
        async with asyncio.timeout(seconds):
            async for chunk in body:
                read += len(chunk)
                if read > max_bytes:
                    return False
    except (TimeoutError, OSError, httpx2.HTTPError):
        # The time is up, or the connection failed: the body is closed, and not reused.
        return False
    return True


def json_int(value: object) -> int:
    """``value`` when it is a JSON integer, else 0 (``true``/``false`` are not integers)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def json_objects(value: object) -> list[dict[str, Any]]:
    """The objects in ``value`` when it is a JSON array (anything else in it is skipped)."""
    return [entry for entry in value if isinstance(entry, dict)] if isinstance(value, list) else []


def usage_from_json(raw: object, input_field: str, output_field: str) -> Usage | None:
    """A ``Usage`` from an API's usage object, ``None`` when it is absent or not an object.

    ``input_field`` and ``output_field`` name the two counts (Responses: ``input_tokens`` and
    ``output_tokens``; Chat Completions: ``prompt_tokens`` and ``completion_tokens``); each
    may come with a ``…_details`` object holding ``cached_tokens`` or ``reasoning_tokens``.
    """
    if not isinstance(raw, dict):
        return None
    input_tokens = json_int(raw.get(input_field))
    output_tokens = json_int(raw.get(output_field))
    input_details = raw.get(f"{input_field}_details")
    output_details = raw.get(f"{output_field}_details")
    return Usage(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        total_tokens=json_int(raw.get("total_tokens")) or input_tokens + output_tokens,
        cached_tokens=json_int(input_details.get("cached_tokens"))
        if isinstance(input_details, dict)
        else 0,
        reasoning_tokens=json_int(output_details.get("reasoning_tokens"))
        if isinstance(output_details, dict)
        else 0,
    )
