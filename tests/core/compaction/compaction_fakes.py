"""A scripted model provider and a path run over it, for testing the compaction steps
(choose, local_path, remote_path, path) without a server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from app.core import protocol as p
from app.core.compaction.counting import CountMemo
from app.core.compaction.notes.material import NotesMaterial, read_notes_material
from app.core.compaction.paths.local import ItemCounts
from app.core.compaction.paths.path import PathRun
from app.core.config import CoreConfig
from app.core.items import Item, message_text
from app.core.providers.base import (
    CompactResult,
    Completed,
    ModelRequest,
    OutputItemDone,
    ProviderError,
    StopReason,
    StreamEvent,
    TextDelta,
    Usage,
)
from app.core.providers.capabilities import RemoteCapabilities
from app.core.providers.sampling import RetryNotice
from app.core.tokens.counter import TokenCounter

USAGE = Usage(input_tokens=900, output_tokens=60, total_tokens=960)
COMPACTION_ITEM: Item = {"type": "compaction", "encrypted_content": "opaque" * 20}

# A streamed answer: the output items, or the error the request fails with.
Answer = list[Item] | ProviderError


class ScriptedProvider:
    """Answers each request with the next scripted answer, and keeps the requests.
    ``stops``: each streamed answer's stop reason, in order (None once they run out);
    ``deltas``: stream each message's text as one delta before the message."""

    supports_remote_compaction = True

    def __init__(
        self,
        streams: Sequence[Answer] = (),
        compacts: Sequence[CompactResult | ProviderError] = (),
        *,
        stops: Sequence[StopReason | None] = (),
        deltas: bool = False,
    ) -> None:
        self.streams = list(streams)
        self.compacts = list(compacts)
        self.stops = list(stops)
        self.deltas = deltas
        self.requests: list[ModelRequest] = []
        self.compact_requests: list[ModelRequest] = []
        self.headers: list[dict[str, str] | None] = []  # each request's extra headers

    def stream(
        self, request: ModelRequest, *, extra_headers: dict[str, str] | None = None
    ) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        self.headers.append(extra_headers)
        return self._events(self.streams.pop(0), self.stops.pop(0) if self.stops else None)

    async def _events(self, answer: Answer, stop: StopReason | None) -> AsyncIterator[StreamEvent]:
        if isinstance(answer, ProviderError):
            raise answer
        for item in answer:
            if self.deltas and item.get("type") == "message":
                yield TextDelta(item.get("id") or "msg", message_text(item))
            yield OutputItemDone(item)
        yield Completed("resp_1", USAGE, stop)

    async def compact(
        self, request: ModelRequest, *, extra_headers: dict[str, str] | None = None
    ) -> CompactResult:
        self.compact_requests.append(request)
        self.headers.append(extra_headers)
        answer = self.compacts.pop(0)
        if isinstance(answer, ProviderError):
            raise answer
        return answer

    async def list_models(self) -> list[str]:
        return []

    async def close(self) -> None:
        return None


class Recorder:
    """What a path run emitted and said."""

    def __init__(self) -> None:
        self.events: list[p.Event] = []
        self.said: list[str] = []
        self.said_in: list[str] = []  # the turn each notice was said in

    def emit(self, event: p.Event) -> None:
        self.events.append(event)

    def say(self, turn_id: str, message: str) -> None:
        self.said.append(message)
        self.said_in.append(turn_id)

    def stages(self) -> list[str]:
        return [e.stage for e in self.events if isinstance(e, p.CompactionProgress)]


def no_retry_notice(turn_id: str) -> RetryNotice:
    def notice(attempt: int, max_attempts: int, error: ProviderError) -> None:
        return None

    return notice


def make_config(tmp_path: Path, **changes: Any) -> CoreConfig:
    return CoreConfig(
        **{"data_dir": tmp_path, "max_retries": 0, "retry_base_delay": 0.0, **changes}
    )


def make_run(
    tmp_path: Path,
    provider: ScriptedProvider,
    recorder: Recorder,
    *,
    context: Sequence[Item] = (),
    **config: Any,
) -> PathRun:
    settings = make_config(tmp_path, **config)
    counter = TokenCounter("gpt-4o", allow_download=False)
    return PathRun(
        turn_id="turn_1",
        session_id="session_1",
        config=lambda: settings,
        provider=lambda: provider,
        counter=counter,
        counts=CountMemo(counter),
        emit=recorder.emit,
        say=recorder.say,
        retry_notice=no_retry_notice,
        initial_context=lambda: list(context),
        tool_specs=list,
        turn_request=lambda items: ModelRequest(
            model=settings.model, instructions=settings.instructions, input=list(items)
        ),
        capabilities=RemoteCapabilities(tmp_path),
    )


def item_counts(run: PathRun, history: list[Item]) -> ItemCounts:
    known = [run.counter.count_item(item) for item in history]
    return ItemCounts(total=sum(known), known=known, every=lambda: list(known))


def reading_notes(run: PathRun) -> tuple[PathRun, list[list[Item]]]:
    """``run`` whose notes reader keeps each history it is given (and reads it as usual)."""
    reads: list[list[Item]] = []

    def read_notes(items: list[Item]) -> NotesMaterial:
        reads.append(items)
        return read_notes_material(items)

    return replace(run, read_notes=read_notes), reads
