"""One model request, streamed, with Codex's retry policy (spec section 3 constants)."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..items import Item
from .base import (
    Completed,
    ModelProvider,
    ModelRequest,
    OutputItemDone,
    ProviderError,
    RetryWait,
    StopReason,
    TextDelta,
    Usage,
)
from .sse import STREAM_ACTIVITY, StreamActivity


@dataclass
class StreamAttempt:
    """What the current attempt has produced so far; read on cancel to keep partial text."""

    items: list[Item] = field(default_factory=list)
    # The text streamed so far per message still in progress, as its deltas: joining them
    # once (on cancel) instead of on every delta keeps a long reply linear, not quadratic.
    partial_parts: dict[str, list[str]] = field(default_factory=dict)
    usage: Usage | None = None
    response_id: str = ""
    completed: bool = False
    # "length" when the reply stopped at the output limit (cut short).
    stop_reason: StopReason | None = None

    @property
    def partial_text(self) -> dict[str, str]:
        """The text of each message still in progress, by item id."""
        return {item_id: "".join(parts) for item_id, parts in self.partial_parts.items()}


# The longest a server's Retry-After is obeyed: "come back in an hour" must not freeze a turn.
MAX_SERVER_WAIT = 60.0


def backoff_delay(
    attempt: int, base: float, retry_after: float | None, *, cap: float = MAX_SERVER_WAIT
) -> float:
    """base × 2^(attempt-1) × jitter in [0.9, 1.1); a server's Retry-After wins when given,
    up to ``cap`` seconds."""
    if retry_after is not None and retry_after >= 0:
        return min(float(retry_after), cap)
    return base * 2.0 ** (attempt - 1) * random.uniform(0.9, 1.1)


def is_stall(error: ProviderError) -> bool:
    """True when the request timed out: the server accepted it, then sent nothing for the
    whole request timeout (or could not be reached within it)."""
    return error.code == "timeout"


def retry_reason(error: ProviderError) -> str:
    """Why a request is retried, in words, for the retry notice."""
    if error.category == "rate_limit":
        return "the server is rate limiting requests"
    if is_stall(error):
        return "the server did not answer in time"
    if error.category == "server":
        status = f" (HTTP {error.status})" if error.status else ""
        return f"the server had an error{status}"
    if error.category == "connection":
        return "the server could not be reached"
    if error.category == "stream":
        return "the reply was cut off"
    if error.category == "malformed":
        return "the server sent a reply that could not be read"
    return "the request failed"


# After this many seconds without a byte from the server, the stall is announced.
STALL_NOTICE_SECONDS = 5.0

# Called as ``on_stall(seconds)`` when the server has sent nothing for ``seconds``, and as
# ``on_stall(None)`` when bytes flow again.
StallNotice = Callable[[float | None], None]


async def watch_for_stall(
    activity: StreamActivity, on_stall: StallNotice, notice_after: float
) -> None:
    """Until cancelled: call ``on_stall(idle seconds)`` once each time ``activity`` has been
    quiet for ``notice_after`` seconds (``activity`` calls ``on_stall(None)`` when it ends)."""
    activity.on_resume = lambda: on_stall(None)
    while True:
        idle = time.monotonic() - activity.last
        if not activity.stalled and idle >= notice_after:
            activity.mark_stalled()
            on_stall(idle)
        remaining = notice_after - idle if not activity.stalled else notice_after
        await asyncio.sleep(max(remaining, notice_after / 10))


# Called before each retry as ``on_retry(n, max, error)``; ``error.retry_wait`` (a
# :class:`RetryWait`) then holds the delay in seconds and the reason in words.
RetryNotice = Callable[[int, int, ProviderError], None]


async def wait_before_retry(
    error: ProviderError,
    failures: int,
    *,
    max_retries: int,
    base_delay: float,
    on_retry: RetryNotice,
    retry_stalls: bool = True,
) -> None:
    """After failure number ``failures``: re-raise ``error`` when it is not retryable, the
    retries are used up, or it is a stall and ``retry_stalls`` is off (a stalled remote
    compaction falls back at once instead of waiting out the timeout again); otherwise set
    ``error.retry_wait``, announce the retry and wait out the backoff."""
    if not error.retryable or failures > max_retries or (not retry_stalls and is_stall(error)):
        raise error
    delay = backoff_delay(failures, base_delay, error.retry_after)
    error.retry_wait = RetryWait(
        seconds=delay, reason=retry_reason(error), requested=error.retry_after
    )
    on_retry(failures, max_retries, error)
    await asyncio.sleep(delay)


async def sample(
    provider: ModelProvider,
    request: ModelRequest,
    *,
    max_retries: int,
    base_delay: float,
    on_retry: RetryNotice,
    on_stall: StallNotice | None = None,
    on_delta: Callable[[str, str], None] | None = None,
    attempt_sink: Callable[[StreamAttempt], None] | None = None,
    extra_headers: dict[str, str] | None = None,
    on_item: Callable[[Item], None] | None = None,
) -> StreamAttempt:
    """Stream ``request``; retryable failures are retried up to ``max_retries`` times, each
    announced through ``on_retry(n, max, error)`` before the backoff. ``on_stall`` hears of
    each stretch of :data:`STALL_NOTICE_SECONDS` without a byte from the server, and of its
    end. Raises the last ``ProviderError`` (non-retryable ones at once)."""
    failures = 0
    while True:
        attempt = StreamAttempt()
        if attempt_sink is not None:
            attempt_sink(attempt)
        watch: _StallWatch | None = None
        if on_stall is not None:
            watch = _StallWatch(on_stall)
        try:
            async for event in provider.stream(request, extra_headers=extra_headers):
                if isinstance(event, TextDelta):
                    parts = attempt.partial_parts.get(event.item_id)
                    if parts is None:
                        attempt.partial_parts[event.item_id] = [event.delta]
                    else:
                        parts.append(event.delta)
                    if on_delta is not None:
                        on_delta(event.item_id, event.delta)
                elif isinstance(event, OutputItemDone):
                    attempt.items.append(event.item)
                    if on_item is not None:
                        on_item(event.item)
                    item_id = event.item.get("id")
                    if isinstance(item_id, str):
                        attempt.partial_parts.pop(item_id, None)
                elif isinstance(event, Completed):
                    attempt.usage = event.usage
                    attempt.response_id = event.response_id
                    attempt.stop_reason = event.stop_reason
                    attempt.completed = True
            if not attempt.completed:
                raise ProviderError("stream", "stream closed before response.completed")
            return attempt
        except ProviderError as error:
            if watch is not None:
                watch.end()
            failures += 1
            await wait_before_retry(
                error, failures, max_retries=max_retries, base_delay=base_delay, on_retry=on_retry
            )
        finally:
            if watch is not None:
                watch.end()


class _StallWatch:
    """Watches one attempt for stalls: the stream's reads mark ``activity`` (through
    :data:`STREAM_ACTIVITY`, set for the current task), a task announces the silences."""

    def __init__(self, on_stall: StallNotice) -> None:
        self.on_stall = on_stall
        self.activity = StreamActivity()
        STREAM_ACTIVITY.set(self.activity)
        self.task: asyncio.Task[None] | None = asyncio.create_task(
            watch_for_stall(self.activity, on_stall, STALL_NOTICE_SECONDS)
        )

    def end(self) -> None:
        """The attempt is over: stop watching; a stall it announced is over too."""
        if self.task is None:
            return
        self.task.cancel()
        self.task = None
        if STREAM_ACTIVITY.get() is self.activity:
            STREAM_ACTIVITY.set(None)
        if self.activity.stalled:
            self.activity.stalled = False
            self.on_stall(None)
