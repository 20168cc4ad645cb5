"""The loopback model server: OpenAI wire protocol over the standard library's HTTP server.

Two modes. *scripted*: every request to ``/responses``, ``/chat/completions`` or
``/responses/compact`` consumes the next item queued for that endpoint (FIFO), so tests drive the
real ``openai`` client through exact scenarios, faults included. *demo*: the offline demo model
answers (queued items still go first), so a new user can chat without a key or a network.
Every request is recorded for assertions.
"""

from __future__ import annotations

import json
import logging
import socket
import threading
from collections import deque
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal, Self

from .channel import Channel, ClientGone
from .conversation import (
    COMPACTION_HEADER,
    encode_compaction,
    is_compaction_prompt,
    read_conversation,
    summary_body,
)
from .model.demo_model import DemoModel
from .render.chat import chat_fault, chat_reply
from .render.compact import compact_fault, compact_reply, user_texts_of
from .render.exchange import Exchange
from .render.responses import responses_fault, responses_reply
from .script import CompactReply, Fault, Reply, ScriptItem
from .wire import (
    Json,
    chat_messages_to_items,
    content_text,
    error_body,
    estimate_tokens,
    input_tokens_of,
    item_count_text,
    item_type,
    model_list,
    normalize_input,
    now,
    offered_tool_names,
    overflow_body,
)

_log = logging.getLogger(__name__)

Mode = Literal["scripted", "demo"]
QUEUE_ENDPOINTS = ("responses", "chat", "compact")
_ROUTES = {
    ("POST", "/v1/responses"): "responses",
    ("POST", "/v1/responses/compact"): "compact",
    ("POST", "/v1/chat/completions"): "chat",
    ("GET", "/v1/models"): "models",
}
_DEMO_WINDOW = 16000
_UNSET: Any = object()
# OpenAI caches prompt prefixes of at least 1024 tokens, in steps of 128.
_CACHE_MIN_TOKENS = 1024
_CACHE_STEP = 128
_CACHE_KEYS_KEPT = 64


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it (headers keep lower-case names)."""

    method: str
    path: str
    body: dict[str, Any] | None
    headers: dict[str, str] = field(repr=False)  # may hold an Authorization header
    endpoint: str | None = None  # "responses", "compact", "chat", "models" or None
    query: str = ""
    raw: bytes = field(default=b"", repr=False)
    connection: int = 0  # the connection it came on: 1 for the server's first, and so on


class ModelServer:
    """An OpenAI-compatible server on loopback; ``start()`` it, point ``base_url`` at ``url``.

    ``context_window``: requests whose estimated input exceeds it get the API's
    ``context_length_exceeded`` 400 (checked before any queued item is consumed). Defaults to
    16000 in demo mode and to no limit in scripted mode. ``tokens_per_second`` paces streamed
    deltas (None: as fast as possible). ``demo_model`` answers in demo mode (a
    :class:`DemoModel` by default; a subclass may summarise its own way).
    """

    def __init__(
        self,
        mode: Mode = "scripted",
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        context_window: int | None = _UNSET,
        tokens_per_second: float | None = None,
        model: str = "coco-demo",
        record_limit: int | None = _UNSET,
        demo_model: DemoModel | None = None,
    ) -> None:
        if mode not in ("scripted", "demo"):
            raise ValueError(f"mode must be 'scripted' or 'demo', not {mode!r}")
        self.mode: Mode = mode
        self.host = host
        self.context_window: int | None = (
            (_DEMO_WINDOW if mode == "demo" else None)
            if context_window is _UNSET
            else context_window
        )
        self.tokens_per_second = tokens_per_second
        self.model = model
        # A long-running demo server must not grow without bound; tests keep everything.
        limit = (1000 if mode == "demo" else None) if record_limit is _UNSET else record_limit
        self._port = port
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._queues: dict[str, deque[ScriptItem]] = {e: deque() for e in QUEUE_ENDPOINTS}
        self._requests: deque[RecordedRequest] = deque(maxlen=limit)
        self._prefixes: dict[str, list[tuple[str, int]]] = {}
        self._connections: set[socket.socket] = set()
        self._accepted = 0  # connections accepted since the server was made
        self._active = 0  # requests being answered right now
        self._stop = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        # What answers in demo mode: the demo model, or one that answers or summarises its own
        # way (a benchmark's blank or faithful summarizer).
        self._demo = demo_model or DemoModel()
        self._started_at = now()

    # ------------------------------------------------------------------------- lifecycle

    def start(self) -> Self:
        """Bind and serve in a daemon thread; returns ``self``. Idempotent."""
        if self._httpd is not None:
            return self
        self._stop = threading.Event()
        httpd = _HTTPServer((self.host, self._port), _Handler)
        httpd.owner = self
        self._httpd = httpd
        self._port = httpd.server_address[1]
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"coco-model-server:{self._port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving: running streams end, open connections close. Idempotent."""
        httpd = self._httpd
        if httpd is None:
            return
        self._stop.set()
        httpd.shutdown()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port (known once started)."""
        if self._httpd is None and self._port == 0:
            raise RuntimeError("the server is not started")
        return self._port

    @property
    def url(self) -> str:
        """The ``base_url`` for the openai client, e.g. ``http://127.0.0.1:8123/v1``."""
        return f"http://{self.host}:{self.port}/v1"

    # --------------------------------------------------------------------------- scripts

    def enqueue(self, item: ScriptItem, endpoint: str | None = None) -> None:
        """Queue the answer to one future request on ``endpoint`` (responses, chat, compact).

        Without an endpoint a ``CompactReply`` goes to "compact", anything else to "responses".
        """
        if endpoint is None:
            endpoint = "compact" if isinstance(item, CompactReply) else "responses"
        if endpoint not in QUEUE_ENDPOINTS:
            raise ValueError(f"endpoint must be one of {QUEUE_ENDPOINTS}, not {endpoint!r}")
        if not isinstance(item, (Reply, Fault, CompactReply)):
            raise TypeError(f"can only queue Reply, Fault or CompactReply, not {type(item)!r}")
        with self._lock:
            self._queues[endpoint].append(item)

    def queued(self, endpoint: str = "responses") -> int:
        """How many queued items ``endpoint`` has not consumed yet."""
        with self._lock:
            return len(self._queues[endpoint])

    def _take(self, endpoint: str) -> ScriptItem | None:
        with self._lock:
            queue = self._queues[endpoint]
            return queue.popleft() if queue else None

    # ------------------------------------------------------------------------- recording

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received so far, oldest first."""
        with self._lock:
            return list(self._requests)

    def requests_to(self, endpoint: str) -> list[RecordedRequest]:
        """Only the requests to ``endpoint`` ("responses" is ``/v1/responses`` exactly)."""
        with self._lock:
            return [r for r in self._requests if r.endpoint == endpoint]

    def wait_for_requests(
        self, n: int, endpoint: str | None = None, timeout: float = 5.0
    ) -> list[RecordedRequest]:
        """Block until ``n`` requests (to ``endpoint``, or any) arrived; TimeoutError if not."""

        def matching() -> list[RecordedRequest]:
            return [r for r in self._requests if endpoint is None or r.endpoint == endpoint]

        with self._changed:
            if not self._changed.wait_for(lambda: len(matching()) >= n, timeout=timeout):
                got = len(matching())
                raise TimeoutError(
                    f"expected {n} request(s) to {endpoint or 'the server'} "
                    f"within {timeout}s, got {got}"
                )
            return matching()

    @property
    def active_requests(self) -> int:
        """How many requests are being answered right now (open streams included)."""
        with self._lock:
            return self._active

    def wait_idle(self, timeout: float = 5.0) -> None:
        """Block until no request is being answered (e.g. a client closed its stream)."""
        with self._changed:
            if not self._changed.wait_for(lambda: self._active == 0, timeout=timeout):
                raise TimeoutError(
                    f"{self._active} request(s) still being answered after {timeout}s"
                )

    def _record(self, request: RecordedRequest) -> None:
        with self._changed:
            self._requests.append(request)
            self._active += 1
            self._changed.notify_all()

    def _finished(self) -> None:
        with self._changed:
            self._active -= 1
            self._changed.notify_all()

    def _track(self, conn: socket.socket, add: bool) -> int:
        """Adds or drops an open connection; the number of connections accepted so far."""
        with self._lock:
            if add:
                self._connections.add(conn)
                self._accepted += 1
            else:
                self._connections.discard(conn)
            return self._accepted

    # --------------------------------------------------------------------------- answers

    def _answer(
        self,
        ch: Channel,
        endpoint: str | None,
        method: str,
        path: str,
        body: Json | None,
        headers: dict[str, str],
    ) -> None:
        if endpoint is None:
            ch.send_json(
                404,
                error_body(404, f"Invalid URL ({method} {path})", type_="invalid_request_error"),
            )
            return
        if endpoint == "models":
            ch.send_json(200, model_list(self.model, self._started_at))
            return
        if body is None:
            ch.send_json(
                400,
                error_body(
                    400,
                    "We could not parse the JSON body of your request. (HINT: This likely means"
                    " you aren't using your HTTP library correctly.)",
                ),
            )
            return
        if endpoint == "chat":
            instructions, items = chat_messages_to_items(body.get("messages"))
        else:
            raw = body.get("instructions")
            instructions = raw if isinstance(raw, str) else ""
            items = normalize_input(body.get("input"))
        input_tokens = input_tokens_of(instructions, items)
        window = self.context_window
        if window is not None and input_tokens > window:
            ch.send_json(400, overflow_body("messages" if endpoint == "chat" else "input"))
            return
        item = self._take(endpoint)
        if item is None and self.mode == "scripted":
            ch.send_json(
                500,
                error_body(
                    500, f"scripted server: no reply queued for {endpoint}", type_="server_error"
                ),
            )
            return
        cached = 0 if endpoint == "compact" else self._cached_tokens(body, instructions, items)
        ex = Exchange(
            body=body,
            model=str(body.get("model") or self.model),
            stream=bool(body.get("stream")) and endpoint != "compact",
            input_tokens=input_tokens,
            cached_tokens=cached,
            items=tuple(items),
        )
        if item is None:
            self._answer_as_demo(ch, endpoint, ex, instructions, items, body, headers)
        else:
            _render(ch, endpoint, item, ex)

    def _answer_as_demo(
        self,
        ch: Channel,
        endpoint: str,
        ex: Exchange,
        instructions: str,
        items: list[Json],
        body: Json,
        headers: dict[str, str],
    ) -> None:
        tools = offered_tool_names(body.get("tools"))
        if endpoint == "compact":
            summary = self._demo.summarize(read_conversation(instructions, items, tools), "")
            kept = [t for t in user_texts_of(items) if summary_body(t) is None]
            compact_reply(
                ch,
                CompactReply(encrypted_content=encode_compaction(summary)),
                ex,
                user_texts=kept,
                output_tokens=estimate_tokens(summary),
            )
            return
        if items and item_type(items[-1]) == "compaction_trigger":
            # The trigger form: the history before the trigger, compacted into one item.
            conv = read_conversation(instructions, items[:-1], tools)
            summary = self._demo.summarize(conv, "", _output_limit(body))
            _render(ch, endpoint, Reply(compaction=encode_compaction(summary)), ex)
            return
        threshold = _compact_threshold(body)
        if threshold is not None and ex.input_tokens > threshold:
            # Server-side compaction inside this response: the compaction item first, then the
            # answer, as the API streams them.
            conv = read_conversation(instructions, items, tools)
            summary = self._demo.summarize(conv, "")
            reply = self._demo.respond(conv)
            _render(ch, endpoint, replace(reply, compaction=encode_compaction(summary)), ex)
            return
        last = items[-1] if items else None
        last_is_user = (
            last is not None and item_type(last) == "message" and last.get("role") == "user"
        )
        prompt = content_text(last.get("content")) if last is not None and last_is_user else ""
        compaction = headers.get(COMPACTION_HEADER, "").strip().lower() == "compaction" or (
            not tools and last_is_user and is_compaction_prompt(prompt)
        )
        limit = _output_limit(body)
        if compaction:
            history = items[:-1] if last_is_user else items
            conv = read_conversation(instructions, history, tools)
            reply = Reply(text=self._demo.summarize(conv, prompt, limit))
        else:
            reply = self._demo.respond(read_conversation(instructions, items, tools))
        _render(ch, endpoint, self._within_limits(reply, limit, ex.input_tokens), ex)

    def _within_limits(self, reply: Reply, limit: int | None, input_tokens: int) -> Reply:
        """As a real server does: the text stops at the output limit, or where the window is
        full (llama.cpp's behaviour), and the reply then ends as cut short."""
        room = None if self.context_window is None else max(0, self.context_window - input_tokens)
        caps = [cap for cap in (limit, room) if cap is not None]
        if reply.text is None or not caps or estimate_tokens(reply.text) <= min(caps):
            return reply
        cut = reply.text.encode("utf-8")[: min(caps) * 4].decode("utf-8", "ignore")
        return replace(reply, text=cut, status="incomplete")

    def _cached_tokens(self, body: Json, instructions: str, items: list[Json]) -> int:
        """Tokens of the prefix this request shares with the previous one on its cache key."""
        key = str(body.get("prompt_cache_key") or body.get("model") or "")
        pieces = [(instructions, estimate_tokens(instructions))] + [
            (json.dumps(item, sort_keys=True), estimate_tokens(item_count_text(item)))
            for item in items
        ]
        with self._lock:
            previous = self._prefixes.pop(key, [])
            self._prefixes[key] = pieces
            while len(self._prefixes) > _CACHE_KEYS_KEPT:
                self._prefixes.pop(next(iter(self._prefixes)))
        shared = 0
        for (old, _), (new, cost) in zip(previous, pieces, strict=False):
            if old != new:
                break
            shared += cost
        return 0 if shared < _CACHE_MIN_TOKENS else shared // _CACHE_STEP * _CACHE_STEP


def _compact_threshold(body: Json) -> int | None:
    """``compact_threshold`` of a ``context_management`` compaction entry, if the request has
    one (server-side compaction, Responses only)."""
    entries = body.get("context_management")
    if not isinstance(entries, list):
        return None
    for entry in entries:
        if isinstance(entry, dict) and entry.get("type") == "compaction":
            value = entry.get("compact_threshold")
            if isinstance(value, int) and not isinstance(value, bool):
                return value
    return None


def _output_limit(body: Json) -> int | None:
    """The most the reply may hold, as the request asks: ``max_output_tokens`` (Responses),
    ``max_completion_tokens`` or ``max_tokens`` (Chat Completions)."""
    for key in ("max_output_tokens", "max_completion_tokens", "max_tokens"):
        value = body.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def _render(ch: Channel, endpoint: str, item: ScriptItem, ex: Exchange) -> None:
    """Write a queued or generated item in ``endpoint``'s format."""
    if isinstance(item, Fault):
        {"responses": responses_fault, "chat": chat_fault, "compact": compact_fault}[endpoint](
            ch, item, ex
        )
    elif endpoint == "compact":
        if not isinstance(item, CompactReply):
            ch.send_json(
                500,
                error_body(
                    500,
                    "scripted server: a Reply was queued for compact; queue a CompactReply",
                    type_="server_error",
                ),
            )
            return
        compact_reply(ch, item, ex)
    elif isinstance(item, CompactReply):
        ch.send_json(
            500,
            error_body(
                500,
                f"scripted server: a CompactReply was queued for {endpoint}; queue a Reply",
                type_="server_error",
            ),
        )
    elif endpoint == "chat":
        chat_reply(ch, item, ex)
    else:
        responses_reply(ch, item, ex)


# ------------------------------------------------------------------------------- HTTP plumbing


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: ModelServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that vanished is normal here (interrupts, cut tests); anything else is a bug
        # worth a log line, not a traceback on stderr.
        _log.debug("model server: error while handling %s", client_address, exc_info=True)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # one small write per SSE event must leave at once
    server: _HTTPServer

    connection_number = 0

    def setup(self) -> None:
        super().setup()
        self.connection_number = self.server.owner._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass
        finally:
            self.server.owner._track(self.connection, add=False)

    def handle(self) -> None:
        try:
            super().handle()
        except (ClientGone, OSError):
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        _log.debug("model server: " + format, *args)

    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def do_PUT(self) -> None:
        self._dispatch()

    def do_DELETE(self) -> None:
        self._dispatch()

    def do_PATCH(self) -> None:
        self._dispatch()

    def _dispatch(self) -> None:
        owner = self.server.owner
        raw = self._read_body()
        path, _, query = self.path.partition("?")
        path = path.rstrip("/") or "/"
        endpoint = _ROUTES.get((self.command, path))
        body: Json | None = None
        if raw:
            try:
                parsed = json.loads(raw)
                body = parsed if isinstance(parsed, dict) else None
            except ValueError:
                body = None
        headers = {k.lower(): v for k, v in self.headers.items()}
        owner._record(
            RecordedRequest(
                method=self.command,
                path=path,
                body=body,
                headers=headers,
                endpoint=endpoint,
                query=query,
                raw=raw,
                connection=self.connection_number,
            )
        )
        ch = Channel(self.connection, self.wfile, owner._stop, owner.tokens_per_second)
        try:
            owner._answer(ch, endpoint, self.command, path, body, headers)
        except ClientGone:
            ch.keep_alive = False
        except Exception:  # noqa: BLE001 - a server bug must not look like a network failure
            _log.exception("model server: failed to answer %s %s", self.command, path)
            if ch.streaming:
                ch.abort()
            else:
                try:
                    ch.send_json(
                        500, error_body(500, "model server internal error", type_="server_error")
                    )
                except ClientGone:
                    ch.keep_alive = False
        finally:
            owner._finished()
        if not ch.keep_alive:
            self.close_connection = True

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            parts: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""
